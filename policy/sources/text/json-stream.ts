/**
 * A stream of JSON values written back to back (`{...}{...}` or one per line), as kubectl's decoder reads a `.json`
 * file: object by object. Returns each value's text with its starting line, or undefined when the text is not such
 * a stream of at least two values.
 */
export interface JsonSegment {
  readonly text: string;
  /** 1-based line where the value starts. */
  readonly line: number;
}

export function splitJsonStream(source: string): JsonSegment[] | undefined {
  const out: JsonSegment[] = [];
  let depth = 0;
  let inString = false;
  let escaped = false;
  let start = -1;
  let line = 1;
  let startLine = 1;
  for (let i = 0; i < source.length; i++) {
    const ch = source[i];
    if (ch === "\n") line++;
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === "\\") escaped = true;
      else if (ch === '"') inString = false;
      continue;
    }
    if (depth === 0 && start < 0) {
      if (ch === " " || ch === "\t" || ch === "\r" || ch === "\n" || ch === "\ufeff") continue;
      if (ch !== "{" && ch !== "[") return undefined; // only objects and lists stand alone in a stream
      start = i;
      startLine = line;
    }
    if (ch === '"') inString = true;
    else if (ch === "{" || ch === "[") depth++;
    else if (ch === "}" || ch === "]") {
      depth--;
      if (depth < 0) return undefined;
      if (depth === 0) {
        out.push({ text: source.slice(start, i + 1), line: startLine });
        start = -1;
      }
    }
  }
  if (depth !== 0 || inString || out.length < 2) return undefined;
  for (const seg of out) {
    try {
      JSON.parse(seg.text);
    } catch {
      return undefined;
    }
  }
  return out;
}
