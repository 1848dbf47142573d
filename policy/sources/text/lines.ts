/** Lines of a YAML or JSON document by key path, for findings that point at a file and line. */
import {
  type Document,
  isMap,
  isPair,
  isScalar,
  isSeq,
  type LineCounter,
  type Pair,
  type YAMLMap,
  type Node as YamlNode,
} from "yaml";
import type { LineNode } from "../kubernetes/yaml-block";
import type { ParsedYaml } from "./yaml-docs";

/**
 * Lines of one YAML (or JSON) document, looked up by key path; best effort, never throws. `firstLine` is the file's
 * line where the text the document was parsed from starts.
 */
export class Lines {
  constructor(
    private doc: Document | undefined,
    private counter: LineCounter | undefined,
    private readonly firstLine = 1,
    /** The lines a plain block document was read with (yaml-kube-block.ts); its tree is parsed only when asked. */
    private readonly block?: { readonly root: LineNode; readonly parse: () => ParsedYaml },
  ) {}

  /** Lines of a document read the plain block way; `parse` gives its tree, for `node`. */
  static ofBlock(root: LineNode, firstLine: number, parse: () => ParsedYaml): Lines {
    return new Lines(undefined, undefined, firstLine, { root, parse });
  }

  private tree(): void {
    if (this.block === undefined || this.doc !== undefined) return;
    const { docs, counter } = this.block.parse();
    this.doc = docs[0];
    this.counter = counter;
  }

  /** The node at `segments` (the first pair with each key), or undefined when the path is not in the document. */
  node(segments: readonly (string | number)[]): unknown {
    this.tree();
    let node: unknown = this.doc?.contents;
    for (const seg of segments) {
      if (isMap(node)) node = pairOf(node, seg)?.value;
      else if (isSeq(node) && typeof seg === "number") node = node.items[seg];
      else return undefined;
    }
    return node ?? undefined;
  }

  /** The line of the deepest node of `segments` that exists (a key's own line for map entries). */
  line(segments: readonly (string | number)[]): number | undefined {
    if (this.block !== undefined) return blockLine(this.block.root, segments) + this.firstLine - 1;
    if (this.doc === undefined || this.counter === undefined) return undefined;
    let node: unknown = this.doc.contents;
    let offset = (node as YamlNode | null)?.range?.[0];
    for (const seg of segments) {
      if (isMap(node)) {
        const pair = pairOf(node, seg);
        if (pair === undefined) break;
        offset = (pair.key as YamlNode).range?.[0] ?? offset;
        node = pair.value;
      } else if (isSeq(node) && typeof seg === "number") {
        const item = node.items[seg];
        if (item === undefined) break;
        offset = (item as YamlNode).range?.[0] ?? offset;
        node = item;
      } else break;
    }
    return offset === undefined ? undefined : this.counter.linePos(offset).line + this.firstLine - 1;
  }
}

/** Each map's first pair by key, indexed on its first lookup: a finding per key of a large map costs one pass. */
const PAIRS = new WeakMap<object, Map<string, Pair>>();

/** The first pair of `map` whose scalar key is `seg`. */
function pairOf(map: YAMLMap, seg: string | number): Pair | undefined {
  let byKey = PAIRS.get(map);
  if (byKey === undefined) {
    byKey = new Map();
    for (const p of map.items)
      if (isPair(p) && isScalar(p.key) && !byKey.has(String(p.key.value))) byKey.set(String(p.key.value), p);
    PAIRS.set(map, byKey);
  }
  return byKey.get(String(seg));
}

/** `Lines.line` on a plain block document's lines: the same walk, on the lines the reader kept. */
function blockLine(root: LineNode, segments: readonly (string | number)[]): number {
  let node: LineNode | undefined = root;
  let line = root.line;
  for (const seg of segments) {
    if (node?.keys !== undefined) {
      const entry = node.keys.get(String(seg));
      if (entry === undefined) break;
      line = entry.line;
      node = entry.node;
    } else if (node?.items !== undefined && typeof seg === "number") {
      const item: LineNode | undefined = node.items[seg];
      if (item === undefined) break;
      line = item.line;
      node = item;
    } else break;
  }
  return line;
}
