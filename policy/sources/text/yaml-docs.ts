/**
 * The YAML documents of a text, parsed once: the structure check (limits.ts) and the reader (documents.ts) both need
 * the tree of the same text, and parsing is most of a scan's time. The last text parsed is kept, so a file checked and
 * then read is parsed once. Duplicate keys and merge keys stay in the tree: each format's decoder applies its
 * engine's rule for them.
 */
import { type Document, LineCounter, parseAllDocuments } from "yaml";

export interface ParsedYaml {
  readonly docs: readonly Document.Parsed[];
  readonly counter: LineCounter;
}

let last: { readonly text: string; readonly parsed: ParsedYaml } | undefined;

/** Every YAML document of `text`, with the line counter of the parse. Callers only read the trees. */
export function parseYamlDocuments(text: string): ParsedYaml {
  if (last?.text === text) return last.parsed;
  const counter = new LineCounter();
  const docs = parseAllDocuments(text, {
    lineCounter: counter,
    uniqueKeys: false,
    merge: false,
    prettyErrors: true,
  });
  const parsed: ParsedYaml = {
    docs: Array.isArray(docs) ? docs : [docs as unknown as Document.Parsed],
    counter,
  };
  last = { text, parsed };
  return parsed;
}
