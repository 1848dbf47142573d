/**
 * The plain block subset of YAML read straight to the value kubectl sends, without a syntax tree: most manifests are
 * nothing but block mappings and sequences of plain or simply quoted scalars, and building the `yaml` package's tree
 * for them is most of a scan's time. The subset is chosen so that YAML 1.2 (the `yaml` package) and YAML 1.1 (go-yaml
 * v2, the engine's reader) read it the same way, and so that yaml-kube.ts would read it to the same value and lines:
 * - printable ASCII and line feeds only (no tab, CR, NEL, control character or escape), no directive, document
 *   marker, tag, block scalar, multi-line scalar, `#` outside a comment line, merge key or complex key;
 * - keys of letters, digits and `_ . / -` that resolve to themselves (never `on`, `y`, `1`, `null`), each once per
 *   map; values plain (their YAML 1.1 meaning comes from yaml-kube-scalar.ts, as for the full reader), double-quoted
 *   without escapes, single-quoted without quotes, `[]`, `{}`, or a nested block;
 * - anchors on nested blocks and aliases to them, expanded as go-yaml expands them, at most a few hundred nodes in
 *   all (far below go-yaml's aliasing limit, and below the structure caps).
 * Anything else, and anything the full reader would refuse, returns undefined: the caller then reads the text the
 * full way, which gives the engine's answer and its errors. test/policy/sources/kubernetes/yaml-block.property.test.ts compares the two
 * readings on generated documents, inside and around the subset.
 */
import { scalarJson } from "./yaml";
import { goScalar } from "./yaml-scalar";

/** Where each key and item of a document starts, for findings; the shape `Lines.line` walks. */
export interface LineNode {
  /** The 1-based line (of the text read) where the node starts. */
  readonly line: number;
  /** A map's keys: each key's own line, and its value's node (absent for a null value). */
  readonly keys?: ReadonlyMap<string, { readonly line: number; readonly node?: LineNode }>;
  /** A sequence's items. */
  readonly items?: readonly LineNode[];
}

export interface BlockRead {
  /** The value sigs.k8s.io/yaml gives the engine. */
  readonly value: unknown;
  readonly lines: LineNode;
  /** Collections nested in each other with aliases expanded (the root collection is 1). */
  readonly depth: number;
  /** Nodes that expanding the aliases added. */
  readonly aliasNodes: number;
}

/** At most this many nodes come from aliases: far below go-yaml's excessive-aliasing check (over 1,000 decoded). */
const MAX_ALIAS_NODES = 400;
/** Deeper documents are read the full way. */
const MAX_BLOCK_DEPTH = 100;

interface Line {
  indent: number;
  text: string;
  readonly line: number;
}

/** Not the subset: the caller reads the text the full way. */
class NotBlock extends Error {}

const KEY = /^[A-Za-z_][A-Za-z0-9_./-]{0,252}$/;
/** A plain value: no indicator first, no `#`, flow indicator, `: ` or trailing `:` (checked apart). */
const PLAIN = /^(?:[A-Za-z0-9_./+~$^=(;]|-[A-Za-z0-9.])[^#[\]{},]*$/;
const DOUBLE = /^"[^"\\]*"$/;
const SINGLE = /^'[^']*'$/;
const ANCHOR_NAME = /^[0-9A-Za-z_-]+$/;

const own = (obj: Record<string, unknown>, k: string, v: unknown) => {
  obj[k] = v;
};

class Reader {
  private i = 0;
  private readonly anchors = new Map<string, { value: unknown; depth: number; nodes: number } | "open">();
  aliasNodes = 0;

  constructor(private readonly ls: Line[]) {}

  private peek(): Line | undefined {
    return this.ls[this.i];
  }

  /** The whole text: one block node at the first line's indent, and nothing after it. */
  document(): { value: unknown; lines: LineNode; depth: number } {
    const first = this.peek();
    if (first === undefined) throw new NotBlock();
    const r = this.block(first.indent, 1);
    if (this.i !== this.ls.length) throw new NotBlock();
    return r;
  }

  /** The block node whose first line is the current one, at `indent`. */
  private block(indent: number, depth: number): { value: unknown; lines: LineNode; depth: number } {
    if (depth > MAX_BLOCK_DEPTH) throw new NotBlock();
    const l = this.peek() as Line;
    return isItem(l.text) ? this.sequence(indent, depth) : this.mapping(indent, depth);
  }

  private mapping(indent: number, depth: number): { value: unknown; lines: LineNode; depth: number } {
    const value: Record<string, unknown> = {};
    const keys = new Map<string, { line: number; node?: LineNode }>();
    const start = (this.peek() as Line).line;
    let deepest = 1;
    for (let l = this.peek(); l !== undefined && l.indent >= indent; l = this.peek()) {
      if (l.indent > indent || isItem(l.text)) throw new NotBlock();
      const { key, rest } = entry(l.text);
      if (keys.has(key)) throw new NotBlock(); // the last would win: read the full way
      this.i++;
      const v = this.value(rest, indent, depth, true);
      own(value, key, v.value);
      keys.set(key, v.lines === undefined ? { line: l.line } : { line: l.line, node: v.lines });
      deepest = Math.max(deepest, v.depth + 1);
    }
    return { value, lines: { line: start, keys }, depth: deepest };
  }

  private sequence(indent: number, depth: number): { value: unknown; lines: LineNode; depth: number } {
    const value: unknown[] = [];
    const items: LineNode[] = [];
    const start = (this.peek() as Line).line;
    let deepest = 1;
    for (let l = this.peek(); l !== undefined && l.indent >= indent; l = this.peek()) {
      if (l.indent > indent) throw new NotBlock();
      if (!isItem(l.text)) break; // the next key of a map this sequence is the value of, at the same indent
      const rest = l.text.slice(1).trimStart();
      const column = indent + (l.text.length - rest.length);
      let v: { value: unknown; lines?: LineNode; depth: number };
      if (rest !== "" && (isItem(rest) || isEntry(rest))) {
        // `- key: v` or `- - v`: a block that starts on the item's own line, at the column of its first character.
        l.indent = column;
        l.text = rest;
        v = this.block(column, depth + 1);
      } else {
        this.i++;
        v = this.value(rest, indent, depth, false);
      }
      value.push(v.value);
      items.push(v.lines ?? { line: l.line });
      deepest = Math.max(deepest, v.depth + 1);
    }
    return { value, lines: { line: start, items }, depth: deepest };
  }

  /**
   * The value written after `key:` or `- ` (`rest`) of a line at `indent`: a scalar on the same line, or the block
   * on the lines below (in a map, a sequence may also stand at the key's own indent).
   */
  private value(
    rest: string,
    indent: number,
    depth: number,
    inMap: boolean,
  ): { value: unknown; lines?: LineNode; depth: number } {
    const next = this.peek();
    const below = next !== undefined && next.indent > indent;
    if (rest === "" || rest.startsWith("&")) {
      const anchor = rest === "" ? undefined : rest.slice(1);
      if (anchor !== undefined && !ANCHOR_NAME.test(anchor)) throw new NotBlock();
      const nested = below || (inMap && next !== undefined && next.indent === indent && isItem(next.text));
      if (!nested) {
        if (anchor !== undefined) throw new NotBlock();
        return { value: null, depth: 0 };
      }
      if (anchor !== undefined) this.anchors.set(anchor, "open");
      const v = this.block((next as Line).indent, depth + 1);
      if (anchor !== undefined)
        this.anchors.set(anchor, { value: v.value, depth: v.depth, nodes: countNodes(v.value) });
      return v;
    }
    // A scalar or an alias: nothing may continue it on the lines below (a multi-line scalar is read the full way).
    if (below) throw new NotBlock();
    if (rest.startsWith("*")) {
      const target = this.anchors.get(rest.slice(1));
      if (target === undefined || target === "open" || !ANCHOR_NAME.test(rest.slice(1))) throw new NotBlock();
      this.aliasNodes += target.nodes;
      if (this.aliasNodes > MAX_ALIAS_NODES) throw new NotBlock();
      return { value: structuredClone(target.value), depth: target.depth };
    }
    const v = scalar(rest);
    return { value: v, depth: v !== null && typeof v === "object" ? 1 : 0 }; // `[]` and `{}` are collections
  }
}

function isItem(text: string): boolean {
  return text === "-" || text.startsWith("- ");
}

/** Where a `key:` ends in a line's text, or -1. */
function keyEnd(text: string): number {
  const at = text.indexOf(": ");
  if (at !== -1) return at;
  return text.endsWith(":") ? text.length - 1 : -1;
}

function isEntry(text: string): boolean {
  return keyEnd(text) !== -1 && /^[A-Za-z_]/.test(text);
}

/** A `key: rest` line's key (checked to be a plain string key) and the text after it. */
function entry(text: string): { key: string; rest: string } {
  const end = keyEnd(text);
  if (end === -1) throw new NotBlock();
  const key = text.slice(0, end);
  if (!KEY.test(key) || key === "__proto__") throw new NotBlock();
  const k = goScalar("", false, key);
  if (k.t !== "str" || k.v !== key) throw new NotBlock();
  return { key, rest: text.slice(end + 1).trim() };
}

function scalar(text: string): unknown {
  if (text === "[]") return [];
  if (text === "{}") return {};
  if (DOUBLE.test(text) || SINGLE.test(text)) return text.slice(1, -1);
  if (!PLAIN.test(text) || text.includes(": ") || text.endsWith(":")) throw new NotBlock();
  try {
    return scalarJson(goScalar("", false, text));
  } catch {
    throw new NotBlock(); // the engine refuses it (NaN, an infinity): read the full way for its error
  }
}

function countNodes(v: unknown): number {
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + countNodes(x), 1);
  if (v !== null && typeof v === "object")
    return Object.values(v).reduce((n: number, x) => n + 1 + countNodes(x), 1);
  return 1;
}

/** Outside the subset at once: a character, a directive, a document marker or a tab. */
const OUTSIDE = /[^\x20-\x7e\n]|^(?:%|---|\.\.\.)/m;

/** The lines that hold content; comment and blank lines hold none in the subset (there are no block scalars). */
function contentLines(text: string): Line[] {
  const out: Line[] = [];
  let n = 0;
  for (const raw of text.split("\n")) {
    n++;
    const body = raw.trimStart();
    if (body === "" || body.startsWith("#")) continue;
    const t = body.trimEnd();
    if (t.includes("#")) throw new NotBlock(); // a comment after content, or a `#` in a value
    out.push({ indent: raw.length - body.length, text: t, line: n });
  }
  return out;
}

/** A reading kept for the next caller: the structure check reads a text just before the reader reads it. */
let kept: { readonly text: string; readonly read: BlockRead | undefined } | undefined;

/**
 * The text read the plain block way, or undefined when it is outside the subset (see the module comment). `keep`
 * keeps the reading for the next call with the same text, which takes it (each value goes to one caller).
 */
export function readBlockYaml(text: string, keep = false): BlockRead | undefined {
  if (kept?.text === text) {
    const { read } = kept;
    kept = undefined;
    return read;
  }
  const read = readBlock(text);
  kept = keep ? { text, read } : undefined;
  return read;
}

function readBlock(text: string): BlockRead | undefined {
  if (OUTSIDE.test(text)) return undefined;
  try {
    const reader = new Reader(contentLines(text));
    const doc = reader.document();
    return { ...doc, aliasNodes: reader.aliasNodes };
  } catch (e) {
    if (e instanceof NotBlock) return undefined;
    throw e;
  }
}
