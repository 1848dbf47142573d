/**
 * Structure caps checked on an input's text before any recursive reader sees it (the YAML composer and `toJS`, the
 * adapters, the Pulumi value walker): nesting depth, and for YAML the size aliases expand to (a "billion laughs"
 * document is a few lines that expand to billions of nodes). Every walk here is iterative, so the check itself
 * cannot overflow the stack on the input it exists to refuse.
 */
import { type CST, isAlias, isCollection, isNode, isPair, Parser, type Node as YamlNode } from "yaml";
import { readBlockYaml } from "../kubernetes/yaml-block";
import { parseYamlDocuments } from "./yaml-docs";

export interface StructureLimits {
  /** Collections nested in each other, counted from the document's root collection (1). */
  readonly maxDepth: number;
  /** Nodes that aliases add to a YAML document when expanded. */
  readonly maxAliasNodes: number;
}

export const DEFAULT_MAX_DEPTH = 256;
export const DEFAULT_MAX_ALIAS_NODES = 1_000_000;

/** The 1-based line of a character offset. */
function lineOf(src: string, offset: number): number {
  let line = 1;
  for (let i = src.indexOf("\n"); i >= 0 && i < offset; i = src.indexOf("\n", i + 1)) line++;
  return line;
}

/**
 * The deepest nesting of a JSON text's arrays and objects, counted on the characters (strings skipped), with the
 * offset where `max` is first exceeded. Exact for valid JSON; the caller only uses it on text JSON.parse accepted.
 */
export function jsonDepth(src: string, max: number): { depth: number; over?: number } {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < src.length; i++) {
    const c = src.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: the next character is escaped
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      depth++;
      if (depth > deepest) deepest = depth;
      if (depth > max) return { depth, over: i };
    } else if (c === 93 || c === 125) depth--;
  }
  return { depth: deepest };
}

/** The tokens nested in a CST token: a collection's keys and values, a document's body. */
function cstChildren(t: CST.Token): CST.Token[] {
  const out: CST.Token[] = [];
  const push = (x: CST.Token | null | undefined) => {
    if (x !== undefined && x !== null) out.push(x);
  };
  if (t.type === "document") push(t.value);
  else if (t.type === "block-map" || t.type === "block-seq" || t.type === "flow-collection")
    for (const item of t.items) {
      push(item.key);
      push(item.value);
    }
  return out;
}

function isCstCollection(t: CST.Token): boolean {
  return t.type === "block-map" || t.type === "block-seq" || t.type === "flow-collection";
}

/**
 * The offset of the first YAML collection nested deeper than `max`, read on the concrete syntax tree (the parser
 * is iterative; composing a document is not), or undefined when none is.
 */
export function yamlSyntaxTooDeep(src: string, max: number): number | undefined {
  for (const doc of new Parser().parse(src)) {
    const stack: { t: CST.Token; depth: number }[] = [{ t: doc, depth: 0 }];
    while (stack.length > 0) {
      const { t, depth } = stack.pop() as { t: CST.Token; depth: number };
      const d = isCstCollection(t) ? depth + 1 : depth;
      if (d > max) return "offset" in t ? t.offset : 0;
      for (const c of cstChildren(t)) stack.push({ t: c, depth: d });
    }
  }
  return undefined;
}

/**
 * Each alias's node, as the yaml library resolves it: the last node with that anchor before the alias in document
 * order (an alias inside its anchor's node names that node). One iterative pass, where resolving each alias on its
 * own searches the whole document.
 */
function bindAliases(root: unknown): Map<unknown, unknown> {
  const current = new Map<string, unknown>();
  const bound = new Map<unknown, unknown>();
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const n = stack.pop();
    if (isAlias(n)) {
      const target = current.get(n.source);
      if (target !== undefined) bound.set(n, target);
      continue;
    }
    if (isNode(n) && n.anchor !== undefined) current.set(n.anchor, n);
    const kids = nodeChildren(n);
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
  }
  return bound;
}

/** A composed node's children; an alias is resolved to the node it names. */
function nodeChildren(n: unknown): unknown[] {
  if (isCollection(n)) return n.items.flatMap((i) => (isPair(i) ? [i.key, i.value] : [i]));
  return [];
}

/**
 * Depth and node count of each YAML document with its aliases expanded, computed once per node (so the check is
 * linear in the document even when the expansion is exponential): the depth and size the readers would meet.
 */
function expandedShape(
  root: unknown,
  resolve: (alias: unknown) => unknown,
  limits: StructureLimits,
): { depth?: number; nodes?: number; node?: YamlNode } {
  const memo = new Map<unknown, { depth: number; nodes: number }>();
  // Nodes pushed and not finished. Children are taken in document order, and an anchor comes before its aliases, so
  // an alias to an open node names an ancestor: a self-reference, counted as a leaf and never followed.
  const start = isAlias(root) ? resolve(root) : root;
  const open = new Set<unknown>([start]);
  const stack: { n: unknown; expanded: boolean }[] = [{ n: start, expanded: false }];
  let physical = 0;
  while (stack.length > 0) {
    const top = stack[stack.length - 1] as { n: unknown; expanded: boolean };
    const n = top.n;
    if (memo.has(n) || n === null || typeof n !== "object") {
      stack.pop();
      open.delete(n);
      continue;
    }
    const kids = nodeChildren(n).map((k) => (isAlias(k) ? resolve(k) : k));
    if (!top.expanded) {
      top.expanded = true;
      for (let i = kids.length - 1; i >= 0; i--) {
        const k = kids[i];
        if (k !== null && typeof k === "object" && !memo.has(k) && !open.has(k)) {
          open.add(k);
          stack.push({ n: k, expanded: false });
        }
      }
      continue;
    }
    stack.pop();
    open.delete(n);
    physical++;
    let depth = 0;
    let nodes = 1;
    for (const k of kids) {
      const m = memo.get(k);
      depth = Math.max(depth, m?.depth ?? 0);
      nodes += m?.nodes ?? 1;
    }
    const shape = { depth: isCollection(n) ? depth + 1 : depth, nodes };
    memo.set(n, shape);
    if (shape.depth > limits.maxDepth) return { depth: shape.depth, node: n as YamlNode };
    if (shape.nodes - physical > limits.maxAliasNodes) return { nodes: shape.nodes, node: n as YamlNode };
  }
  return {};
}

/**
 * An upper bound on the nesting depth of a YAML text: the characters that open or mark a collection (`[`, `{`, a
 * sequence's `-`, a mapping's `:` or `?`). Each collection of a nested chain owns one of them that none of the
 * collections inside it has (a flow collection its bracket, a sequence its first `-`, a mapping the indicator of its
 * first pair), so no text nests deeper than it has of them; a text within the cap needs no syntax tree.
 */
function yamlIndicators(src: string): number {
  let n = 0;
  for (let i = 0; i < src.length; i++) {
    const c = src.charCodeAt(i);
    // [ { - : ?
    if (c === 91 || c === 123 || c === 45 || c === 58 || c === 63) n++;
  }
  return n;
}

/**
 * Where a YAML anchor may stand (`&name` at the start of a node's properties: after a line start, a space or tab, or
 * an indicator). Without one, no alias resolves to anything, so nothing expands. Text in a quoted scalar may match:
 * that only costs the full check.
 */
const ANCHOR = /(?:^|[\s[{,:?-])&[^\s[\]{},]/m;

/**
 * Whether every document of the text (cut at its `---` lines) is in the plain block subset (yaml-kube-block.ts) and,
 * aliases expanded, within both caps with room to spare (the block reader counts a little differently from
 * `expandedShape`); false sends the text to the full check.
 */
function blockWithinCaps(src: string, limits: StructureLimits): boolean {
  let aliasNodes = 0;
  for (const doc of src.split(/^---[ ]*$/m)) {
    if (doc.trim() === "") continue;
    const read = readBlockYaml(doc, true);
    if (read === undefined || read.depth + 1 > limits.maxDepth) return false;
    aliasNodes += read.aliasNodes;
  }
  return 2 * aliasNodes + 2 <= limits.maxAliasNodes;
}

/** Why a text breaks a structure cap, with its line, or undefined when it does not. */
export function structureProblem(
  src: string,
  limits: StructureLimits,
): { message: string; line?: number } | undefined {
  const trimmed = src.trimStart();
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
    let json = true;
    try {
      JSON.parse(src); // iterative in V8: safe on any depth
    } catch {
      json = false; // YAML flow syntax: checked as YAML below
    }
    if (json) {
      const { over } = jsonDepth(src, limits.maxDepth);
      return over === undefined ? undefined : tooDeep(limits, lineOf(src, over));
    }
  }
  if (yamlIndicators(src) > limits.maxDepth) {
    const offset = yamlSyntaxTooDeep(src, limits.maxDepth);
    if (offset !== undefined) return tooDeep(limits, lineOf(src, offset));
  }
  // Within the depth cap the composer's recursion is safe; aliases may still expand past either cap, and only an
  // anchored node can be expanded.
  if (!src.includes("*") || !ANCHOR.test(src)) return undefined;
  if (blockWithinCaps(src, limits)) return undefined;
  for (const doc of parseYamlDocuments(src).docs) {
    if (doc.errors.length > 0) continue; // the reader reports the syntax error itself
    const bound = bindAliases(doc.contents);
    const shape = expandedShape(doc.contents, (a) => bound.get(a), limits);
    const start = shape.node?.range?.[0];
    const line = start === undefined ? undefined : lineOf(src, start);
    if (shape.depth !== undefined) return tooDeep(limits, line, " once its aliases are expanded");
    if (shape.nodes !== undefined)
      return {
        message: `its aliases expand to more than ${limits.maxAliasNodes} extra nodes (an alias bomb); not read`,
        ...(line === undefined ? {} : { line }),
      };
  }
  return undefined;
}

function tooDeep(
  limits: StructureLimits,
  line: number | undefined,
  how = "",
): { message: string; line?: number } {
  return {
    message: `is nested deeper than ${limits.maxDepth} levels${how} (--max-depth); not read`,
    ...(line === undefined ? {} : { line }),
  };
}
