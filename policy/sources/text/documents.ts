/**
 * Input files -> the resources the rules judge, each with a type token, plain props and a way to turn a finding's
 * resource path into a file and line. This is the entry: it reads the text as JSON (one value, or values written
 * back to back) or as YAML (a stream cut into documents as kubectl cuts it, each decoded as Kubernetes decodes
 * it), loads a Compose file as one project, and hands every other document to the formats' readers
 * (policy/sources/text/reader.ts, each source's file.ts). Anything no format takes is skipped with a reason; a file
 * that does not parse is an error with its line.
 */
import { parseAllDocuments } from "yaml";
import { composeProjectOf, isComposeDocument, isComposeValue, readCompose } from "../compose/file";
import { isEngineBody } from "../docker/file";
import { kubeYamlToJson } from "../kubernetes/yaml";
import { readBlockYaml } from "../kubernetes/yaml-block";
import { type StreamPiece, splitKubeStream } from "../kubernetes/yaml-stream";
import { type InputHost, NO_HOST, type Parsed } from "./items";
import { splitJsonStream } from "./json-stream";
import { Lines } from "./lines";
import { FileOutput, isObj } from "./output";
import { readDocument } from "./reader";
import { parseYamlDocuments } from "./yaml-docs";

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
  // A byte-order mark that opens the file: every format's reader skips it, but kubectl's stream splitter reads it as
  // part of the first line (see yaml-kube-stream.ts).
  const leadingBom = source.startsWith("\ufeff");
  const text = leadingBom ? source.slice(1) : source;
  const trimmed = text.trimStart();
  const json = file.endsWith(".json") || trimmed.startsWith("{") || trimmed.startsWith("[");
  if (!(json && readJson(output, text, host))) readYaml(output, text, host, leadingBom);
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

/** Reads `source` as a YAML stream: the pieces kubectl decodes, each as the one document go-yaml reads in it. */
/**
 * Whether the text is a Compose file when a lone CR, NEL, LS or PS is a line break, as compose's YAML reader takes
 * them (`name: x # c<CR>services: ...` hides the services from this reader).
 */
function hidesCompose(source: string): boolean {
  const breaks = /\r(?!\n)|[\u0085\u2028\u2029]/g;
  if (!breaks.test(source)) return false;
  const docs = parseAllDocuments(source.replace(breaks, "\n"), { uniqueKeys: false, merge: false });
  return (Array.isArray(docs) ? docs : [docs]).some((d) => d.errors.length === 0 && isComposeDocument(d));
}

function readYaml(output: FileOutput, source: string, host: InputHost, leadingBom: boolean): void {
  const split = splitKubeStream(source, leadingBom);
  // A file `docker compose` loads from its folder is a Compose file whatever it holds (an override with only
  // networks, a file COMPOSE_FILE names), and so is one whose Compose keys only compose's YAML reader sees (after a
  // line break only it takes as one).
  const member = composeProjectOf(host) !== undefined || hidesCompose(source);
  split.pieces.forEach((piece, i) => {
    readPiece(output, piece, source, host, i, member);
  });
  if (split.error !== undefined) output.error(split.error.line, split.error.message);
}

/** Reads the first YAML document of one piece of the stream (sigs.k8s.io/yaml reads no other). */
function readPiece(
  output: FileOutput,
  piece: StreamPiece,
  source: string,
  host: InputHost,
  index: number,
  composeMember: boolean,
): void {
  // go-yaml's reader skips a byte-order mark that opens its input, here the piece (kubectl splits the stream first).
  const text = piece.text.startsWith("\ufeff") ? piece.text.slice(1) : piece.text;
  const block = readBlockYaml(text);
  if (block !== undefined) {
    // The plain block subset, read without a syntax tree to the value the full reading below gives.
    const lines = Lines.ofBlock(block.lines, piece.line, () => parseYamlDocuments(text));
    if (composeMember || isComposeValue(block.value)) {
      readCompose(output, lines, source, host);
      if (!(isObj(block.value) && isEngineBody(block.value))) return;
    }
    readDocument(output, block.value, lines, [], index);
    return;
  }
  const { docs, counter } = parseYamlDocuments(text);
  const doc = docs[0];
  if (doc === undefined) return;
  const shift = piece.line - 1;
  if (doc.errors.length > 0) {
    for (const err of doc.errors) {
      const line = err.linePos?.[0]?.line;
      output.error(
        line === undefined ? undefined : line + shift,
        `not valid YAML: ${(err.message.split("\n")[0] ?? "").replace(/:$/, "")}`,
      );
    }
    return;
  }
  const lines = new Lines(doc, counter, piece.line);
  let value: unknown;
  let decodeError: unknown;
  try {
    value = kubeYamlToJson(doc, text, piece.line);
  } catch (e) {
    decodeError = e;
  }
  // Compose by what the document says once aliases and merge keys are applied (`services: *s`, `<<: *top`), or,
  // where the Kubernetes decoder refuses the YAML, by its literal keys; Compose then reads the file its own way. A
  // Compose file that is also an Engine API body is judged as both.
  if (composeMember || (decodeError === undefined ? isComposeValue(value) : isComposeDocument(doc))) {
    readCompose(output, lines, source, host);
    if (!(isObj(value) && isEngineBody(value))) return;
  }
  if (decodeError !== undefined) {
    const start = doc.contents?.range?.[0];
    output.error(
      start === undefined ? undefined : counter.linePos(start).line + shift,
      `not valid YAML: ${decodeError instanceof Error ? decodeError.message : String(decodeError)}`,
    );
    return;
  }
  readDocument(output, value, lines, [], index);
}
