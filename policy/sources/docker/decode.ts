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
import { Unreadable } from "../../workload";
import type { JsonNode } from "./json-node";
import type { Shape } from "./schema";

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

export function setOwn(o: Record<string, unknown>, k: string, v: unknown): void {
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
