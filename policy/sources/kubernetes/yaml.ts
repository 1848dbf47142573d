/**
 * Kubernetes YAML as kubectl and the API server read it (sigs.k8s.io/yaml v1.6.0 `YAMLToJSON` over
 * go.yaml.in/yaml/v2 v2.4.3, the versions k8s.io/kubernetes v1.36.3 builds with), so that the rules see the value the
 * engine would store.
 *
 * The document arrives parsed by the `yaml` package with duplicate keys and `<<` merge keys left in the tree; this
 * module re-reads that tree with go-yaml v2's semantics (decode.go into `interface{}`), then applies sigs.k8s.io/yaml's
 * conversion to JSON (`convertToJSONableObject`, `json.Marshal`):
 * - plain scalars resolve as YAML 1.1 (`yes`/`on` are booleans, `0o17`/`017`/`0x1F`/`1_000` integers), see
 *   yaml-kube-scalar.ts; quoted and block scalars are text unless tagged; unknown tags (`!foo 1`) keep the text;
 * - a duplicate key is not an error: the last one written wins, and `<<` merges are applied in document order into
 *   the same map (a key written after `<<` wins over the merged one, a key written before it loses), a merged list
 *   from its last map to its first (the first wins);
 * - keys become strings (`1` -> "1", `1.0` -> "1", `yes` -> "true"); a null or out-of-int64 key is an error; two
 *   keys of different types that become the same string (`1` and `"1"`) are taken in Go's random map order, so
 *   when their values differ the value is {@link Unreadable} (the rules fail closed);
 * - NaN and infinities are errors where they are values (JSON has none), text where they are keys;
 * - aliases are expanded each time they are used, under go-yaml's own alias-expansion limit.
 * Whatever the engine rejects throws an Error that says what and where.
 */
import { type Document, isAlias, isMap, isPair, isScalar, isSeq, type Node, Scalar } from "yaml";
import { Unreadable } from "../../workload";
import { type GoScalar, goScalar, MERGE_TAG } from "./yaml-scalar";
import { checkEngineText, lineIn } from "./yaml-text";

/** How deep a document may nest (aliases expanded) before it is refused: far beyond any manifest, far below the stack. */
export const MAX_DEPTH = 1000;

/** A map as go-yaml builds it: keys keep their Go type until the JSON conversion. */
class GoMap {
  readonly entries = new Map<string, { key: GoScalar; value: GoValue }>();
  private nan = 0;
  set(key: GoScalar, value: GoValue): void {
    this.entries.set(this.identity(key), { key, value });
  }
  /** Go map key equality: by type and value, `-0 == 0`, and NaN never equal to itself. */
  private identity(k: GoScalar): string {
    switch (k.t) {
      case "null":
        return "null";
      case "float":
        return Number.isNaN(k.v) ? `nan:${this.nan++}` : `float:${k.v === 0 ? 0 : k.v}`;
      default:
        return `${k.t}:${String(k.v)}`;
    }
  }
}

type GoValue = GoScalar | GoMap | GoValue[];

/** Where a node starts, for messages. */
type Where = (node: unknown) => string;

/** go-yaml decode.go: the counters behind "document contains excessive aliasing". */
class Decoder {
  private decodeCount = 0;
  private aliasCount = 0;
  private aliasDepth = 0;
  private readonly expanding = new Set<unknown>();

  constructor(
    private readonly anchors: ReadonlyMap<unknown, Node>,
    private readonly where: Where,
  ) {}

  private count(): void {
    this.decodeCount++;
    if (this.aliasDepth > 0) this.aliasCount++;
    if (
      this.aliasCount > 100 &&
      this.decodeCount > 1000 &&
      this.aliasCount / this.decodeCount > allowedAliasRatio(this.decodeCount)
    )
      throw new Error("document contains excessive aliasing");
  }

  /** decode.go `document`: the document node is counted, then its content decoded. */
  decodeDocument(root: unknown): GoValue {
    this.count();
    return this.decode(root, 0);
  }

  /** decode.go `unmarshal` into an `interface{}`. */
  decode(node: unknown, depth: number): GoValue {
    if (depth > MAX_DEPTH) throw new Error(`nesting deeper than ${MAX_DEPTH} levels${this.where(node)}`);
    this.count();
    if (isAlias(node)) {
      return this.alias(node, depth, (target) => this.decode(target, depth + 1));
    }
    if (isMap(node)) {
      const out = new GoMap();
      this.mapping(node.items, out, depth);
      return out;
    }
    if (isSeq(node)) {
      return node.items.map((item) => {
        // `[a: 1]`: a single-pair mapping inside a flow sequence.
        if (isPair(item)) {
          this.count();
          const out = new GoMap();
          this.mapping([item], out, depth + 1);
          return out;
        }
        return this.decode(item, depth + 1);
      });
    }
    return this.scalar(node);
  }

  private alias<T>(node: unknown, depth: number, then: (target: Node) => T): T {
    const target = this.anchors.get(node);
    const name = isAlias(node) ? node.source : "";
    if (target === undefined) throw new Error(`unknown anchor '${name}' referenced${this.where(node)}`);
    if (this.expanding.has(node))
      throw new Error(`anchor '${name}' value contains itself${this.where(node)}`);
    if (depth > MAX_DEPTH) throw new Error(`nesting deeper than ${MAX_DEPTH} levels${this.where(node)}`);
    this.expanding.add(node);
    this.aliasDepth++;
    try {
      return then(target);
    } finally {
      this.aliasDepth--;
      this.expanding.delete(node);
    }
  }

  private scalar(node: unknown): GoScalar {
    // An absent node (`key:` with nothing after it) is an empty plain scalar: null.
    if (!isScalar(node)) return { t: "null" };
    const quoted = node.type !== undefined && node.type !== Scalar.PLAIN;
    try {
      return goScalar(node.tag ?? "", quoted, scalarText(node));
    } catch (e) {
      throw new Error(`${e instanceof Error ? e.message : String(e)}${this.where(node)}`);
    }
  }

  /** decode.go `mapping` into a map: pairs in document order, merges written into the same map. */
  private mapping(items: readonly unknown[], out: GoMap, depth: number): void {
    for (const pair of items) {
      if (!isPair(pair)) continue;
      if (isMergeKey(pair.key)) {
        this.merge(pair.value, out, depth + 1);
        continue;
      }
      const key = this.decode(pair.key, depth + 1);
      if (key instanceof GoMap || Array.isArray(key))
        throw new Error(`invalid map key${this.where(pair.key)}`);
      out.set(key, this.decode(pair.value, depth + 1));
    }
  }

  /** decode.go `merge`: a map, an alias of a map, or a list of those (applied last to first). */
  private merge(value: unknown, out: GoMap, depth: number): void {
    const wantMap = (): Error =>
      new Error(`map merge requires map or sequence of maps as the value${this.where(value)}`);
    const into = (node: unknown, d: number): void => {
      if (d > MAX_DEPTH) throw new Error(`nesting deeper than ${MAX_DEPTH} levels${this.where(node)}`);
      this.count();
      if (isAlias(node)) {
        const target = this.anchors.get(node);
        if (target !== undefined && !isMap(target)) throw wantMap();
        this.alias(node, d, (t) => into(t, d + 1));
      } else if (isMap(node)) this.mapping(node.items, out, d);
      else throw wantMap();
    };
    if (isMap(value) || isAlias(value)) into(value, depth);
    else if (isSeq(value)) {
      for (let i = value.items.length - 1; i >= 0; i--) {
        const item = value.items[i];
        if (isAlias(item)) {
          const target = this.anchors.get(item);
          if (target !== undefined && !isMap(target)) throw wantMap();
        } else if (!isMap(item)) throw wantMap();
        into(item, depth + 1);
      }
    } else throw wantMap();
  }
}

/** decode.go `allowedAliasRatio`. */
function allowedAliasRatio(decodeCount: number): number {
  if (decodeCount <= 400_000) return 0.99;
  if (decodeCount >= 4_000_000) return 0.1;
  return 0.99 - 0.89 * ((decodeCount - 400_000) / 3_600_000);
}

/** The scalar's text as the parser read it (before any tag resolution). */
function scalarText(node: Scalar): string {
  if (typeof node.source === "string") return node.source;
  return node.value === null || node.value === undefined ? "" : String(node.value);
}

/** decode.go `isMerge`: a `<<` key that is plain (or tagged `!` or `!!merge`); a quoted `"<<"` is a plain key. */
function isMergeKey(key: unknown): boolean {
  if (!isScalar(key) || scalarText(key) !== "<<") return false;
  if (key.tag === undefined) return key.type === undefined || key.type === Scalar.PLAIN;
  return key.tag === "!" || key.tag === MERGE_TAG;
}

/**
 * Each alias's node: the last node with that anchor before it in document order, as go-yaml's parser binds them
 * (one pass, so that expanding an alias never searches the document).
 */
function bindAliases(root: unknown): Map<unknown, Node> {
  const current = new Map<string, Node>();
  const bound = new Map<unknown, Node>();
  const visit = (node: unknown, depth: number): void => {
    if (depth > MAX_DEPTH) throw new Error(`nesting deeper than ${MAX_DEPTH} levels`);
    if (isAlias(node)) {
      checkAnchorName(node.source);
      const target = current.get(node.source);
      if (target !== undefined) bound.set(node, target);
      return;
    }
    if (isScalar(node) || isMap(node) || isSeq(node)) {
      // The anchor is defined before the node's children are read: an alias inside it refers to the node itself.
      if (node.anchor !== undefined) {
        checkAnchorName(node.anchor);
        current.set(node.anchor, node);
      }
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
  visit(root, 0);
  return bound;
}

/** libyaml reads anchor names of ASCII letters, digits, `_` and `-` only; anything else is a syntax error there. */
function checkAnchorName(name: string): void {
  if (!/^[0-9A-Za-z_-]+$/.test(name))
    throw new Error(`anchor name "${name}" is not valid for the engine (letters, digits, "_" and "-" only)`);
}

/** sigs.k8s.io/yaml `convertToJSONableObject` and `json.Marshal`: string keys, and no NaN or infinity. */
function toJson(value: GoValue, depth: number): unknown {
  if (depth > MAX_DEPTH) throw new Error(`nesting deeper than ${MAX_DEPTH} levels`);
  if (Array.isArray(value)) return value.map((v) => toJson(v, depth + 1));
  if (value instanceof GoMap) {
    const byKey = new Map<string, unknown[]>();
    for (const { key, value: v } of value.entries.values()) {
      const k = jsonKey(key);
      const converted = toJson(v, depth + 1);
      const seen = byKey.get(k);
      if (seen === undefined) byKey.set(k, [converted]);
      else seen.push(converted);
    }
    const obj: Record<string, unknown> = {};
    for (const [k, candidates] of byKey) {
      const first = candidates[0];
      const same = candidates.every((c) => JSON.stringify(c) === JSON.stringify(first));
      // Own data property even for "__proto__": the key is data, never the object's prototype.
      Object.defineProperty(obj, k, {
        value: same
          ? first
          : new Unreadable(
              `keys of different types spell "${k}", and the engine keeps one of them at random`,
            ),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return obj;
  }
  return scalarJson(value);
}

/** A decoded scalar as `json.Marshal` writes it; throws for NaN and infinities, which JSON has none of. */
export function scalarJson(value: GoScalar): unknown {
  switch (value.t) {
    case "null":
      return null;
    case "int":
    case "uint":
      return Number(value.v);
    case "float":
      if (!Number.isFinite(value.v)) throw new Error(`json: unsupported value: ${goFloatName(value.v)}`);
      return value.v;
    default:
      return value.v;
  }
}

function goFloatName(v: number): string {
  return Number.isNaN(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf";
}

/** A map key as sigs.k8s.io/yaml writes it (floats at float32 precision, as go-yaml's encoder does). */
function jsonKey(key: GoScalar): string {
  switch (key.t) {
    case "str":
      return key.v;
    case "int":
      return String(key.v);
    case "bool":
      return key.v ? "true" : "false";
    case "float":
      return float32Key(key.v);
    case "uint":
      throw new Error(`unsupported map key of type: uint64, key: ${String(key.v)}`);
    default:
      throw new Error("unsupported map key of type: <nil> (a null key)");
  }
}

/** strconv.FormatFloat(v, 'g', -1, 32), with go-yaml's `.inf`, `-.inf` and `.nan`. */
function float32Key(v: number): string {
  if (Number.isNaN(v)) return ".nan";
  if (v === Number.POSITIVE_INFINITY) return ".inf";
  if (v === Number.NEGATIVE_INFINITY) return "-.inf";
  const f = Math.fround(v);
  if (!Number.isFinite(f)) return f > 0 ? ".inf" : "-.inf";
  if (f === 0) return Object.is(f, -0) ? "-0" : "0";
  let digits = "";
  let exp = 0;
  for (let p = 1; p <= 9; p++) {
    const s = Math.abs(f).toExponential(p - 1);
    if (Math.fround(Number(s)) === Math.abs(f)) {
      const [m = "", e = "0"] = s.split("e");
      digits = m.replace(".", "");
      exp = Number(e);
      break;
    }
  }
  const sign = f < 0 ? "-" : "";
  if (exp < -4 || exp >= 6) {
    const mant = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const ae = Math.abs(exp);
    return `${sign}${mant}e${exp < 0 ? "-" : "+"}${ae < 10 ? "0" : ""}${ae}`;
  }
  if (exp < 0) return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
  const int = digits.slice(0, exp + 1).padEnd(exp + 1, "0");
  const frac = digits.slice(exp + 1);
  return `${sign}${int}${frac === "" ? "" : `.${frac}`}`;
}

/**
 * A parsed YAML document as the JSON the API server would receive. `source`, the text the document was parsed
 * from, lets the engine's reading of the raw text be checked too (line breaks and escapes YAML 1.1 reads differently)
 * and errors name their line (`firstLine`: the file's line where `source` starts). Throws where the engine's decoder
 * would.
 */
export function kubeYamlToJson(doc: Document, source?: string, firstLine = 1): unknown {
  const where: Where = (node) => {
    const range = (node as { range?: readonly number[] } | null)?.range;
    const offset = range?.[0];
    return source === undefined || offset === undefined
      ? ""
      : ` (line ${lineIn(source, offset) + firstLine - 1})`;
  };
  const version = doc.directives?.yaml;
  if (version?.explicit === true && version.version !== "1.1")
    throw new Error(
      `found incompatible YAML document: %YAML ${version.version} (the engine reads YAML 1.1 only)`,
    );
  if (source !== undefined) checkEngineText(doc, source, firstLine);
  const root = doc.contents;
  if (root === null || root === undefined) return null;
  const decoder = new Decoder(bindAliases(root), where);
  return toJson(decoder.decodeDocument(root), 0);
}
