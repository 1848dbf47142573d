/**
 * Compose YAML as compose-go reads it (go.yaml.in/yaml/v4 into `any`, then its reset processor): YAML 1.2 core
 * scalars (`yes` and `on` stay strings; the loader casts them where a boolean belongs), anchors and aliases, merge
 * keys (`<<`, explicit keys win), duplicate keys refused, every document of a file loaded in turn, and the `!reset`
 * / `!override` tags recorded by path so that the merge drops or replaces what earlier files said.
 */
import {
  type Document,
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  parseAllDocuments,
  type Node as YamlNode,
} from "yaml";

/** A Compose input error: bad YAML, a cycle, a missing file, a required variable. The scan exits with 2. */
export class ComposeError extends Error {
  constructor(
    message: string,
    /** The 1-based line in the file named by `file`, when known. */
    readonly line?: number,
    readonly file?: string,
  ) {
    super(message);
  }
}

/** A key path in the model: `services.app.privileged`. */
export type ModelPath = readonly string[];

/** One YAML document of a Compose file, as plain values, with its `!reset` and `!override` paths. */
export interface ComposeYamlDoc {
  readonly value: unknown;
  /** Paths tagged `!reset` (dropped here, and from what earlier files said). */
  readonly resets: readonly ModelPath[];
  /** Paths tagged `!override` (kept here; replace what earlier files said instead of merging). */
  readonly overrides: readonly ModelPath[];
}

/** How deep aliases may nest before the document is refused (compose-go caps node visits the same way). */
const MAX_DEPTH = 200;

class Converter {
  readonly resets: ModelPath[] = [];
  readonly overrides: ModelPath[] = [];
  private visits = 0;

  constructor(
    private readonly doc: Document,
    private readonly counter: LineCounter,
    private readonly file: string,
  ) {}

  private line(node: unknown): number | undefined {
    const r = (node as YamlNode | null)?.range;
    return r === undefined || r === null ? undefined : this.counter.linePos(r[0]).line;
  }

  /** `undefined` means "dropped" (a `!reset` node). */
  convert(node: unknown, path: ModelPath, depth: number): unknown {
    if (++this.visits > 100_000 || depth > MAX_DEPTH)
      throw new ComposeError(
        "compose file exceeds maximum node visit limit (100000)",
        this.line(node),
        this.file,
      );
    if (node === null || node === undefined) return null;
    if (isAlias(node)) {
      const target = node.resolve(this.doc);
      if (target === undefined)
        throw new ComposeError(`unknown anchor ${node.source}`, this.line(node), this.file);
      return this.convert(target, path, depth + 1);
    }
    const tag = (node as { tag?: string }).tag;
    if (tag === "!reset") {
      this.resets.push(path);
      return undefined;
    }
    if (tag === "!override") this.overrides.push(path);
    if (isMap(node)) return this.map(node, path, depth);
    if (isSeq(node)) {
      const out: unknown[] = [];
      node.items.forEach((item, i) => {
        const v = this.convert(item, [...path, String(i)], depth + 1);
        if (v !== undefined) out.push(v);
      });
      return out;
    }
    if (isScalar(node)) return scalarValue(node, tag);
    return null;
  }

  private map(node: { items: unknown[] }, path: ModelPath, depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const explicit = new Map<string, number | undefined>();
    const merged: Record<string, unknown>[] = [];
    for (const pair of node.items) {
      if (!isPair(pair)) continue;
      const key = keyOf(isAlias(pair.key) ? (pair.key.resolve(this.doc) ?? pair.key) : pair.key);
      const isMerge = key === "<<" && isScalar(pair.key) && pair.key.type === "PLAIN";
      const seen = explicit.get(key);
      if (explicit.has(key))
        throw new ComposeError(
          `mapping key "${key}" already defined at line ${seen}`,
          this.line(pair.key),
          this.file,
        );
      explicit.set(key, this.line(pair.key));
      if (isMerge) {
        // compose-go drops `<<` from recorded paths: tags inside merged maps apply to the map that merges them.
        const sources = isSeq(pair.value) ? pair.value.items : [pair.value];
        for (const s of sources) {
          const v = this.convert(s, path, depth + 1);
          if (v === undefined) continue;
          if (typeof v !== "object" || v === null || Array.isArray(v))
            throw new ComposeError(
              "map merge requires map or sequence of maps as the value",
              this.line(pair.value),
              this.file,
            );
          merged.push(v as Record<string, unknown>);
        }
        continue;
      }
      const v = this.convert(pair.value, [...path, key], depth + 1);
      if (v !== undefined) out[key] = v;
    }
    // Merged keys fill in what the map does not say itself; an earlier source wins over a later one.
    for (const m of merged)
      for (const [k, v] of Object.entries(m)) if (!explicit.has(k) && !(k in out)) out[k] = v;
    return out;
  }
}

/** A key as text; an alias key (`*k :`) is resolved by the caller to the scalar it names. */
function keyOf(key: unknown): string {
  if (isScalar(key)) return key.value === null ? "" : String(key.value);
  if (isAlias(key)) return key.source;
  return String(key);
}

/** A scalar's value: core-schema types for plain scalars; a custom tag keeps the text (yaml/v4 decodes it so). */
function scalarValue(node: { value: unknown; source?: string }, tag: string | undefined): unknown {
  // The yaml package resolves `!!str` and the other YAML tags to their full names; a local tag starts with `!`.
  const local = tag?.startsWith("!") === true && !tag.startsWith("!!");
  if (local) {
    return typeof node.value === "string" ? node.value : (node.source ?? String(node.value));
  }
  const v = node.value;
  if (v === null || v === undefined) return null;
  if (typeof v === "bigint") return Number(v);
  if (v instanceof Uint8Array) return Buffer.from(v).toString("latin1");
  return v;
}

/**
 * The text with line breaks as compose-go's YAML reader (go.yaml.in/yaml/v4, a libyaml port) reads them. Its
 * scanner takes a lone CR, NEL (U+0085), LS (U+2028) and PS (U+2029) as line breaks (`is_break`) wherever they are,
 * so what follows one, even in a comment, is a new line; this reader takes only LF and CR LF. A lone CR and NEL are
 * read as LF (`read_line` turns both into LF in every context, so the reading is the same). LS and PS are refused:
 * the engine keeps them as themselves inside a scalar, which no rewrite of the text can say.
 */
export function composeLineBreaks(source: string, file: string): string {
  const m = /[\u2028\u2029]/.exec(source);
  if (m !== null) {
    let line = 1;
    for (let i = 0; i < m.index; i++) {
      const c = source[i];
      if (c === "\n" || c === "\u0085" || (c === "\r" && source[i + 1] !== "\n")) line++;
    }
    throw new ComposeError(
      `${m[0] === "\u2028" ? "U+2028 LINE SEPARATOR" : "U+2029 PARAGRAPH SEPARATOR"} is a line break for compose's YAML reader (what follows it, even in a comment, is a new line) but text for this one; write a plain line break`,
      line,
      file,
    );
  }
  return /\r(?!\n)|\u0085/.test(source) ? source.replace(/\r(?!\n)|\u0085/g, "\n") : source;
}

/** Parses a Compose file into its documents. Throws {@link ComposeError} with the line on bad YAML. */
export function parseComposeYaml(source: string, file: string): ComposeYamlDoc[] {
  const counter = new LineCounter();
  const docs = parseAllDocuments(composeLineBreaks(source, file), {
    lineCounter: counter,
    uniqueKeys: false,
    merge: false,
    prettyErrors: true,
    version: "1.2",
    schema: "core",
  });
  const list = Array.isArray(docs) ? docs : [];
  const out: ComposeYamlDoc[] = [];
  for (const doc of list) {
    const err = doc.errors[0];
    if (err !== undefined)
      throw new ComposeError(
        `not valid YAML: ${(err.message.split("\n")[0] ?? "").replace(/:$/, "")}`,
        err.linePos?.[0]?.line,
        file,
      );
    if (doc.contents === null) continue;
    const c = new Converter(doc, counter, file);
    const value = c.convert(doc.contents, [], 0);
    out.push({ value: value ?? null, resets: c.resets, overrides: c.overrides });
  }
  return out;
}
