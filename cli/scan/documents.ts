/**
 * Input files -> the resources the rules judge, each with a type token, plain props and a way to turn a finding's
 * resource path into a file and line. This is the entry: it reads the text as JSON (one value, or values written
 * back to back) or as YAML (a stream of documents, decoded as Kubernetes decodes it), loads a Compose file as one
 * project, and hands every other document to the formats' readers (cli/scan/reader.ts, cli/scan/formats/). Anything
 * no format takes is skipped with a reason; a file that does not parse is an error with its line.
 */
import { LineCounter, parseAllDocuments } from "yaml";
import { isComposeDocument, isComposeValue, readCompose } from "./formats/compose";
import { isEngineBody } from "./formats/engine-body";
import { FileOutput, isObj } from "./formats/output";
import { type InputHost, NO_HOST, type Parsed } from "./items";
import { splitJsonStream } from "./json-stream";
import { Lines } from "./lines";
import { readDocument } from "./reader";
import { kubeYamlToJson } from "./yaml-kube";

export type { InputHost, ScanItem } from "./items";

/** Reads one input. `file` is the name to report; `source` its text; `host` what a Compose file may read. */
export function parseInput(
  file: string,
  source: string,
  host: InputHost = NO_HOST,
  ordinals?: Map<string, number>,
): Parsed {
  const out: Parsed = { items: [], skipped: [], errors: [] };
  const output = new FileOutput(file, out, ordinals);
  const trimmed = source.trimStart();
  const json = file.endsWith(".json") || trimmed.startsWith("{") || trimmed.startsWith("[");
  if (!(json && readJson(output, source, host))) readYaml(output, source, host);
  return out;
}

/** The 1-based line of a character offset. */
function lineAt(src: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < src.length; i++) if (src.charCodeAt(i) === 10) line++;
  return line;
}

/**
 * Reads `source` as JSON; false when YAML is to read it instead: invalid JSON in a file not named `.json` (YAML flow
 * syntax), and a manifest or launch spec, which YAML reads again for its lines.
 */
function readJson(output: FileOutput, source: string, host: InputHost): boolean {
  let value: unknown;
  try {
    value = JSON.parse(source);
  } catch (e) {
    // Values written back to back: kubectl reads them one by one, so each is judged (at its own lines).
    const stream = splitJsonStream(source);
    if (stream !== undefined) {
      for (const seg of stream)
        output.addAll(
          parseInput(output.file, `${"\n".repeat(seg.line - 1)}${seg.text}`, host, output.ordinals),
        );
      return true;
    }
    // kubectl goes by the content, never the name (apimachinery GuessJSONStream: JSON only when it opens with `{`):
    // a `.json` file or `--stdin-name x.json` holding YAML is read as YAML; one opening with `{` is JSON's error.
    if (!output.file.endsWith(".json") || !source.trimStart().startsWith("{")) return false;
    const message = e instanceof Error ? e.message : String(e);
    const pos = /position (\d+)/.exec(message);
    const lm = /line (\d+)/.exec(message);
    output.error(
      lm !== null ? Number(lm[1]) : pos !== null ? lineAt(source, Number(pos[1])) : undefined,
      `not valid JSON: ${message}`,
    );
    return true;
  }
  // A Pulumi document points at URNs, not lines, and a very large value is not parsed twice.
  const pulumiDoc = isObj(value) && (Array.isArray(value.steps) || isObj(value.deployment));
  if (!pulumiDoc && source.length <= 5_000_000) return false;
  readDocument(output, value, new Lines(undefined, undefined), [], 0);
  return true;
}

/** The text with a byte-order mark removed where it opens a document after a `---` line. */
function withoutDocumentBoms(source: string): string {
  return source.includes("\ufeff") ? source.replace(/(^|\n)(---[^\n]*\n)\ufeff/g, "$1$2") : source;
}

/** Reads `source` as a stream of YAML documents. */
function readYaml(output: FileOutput, source: string, host: InputHost): void {
  const counter = new LineCounter();
  // Duplicate keys and merge keys are kept in the tree: each format's decoder applies its engine's rule for them.
  // A byte-order mark may open any document of a stream (YAML 1.1 and go-yaml skip it there, kubectl splits the
  // stream first): it is dropped at each document start, where it would otherwise become part of the first key.
  const docs = parseAllDocuments(withoutDocumentBoms(source), {
    lineCounter: counter,
    uniqueKeys: false,
    merge: false,
    prettyErrors: true,
  });
  const list = Array.isArray(docs) ? docs : [];
  list.forEach((doc, i) => {
    if (doc.errors.length > 0) {
      for (const err of doc.errors)
        output.error(
          err.linePos?.[0]?.line,
          `not valid YAML: ${(err.message.split("\n")[0] ?? "").replace(/:$/, "")}`,
        );
      return;
    }
    const lines = new Lines(doc, counter);
    let value: unknown;
    let decodeError: unknown;
    try {
      value = kubeYamlToJson(doc, source);
    } catch (e) {
      decodeError = e;
    }
    // Compose by what the document says once aliases and merge keys are applied (`services: *s`, `<<: *top`), or,
    // where the Kubernetes decoder refuses the YAML, by its literal keys; Compose then reads it its own way. A
    // Compose file that is also an Engine API body is judged as both.
    if (decodeError === undefined ? isComposeValue(value) : isComposeDocument(doc)) {
      readCompose(output, lines, source, host);
      if (!(isObj(value) && isEngineBody(value))) return;
    }
    if (decodeError !== undefined) {
      const start = doc.contents?.range?.[0];
      output.error(
        start === undefined ? undefined : counter.linePos(start).line,
        `not valid YAML: ${decodeError instanceof Error ? decodeError.message : String(decodeError)}`,
      );
      return;
    }
    readDocument(output, value, lines, [], i);
  });
}
