/**
 * A Docker Engine API create body as the daemon reads it. The daemon decodes the body with Go's encoding/json into
 * `container.CreateRequest` (runconfig.decodeContainerConfig: a plain json.Decoder, unknown fields ignored), so:
 *
 * - an object key names a struct field case-insensitively: the exact name first, else the name under Unicode simple
 *   folding (`privileged`, `PRIVILEGED`, `ſecurityOpt` with U+017F, `Kernel…` with U+212A are the same fields);
 * - keys repeat, and each one decodes in document order into what the earlier ones left: a scalar is replaced, a
 *   struct or pointed-to struct is merged, a map gains entries, a list decodes element by element into the list it
 *   had (a shorter list keeps the longer one's old elements past its length for a later list to reuse), except
 *   that an empty list `[]` is a fresh slice, so nothing before it is reused;
 * - `null` empties a pointer, map or list and leaves a scalar or struct as it was;
 * - a value of the wrong type makes the daemon refuse the whole body (kept here as {@link Unreadable}, so the rules
 *   fail closed on it rather than reading it as absent);
 * - map keys are data (labels, sysctls, ports) and keep their spelling.
 *
 * A JavaScript object has lost the order of repeated keys, so scan reads bodies from the parsed document tree.
 */
import { isAlias, isMap, isScalar, isSeq, type Node as YamlNode } from "yaml";
import { isUnreadable, Unreadable } from "../../workload";
import { CONFIG_WRAPPER, type Shape, TOP_LEVEL_HOST_FIELDS } from "./schema";

/** A JSON value as its document wrote it: object members in order, repeated keys kept. */
export type JsonNode =
  | { readonly t: "object"; readonly members: readonly (readonly [string, JsonNode])[] }
  | { readonly t: "array"; readonly items: readonly JsonNode[] }
  | { readonly t: "string"; readonly v: string }
  | { readonly t: "number"; readonly v: number; readonly text: string }
  | { readonly t: "bool"; readonly v: boolean }
  | { readonly t: "null" }
  /** A value no JSON document holds (a preview unknown, an unreadable value): carried through as it is. */
  | { readonly t: "opaque"; readonly v: unknown };

/** A parsed `yaml` node (JSON is YAML) as a {@link JsonNode}, repeated keys in order. */
export function fromYaml(node: unknown): JsonNode {
  if (isMap(node)) {
    return {
      t: "object",
      members: node.items.map((p) => {
        const k = isScalar(p.key) ? p.key.value : p.key;
        return [typeof k === "string" ? k : String(k), fromYaml(p.value)] as const;
      }),
    };
  }
  if (isSeq(node)) return { t: "array", items: node.items.map(fromYaml) };
  if (isAlias(node)) return { t: "opaque", v: new Unreadable("a YAML alias stands where a value belongs") };
  if (isScalar(node)) {
    const v = node.value;
    if (v === null || v === undefined) return { t: "null" };
    if (typeof v === "string") return { t: "string", v };
    if (typeof v === "boolean") return { t: "bool", v };
    if (typeof v === "number") {
      const src = (node as YamlNode & { source?: unknown }).source;
      return { t: "number", v, text: typeof src === "string" ? src : String(v) };
    }
    return { t: "opaque", v: new Unreadable("a tagged or binary value stands where a JSON value belongs") };
  }
  return node === null || node === undefined ? { t: "null" } : { t: "opaque", v: node };
}

/** A plain JavaScript value as a {@link JsonNode}; markers (unknown, unreadable) stay opaque. */
export function fromValue(v: unknown): JsonNode {
  if (v === null || v === undefined) return { t: "null" };
  if (typeof v === "string") return { t: "string", v };
  if (typeof v === "boolean") return { t: "bool", v };
  if (typeof v === "number")
    return Number.isFinite(v) ? { t: "number", v, text: String(v) } : { t: "opaque", v };
  if (Array.isArray(v)) return { t: "array", items: v.map(fromValue) };
  const proto = typeof v === "object" ? Object.getPrototypeOf(v) : undefined;
  if (proto === Object.prototype || proto === null)
    return { t: "object", members: Object.entries(v).map(([k, x]) => [k, fromValue(x)] as const) };
  return { t: "opaque", v };
}

/** A key under Go's case folding, for the ASCII field names of the API: only `ſ` and `K` fold into ASCII. */
export function foldKey(k: string): string {
  let out = "";
  for (const ch of k) {
    if (ch === "\u017f") out += "S";
    else if (ch === "\u212a") out += "K";
    else if (ch >= "a" && ch <= "z") out += ch.toUpperCase();
    else out += ch;
  }
  return out;
}

/** The struct field a key decodes into: its exact name, else the one equal under folding. */
export function matchField(fields: Readonly<Record<string, Shape>>, key: string): string | undefined {
  if (Object.hasOwn(fields, key)) return key;
  const f = foldKey(key);
  return Object.keys(fields).find((name) => foldKey(name) === f);
}

/** What a Go value holds while the body decodes. */
type GoVal =
  | undefined
  | string
  | number
  | boolean
  | { readonly g: "struct"; readonly fields: Map<string, GoVal> }
  | { readonly g: "map"; readonly entries: Map<string, GoVal> }
  | { readonly g: "slice"; readonly backing: GoVal[]; len: number }
  | { readonly g: "refused"; readonly reason: string }
  | { readonly g: "opaque"; readonly v: unknown };

/** Why the daemon refuses the body being decoded (encoding/json reports the first type error after decoding all). */
let refusals: string[] = [];
/** Keys of the body being decoded that name no field of the claimed Engine API, by where they are. */
let unknownKeys: string[] = [];

function refusal(reason: string): GoVal {
  refusals.push(reason);
  return { g: "refused", reason };
}

function refused(what: string, n: JsonNode): GoVal {
  const got = n.t === "object" ? "an object" : n.t === "array" ? "a list" : `a ${n.t}`;
  return refusal(`the Engine refuses the body: ${got} stands where ${what} belongs`);
}

/** Go's zero value of a scalar shape (what an array element the body leaves out holds). */
function zero(s: Shape): GoVal {
  return s.k === "int" || s.k === "float" ? 0 : s.k === "bool" ? false : s.k === "string" ? "" : undefined;
}

/** A JSON node as plain JavaScript (an `interface{}` field holds any value). */
function plain(n: JsonNode): unknown {
  switch (n.t) {
    case "object":
      return Object.fromEntries(n.members.map(([k, v]) => [k, plain(v)]));
    case "array":
      return n.items.map(plain);
    case "null":
      return null;
    case "opaque":
    case "string":
    case "number":
    case "bool":
      return n.v;
  }
}

function describe(s: Shape): string {
  switch (s.k) {
    case "string":
    case "text":
    case "bytes":
      return "a text";
    case "any":
      return "a value";
    case "bool":
      return "true or false";
    case "int":
    case "float":
      return "a number";
    case "ptr":
      return describe(s.to);
    case "struct":
    case "map":
      return "an object";
    default:
      return "a list";
  }
}

/** Go's strconv parse of a JSON number literal into an integer field of `bits` (no fraction, no exponent). */
function goInt(text: string, bits: number, unsigned: boolean): number | undefined {
  if (!(unsigned ? /^\d+$/ : /^-?\d+$/).test(text)) return undefined;
  const n = BigInt(text);
  const max = unsigned ? 2n ** BigInt(bits) - 1n : 2n ** BigInt(bits - 1) - 1n;
  const min = unsigned ? 0n : -(2n ** BigInt(bits - 1));
  return n < min || n > max ? undefined : Number(n);
}

function decodeSlice(n: JsonNode, of: Shape, prev: GoVal, path: string): GoVal {
  if (n.t !== "array") return refused("a list", n);
  // encoding/json keeps the old backing array: element i decodes into what was there. A list with no items is the
  // exception: decode.go's array() sets a fresh `MakeSlice(0, 0)`, so a later list starts from zeroed elements.
  const backing = typeof prev === "object" && prev.g === "slice" && n.items.length > 0 ? prev.backing : [];
  n.items.forEach((item, i) => {
    backing[i] = decode(item, of, backing[i], `${path}[${i}]`);
  });
  return { g: "slice", backing, len: n.items.length };
}

/** Where a key sits, for messages: `HostConfig.Foo`, `Labels["a.b"]`. */
function at(path: string, key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key)
    ? path === ""
      ? key
      : `${path}.${key}`
    : `${path}[${JSON.stringify(key)}]`;
}

/** Spellings of one port key seen in the body being decoded, by its canonical form. */
let portSpellings = new Map<string, string>();

/**
 * A map key of a type that parses it, canonical, or undefined when the type refuses it. `network.Port` (ParsePort):
 * a number of 0 to 65535, then `/` and a protocol, lower-cased, `tcp` when none; empty is the zero port. Older daemons
 * keep keys as written, so two spellings of one port (`80`, `80/tcp`) are two entries there and one here: the body
 * means different things on different daemons, and is refused.
 */
function mapKey(type: string, k: string, entries: Map<string, GoVal>, path: string): string | undefined {
  if (type !== "network.Port") return k;
  if (k === "") return k;
  const cut = k.indexOf("/");
  const num = cut < 0 ? k : k.slice(0, cut);
  const proto = cut < 0 ? "" : k.slice(cut + 1);
  if (!/^\d+$/.test(num) || Number(num) > 65535) return undefined;
  const key = `${Number(num)}/${proto === "" ? "tcp" : proto.toLowerCase()}`;
  const seen = portSpellings.get(`${path}\u0000${key}`);
  if (seen !== undefined && seen !== k && entries.has(key))
    refusals.push(
      `${path} names port ${key} twice (${JSON.stringify(seen)} and ${JSON.stringify(k)}): the claimed Engine API reads them as one entry, daemons up to v28 as two, so the container differs by daemon`,
    );
  portSpellings.set(`${path}\u0000${key}`, k);
  return key;
}

/** Decodes `n` (at `path`) into a Go value of shape `s` that held `prev`, as encoding/json does. */
export function decode(n: JsonNode, s: Shape, prev: GoVal, path = ""): GoVal {
  if (n.t === "opaque") return { g: "opaque", v: n.v };
  // The daemon refuses a body with any value of the wrong type, whatever later keys say.
  if (typeof prev === "object" && prev.g === "refused") return prev;
  if (n.t === "null") {
    // null empties what can be nil and leaves everything else alone.
    return s.k === "ptr" || s.k === "map" || s.k === "slice" || s.k === "strslice" ? undefined : prev;
  }
  switch (s.k) {
    case "ptr":
      return decode(n, s.to, prev, path);
    case "string":
    case "text":
    case "bytes":
      // A type's own text decoding (an IP address, base64) is read as the text: a value it refuses runs nothing.
      return n.t === "string" ? n.v : refused(describe(s), n);
    case "any":
      return { g: "opaque", v: plain(n) };
    case "bool":
      return n.t === "bool" ? n.v : refused(describe(s), n);
    case "float":
      return n.t === "number" ? n.v : refused(describe(s), n);
    case "int": {
      if (n.t !== "number") return refused(describe(s), n);
      const v = goInt(n.text, s.bits, s.unsigned);
      return v === undefined
        ? refusal(`the Engine refuses the body: ${n.text} is not a whole number it takes here`)
        : v;
    }
    case "strslice":
      if (n.t === "string") return { g: "slice", backing: [n.v], len: 1 };
      if (n.t !== "array") return refused("a list of texts", n);
      // StrSlice's own UnmarshalJSON decodes into a fresh list.
      return decodeSlice(n, { k: "string" }, undefined, path);
    case "slice":
      return decodeSlice(n, s.of, prev, path);
    case "array": {
      if (n.t !== "array") return refused("a list", n);
      // A Go array always holds its length: elements the list leaves out are zero, those past it are dropped.
      const backing = Array.from({ length: s.len }, (_, i) => {
        const item = n.items[i];
        return item === undefined ? zero(s.of) : decode(item, s.of, undefined, `${path}[${i}]`);
      });
      return { g: "slice", backing, len: backing.length };
    }
    case "map": {
      if (n.t !== "object") return refused("an object", n);
      const entries = typeof prev === "object" && prev.g === "map" ? prev.entries : new Map<string, GoVal>();
      // Each entry decodes into a fresh element: a repeated map key replaces, it never merges.
      for (const [k, v] of n.members) {
        const key = s.key === undefined ? k : mapKey(s.key, k, entries, path);
        if (key === undefined)
          return refusal(`the Engine refuses the body: ${JSON.stringify(k)} is not a ${s.key} key`);
        entries.set(key, decode(v, s.of, undefined, at(path, k)));
      }
      return { g: "map", entries };
    }
    case "struct": {
      if (n.t !== "object") return refused("an object", n);
      const fields = typeof prev === "object" && prev.g === "struct" ? prev.fields : new Map<string, GoVal>();
      for (const [k, v] of n.members) {
        // A mark of an earlier decoding (scan decodes the document, the adapter its result) is not a key.
        if (v.t === "opaque" && v.v instanceof UnknownFields) continue;
        const name = matchField(s.fields, k);
        const fs = name === undefined ? undefined : s.fields[name];
        if (name === undefined || fs === undefined) {
          // The claimed daemon ignores it; a newer or different one may not, so it is kept to be judged.
          unknownKeys.push(at(path, k));
          continue;
        }
        fields.set(name, decode(v, fs, fields.get(name), at(path, name)));
      }
      return { g: "struct", fields };
    }
  }
}

function setOwn(o: Record<string, unknown>, k: string, v: unknown): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

/** The decoded value as plain JavaScript with canonical field names; nil and untouched fields are absent. */
export function materialize(v: GoVal): unknown {
  if (v === undefined || typeof v !== "object") return v;
  switch (v.g) {
    case "opaque":
      return v.v;
    case "refused":
      return new Unreadable(v.reason);
    case "slice":
      return v.backing.slice(0, v.len).map(materialize);
    case "map":
    case "struct": {
      const o: Record<string, unknown> = {};
      for (const [k, x] of v.g === "map" ? v.entries : v.fields) {
        const m = materialize(x);
        if (m !== undefined) setOwn(o, k, m);
      }
      return o;
    }
  }
}

/**
 * The create body the daemon would decode from `n`, with canonical field names at every level. A body that is not
 * an object is refused by the daemon: it comes back {@link Unreadable}; a preview unknown stays unknown.
 */
export function engineBody(n: JsonNode): unknown {
  if (n.t === "opaque") return n.v;
  const { value: decoded, refused: first, unknown } = engineDecode(n, CONFIG_WRAPPER);
  const body = withTopLevelHostConfig(decoded);
  // A later key may hide the value the daemon choked on; the body as a whole is still refused.
  if (typeof body !== "object" || body === null || isUnreadable(body)) return body;
  if (first !== undefined) setOwn(body as Record<string, unknown>, REFUSED_KEY, new Unreadable(first));
  const unknownPaths = unknown.filter((p) => !QUERY_KEYS.has(p));
  // A body decoded before (scan decodes the document, the adapter decodes its result again) keeps its marks.
  if (n.t === "object")
    for (const [k, v] of n.members) {
      if ((k === REFUSED_KEY || k === TOP_LEVEL_KEY) && v.t === "opaque" && isUnreadable(v.v))
        setOwn(body as Record<string, unknown>, k, v.v);
      if (k === UNKNOWN_FIELDS_KEY && v.t === "opaque" && v.v instanceof UnknownFields)
        unknownPaths.unshift(...v.v.paths);
    }
  if (unknownPaths.length > 0)
    setOwn(
      body as Record<string, unknown>,
      UNKNOWN_FIELDS_KEY,
      new UnknownFields([...new Set(unknownPaths)]),
    );
  return body;
}

/**
 * `n` decoded by encoding/json into a Go value of shape `s`, as plain JavaScript with canonical field names, and the
 * first reason the decoder refuses it (a value of the wrong type), if any.
 */
export function engineDecode(
  n: JsonNode,
  s: Shape,
): { value: unknown; refused: string | undefined; unknown: readonly string[] } {
  refusals = [];
  unknownKeys = [];
  portSpellings = new Map();
  const value = materialize(decode(n, s, undefined));
  const [refused] = refusals;
  const unknown = unknownKeys;
  refusals = [];
  unknownKeys = [];
  return { value, refused, unknown };
}

/**
 * The keys of a body that name no field of the Engine API the project claims, by where they are. The claimed daemon
 * ignores them, but a body is judged for any daemon it may be sent to, and one that reads them is not one the rules
 * know: sandbox-disallow-unjudged-fields refuses them.
 */
export class UnknownFields {
  constructor(readonly paths: readonly string[]) {}
}

/** Where a body names the keys of {@link UnknownFields} (no API field has this name). */
export const UNKNOWN_FIELDS_KEY = "(fields not in the claimed Engine API)";

/**
 * Keys of the create call's query string, which the project's client (dockerode, docker-modem) takes from the same
 * object as the body: the container's name and the image's platform. Written exactly so; the query is
 * case-sensitive.
 */
const QUERY_KEYS = new Set(["name", "platform"]);

/** Fields that `getHostConfig` copies from the top level into a HostConfig that leaves them zero. */
const COPIED = ["Memory", "MemorySwap", "CpuShares", "CpusetCpus", "VolumeDriver"];

const isZero = (v: unknown) => v === undefined || v === 0 || v === "";

/**
 * The HostConfig the daemon applies, from a body decoded as {@link CONFIG_WRAPPER} (docker v20.10.24 ... v26.1.5
 * runconfig `getHostConfig`, the toolkit's docker.io): with no `HostConfig` (absent or null) the top-level fields are
 * the HostConfig; with one, only `Memory`, `MemorySwap`, `CpuShares`, `CpusetCpus` and `VolumeDriver` are copied
 * into it where it leaves them zero, and the rest of the top level is ignored. Docker v27 and later ignore the top
 * level, so a body whose top-level fields take effect means different things on different daemons: it carries an
 * unreadable value at {@link TOP_LEVEL_KEY}, and the rules fail closed on it. Decoding the result again changes
 * nothing (the top-level fields have moved).
 */
function withTopLevelHostConfig(decoded: unknown): unknown {
  if (typeof decoded !== "object" || decoded === null || isUnreadable(decoded)) return decoded;
  const body = decoded as Record<string, unknown>;
  const top: Record<string, unknown> = {};
  for (const k of TOP_LEVEL_HOST_FIELDS)
    if (Object.hasOwn(body, k)) {
      top[k] = body[k];
      delete body[k];
    }
  const cpuset = body.Cpuset;
  delete body.Cpuset;
  const present = Object.keys(top);
  const inner = body.HostConfig;
  let effective: string[] = [];
  if (present.length > 0) {
    if (inner === undefined) {
      setOwn(body, "HostConfig", top);
      effective = present;
    } else if (typeof inner === "object" && inner !== null && !isUnreadable(inner)) {
      const hc = inner as Record<string, unknown>;
      for (const k of COPIED)
        if (!isZero(top[k]) && isZero(hc[k])) {
          setOwn(hc, k, top[k]);
          effective.push(k);
        }
    }
  }
  const hc = body.HostConfig;
  if (
    typeof cpuset === "string" &&
    cpuset !== "" &&
    typeof hc === "object" &&
    hc !== null &&
    !isUnreadable(hc)
  )
    if (isZero((hc as Record<string, unknown>).CpusetCpus))
      setOwn(hc as Record<string, unknown>, "CpusetCpus", cpuset);
  const [first] = effective;
  if (first !== undefined)
    setOwn(
      body,
      TOP_LEVEL_KEY,
      new Unreadable(
        `HostConfig fields at the top level of the body (${effective.join(", ")}) apply on Docker up to v26 (API 1.43; the toolkit's docker.io 20.10) and are ignored from v27, so the container differs by daemon; write them under HostConfig`,
      ),
    );
  return body;
}

/** Where a body whose top-level HostConfig fields take effect says so (no API field has this name). */
export const TOP_LEVEL_KEY = "(HostConfig fields at the top level)";

/** Where a body the daemon refuses says why (no API field has this name). */
export const REFUSED_KEY = "(refused by the Engine)";

/** {@link engineBody} of a plain value (a body built in code, a Pulumi input). */
export function engineBodyOf(v: unknown): unknown {
  return engineBody(fromValue(v));
}
