/**
 * Input files -> the resources the rules judge, each with a type token, plain props and a way to turn a finding's
 * resource path into a file and line. Reads Kubernetes YAML (multi-document, `List` kinds), Compose files, the JSON
 * of `pulumi preview --json` and `pulumi stack export`, the runtime's launch spec (`sandbox.launch/v1`) and a Docker
 * Engine API create body. Anything else is skipped with a reason; a file that does not parse is an error with its
 * line.
 */
import { type Document, isMap, isScalar, LineCounter, parseAllDocuments } from "yaml";
import { type InputHost, NO_HOST, type Parsed } from "./items";
import { splitJsonStream } from "./json-stream";
import { Lines } from "./lines";
import { DocumentReader, isEngineBody, isObj } from "./reader";
import { kubeYamlToJson } from "./yaml-kube";

export type { InputHost, Parsed, ScanItem, StackInfo } from "./items";
export { NO_HOST } from "./items";
export { PULUMI_UNKNOWN } from "./pulumi-json";

/** The 1-based line of a character offset. */
function lineAt(src: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < src.length; i++) if (src.charCodeAt(i) === 10) line++;
  return line;
}

/** A Compose file: a top-level `services` map and no Kubernetes `apiVersion`/`kind`. */
function isComposeDocument(doc: Document): boolean {
  const c = doc.contents;
  if (!isMap(c)) return false;
  const keys = new Set(c.items.map((p) => (isScalar(p.key) ? String(p.key.value) : "")));
  return (
    keys.has("services") && !(keys.has("apiVersion") && keys.has("kind")) && isMap(c.get("services", true))
  );
}

/** A decoded document that Compose would load: a `services` map, and not a Kubernetes object. */
function isComposeValue(v: unknown): boolean {
  return isObj(v) && isObj(v.services) && !(typeof v.kind === "string" && v.apiVersion !== undefined);
}

/** The text with a byte-order mark removed where it opens a document after a `---` line. */
function withoutDocumentBoms(source: string): string {
  return source.includes("\ufeff") ? source.replace(/(^|\n)(---[^\n]*\n)\ufeff/g, "$1$2") : source;
}

/** Reads one input. `file` is the name to report; `source` its text. */
export function parseInput(file: string, source: string, host: InputHost = NO_HOST): Parsed {
  const out: Parsed = { items: [], skipped: [], errors: [] };
  const reader = new DocumentReader(file, out);
  const trimmed = source.trimStart();
  if (file.endsWith(".json") || trimmed.startsWith("{") || trimmed.startsWith("[")) {
    let value: unknown;
    try {
      value = JSON.parse(source);
    } catch (e) {
      // Values written back to back: kubectl reads them one by one, so each is judged (at its own lines).
      const stream = splitJsonStream(source);
      if (stream !== undefined) {
        for (const seg of stream) {
          const part = parseInput(file, `${"\n".repeat(seg.line - 1)}${seg.text}`, host);
          out.items.push(...part.items);
          out.skipped.push(...part.skipped);
          out.errors.push(...part.errors);
        }
        return out;
      }
      if (file.endsWith(".json")) {
        const message = e instanceof Error ? e.message : String(e);
        const pos = /position (\d+)/.exec(message);
        const lm = /line (\d+)/.exec(message);
        const line = lm !== null ? Number(lm[1]) : pos !== null ? lineAt(source, Number(pos[1])) : undefined;
        out.errors.push({
          location: line === undefined ? { file } : { file, line },
          message: `not valid JSON: ${message}`,
        });
        return out;
      }
      value = undefined; // YAML flow syntax: read below
    }
    if (value !== undefined) {
      const pulumiDoc = isObj(value) && (Array.isArray(value.steps) || isObj(value.deployment));
      if (pulumiDoc || source.length > 5_000_000) {
        reader.read(value, new Lines(undefined, undefined), [], 0);
        return out;
      }
      // JSON is YAML: read it again for lines (manifests, launch specs).
    }
  }
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
      for (const err of doc.errors) {
        const line = err.linePos?.[0]?.line;
        out.errors.push({
          location: line === undefined ? { file } : { file, line },
          message: `not valid YAML: ${(err.message.split("\n")[0] ?? "").replace(/:$/, "")}`,
        });
      }
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
    // where the Kubernetes decoder refuses the YAML, by its literal keys; Compose then reads it its own way.
    if (decodeError === undefined ? isComposeValue(value) : isComposeDocument(doc)) {
      reader.compose(doc, lines, [], host, source);
      if (!(isObj(value) && isEngineBody(value))) return;
    }
    try {
      if (decodeError !== undefined) throw decodeError;
    } catch (e) {
      const line =
        doc.contents?.range?.[0] === undefined ? undefined : counter.linePos(doc.contents.range[0]).line;
      out.errors.push({
        location: line === undefined ? { file } : { file, line },
        message: `not valid YAML: ${e instanceof Error ? e.message : String(e)}`,
      });
      return;
    }
    reader.read(value, lines, [], i);
  });
  return out;
}
