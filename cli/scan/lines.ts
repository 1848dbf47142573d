/** Lines of a YAML or JSON document by key path, for findings that point at a file and line. */
import { type Document, isMap, isPair, isScalar, isSeq, type LineCounter, type Node as YamlNode } from "yaml";

/**
 * Lines of one YAML (or JSON) document, looked up by key path; best effort, never throws. `firstLine` is the file's
 * line where the text the document was parsed from starts.
 */
export class Lines {
  constructor(
    private readonly doc: Document | undefined,
    private readonly counter: LineCounter | undefined,
    private readonly firstLine = 1,
  ) {}

  /** The node at `segments` (the first pair with each key), or undefined when the path is not in the document. */
  node(segments: readonly (string | number)[]): unknown {
    let node: unknown = this.doc?.contents;
    for (const seg of segments) {
      if (isMap(node))
        node = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(seg))?.value;
      else if (isSeq(node) && typeof seg === "number") node = node.items[seg];
      else return undefined;
    }
    return node ?? undefined;
  }

  /** The line of the deepest node of `segments` that exists (a key's own line for map entries). */
  line(segments: readonly (string | number)[]): number | undefined {
    if (this.doc === undefined || this.counter === undefined) return undefined;
    let node: unknown = this.doc.contents;
    let offset = (node as YamlNode | null)?.range?.[0];
    for (const seg of segments) {
      if (isMap(node)) {
        const pair = node.items.find(
          (p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(seg),
        );
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
