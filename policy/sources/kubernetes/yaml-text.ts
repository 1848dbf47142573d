/**
 * The raw-text differences between the YAML 1.2 parser the scanner uses and libyaml's YAML 1.1 reader in
 * go.yaml.in/yaml/v2 (readerc.go, scannerc.go), where the same text would give the engine another document:
 * - NEL (U+0085), LINE SEPARATOR (U+2028) and PARAGRAPH SEPARATOR (U+2029) are line breaks for the engine and
 *   ordinary characters for YAML 1.2, so a comment or a value could hide a line the engine reads as a key;
 * - control characters are refused by the engine's reader;
 * - in double-quoted text the engine knows no `\/` escape and refuses escapes of surrogates or beyond U+10FFFF.
 * A document that the engine would read differently or refuse is refused here, with its line.
 */
import { type Document, isMap, isPair, isScalar, isSeq, Scalar } from "yaml";

/** The 1-based line of a character offset. */
export function lineIn(source: string, offset: number): number {
  let line = 1;
  const end = Math.min(offset, source.length);
  for (let i = source.indexOf("\n"); i !== -1 && i < end; i = source.indexOf("\n", i + 1)) line++;
  return line;
}

/** libyaml's printable set (readerc.go): tab, line feed, carriage return, and the YAML printable ranges. */
function printable(c: number): boolean {
  return (
    c === 0x09 ||
    c === 0x0a ||
    c === 0x0d ||
    (c >= 0x20 && c <= 0x7e) ||
    c === 0x85 ||
    (c >= 0xa0 && c <= 0xd7ff) ||
    (c >= 0xe000 && c <= 0xfffd) ||
    c >= 0x10000
  );
}

function characterName(c: number): string {
  return `U+${c.toString(16).toUpperCase().padStart(4, "0")}`;
}

/** The escapes libyaml reads in double-quoted text and their lengths (scannerc.go, `yaml_parser_scan_flow_scalar`). */
const SIMPLE_ESCAPES = new Set([
  "0",
  "a",
  "b",
  "t",
  "\t",
  "n",
  "v",
  "f",
  "r",
  "e",
  " ",
  '"',
  "'",
  "\\",
  "N",
  "_",
  "L",
  "P",
]);
const CODE_ESCAPES: Readonly<Record<string, number>> = { x: 2, u: 4, U: 8 };

/** Checks the escapes of one double-quoted scalar's raw text (`"..."`); returns the problem, if any. */
function escapeProblem(raw: string): string | undefined {
  for (let i = raw.indexOf("\\"); i !== -1; i = raw.indexOf("\\", i + 2)) {
    const e = raw[i + 1] ?? "";
    if (e === "\n" || e === "\r") continue; // an escaped line break: line folding, the same for both
    if (SIMPLE_ESCAPES.has(e)) continue;
    const n = CODE_ESCAPES[e];
    if (n === undefined) return `found unknown escape character "\\${e}"`;
    const hex = raw.slice(i + 2, i + 2 + n);
    if (!/^[0-9A-Fa-f]+$/.test(hex) || hex.length !== n) return "did not find expected hexadecimal number";
    const code = Number.parseInt(hex, 16);
    if ((code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff)
      return `found invalid Unicode character escape code \\${e}${hex}`;
    i += n;
  }
  return undefined;
}

/** A line that is no content: blank, a comment, a directive or a document end marker. */
function isNoContentLine(line: string): boolean {
  const t = line.trim();
  return t === "" || t.startsWith("#") || t.startsWith("%") || t === "...";
}

/**
 * The text that belongs to a document: its range (from its `---` marker), widened over the comment and blank lines
 * around it, which the YAML 1.2 parser leaves outside every document but the engine may read as content.
 */
function documentSpan(doc: Document, source: string): [number, number] {
  const [from = 0, , to = source.length] = doc.range ?? [];
  let start = from <= 0 ? 0 : source.lastIndexOf("\n", from - 1) + 1;
  while (start > 0) {
    // The line before `start` (which follows a line break): from the break before it, or the text's start.
    const prev = start >= 2 ? source.lastIndexOf("\n", start - 2) + 1 : 0;
    if (prev >= start || !isNoContentLine(source.slice(prev, start - 1))) break;
    start = prev;
  }
  let end = to;
  while (end < source.length) {
    const nl = source.indexOf("\n", end);
    const next = nl === -1 ? source.length : nl + 1;
    if (!isNoContentLine(source.slice(end, next))) break;
    end = next;
  }
  return [start, end];
}

/**
 * Throws when the engine would read the document's text differently (see the module comment); `firstLine` is the
 * file's line where `source` starts, for the messages.
 */
export function checkEngineText(doc: Document, source: string, firstLine = 1): void {
  const lineOf = (offset: number) => lineIn(source, offset) + firstLine - 1;
  const [start, end] = documentSpan(doc, source);
  for (let i = start; i < end; i++) {
    const c = source.codePointAt(i) ?? 0;
    if (c > 0xffff) i++;
    if (c === 0x85 || c === 0x2028 || c === 0x2029)
      throw new Error(
        `line ${lineOf(i)}: ${characterName(c)} is a line break for the engine (YAML 1.1) but text here; write a plain line break`,
      );
    if (!printable(c))
      throw new Error(`line ${lineOf(i)}: control characters are not allowed (${characterName(c)})`);
  }
  const visit = (node: unknown, depth: number): void => {
    if (depth > 1000) return; // the decoder refuses such nesting with its own message
    if (isScalar(node)) {
      const range = node.range;
      if (node.type === Scalar.QUOTE_DOUBLE && range !== undefined && range !== null) {
        const problem = escapeProblem(source.slice(range[0], range[1]));
        if (problem !== undefined) throw new Error(`line ${lineOf(range[0])}: ${problem}`);
      }
      return;
    }
    if (isMap(node) || isSeq(node)) {
      for (const item of node.items) {
        if (isPair(item)) {
          visit(item.key, depth + 1);
          visit(item.value, depth + 1);
        } else visit(item, depth + 1);
      }
    }
  };
  visit(doc.contents, 0);
}
