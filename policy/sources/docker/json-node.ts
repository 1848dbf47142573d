/**
 * A JSON document as the Engine's decoder sees it: object members in order and repeated keys kept, which a JavaScript
 * object loses. Built from the parsed YAML tree (JSON is YAML) or from a plain value.
 */
import { isAlias, isMap, isScalar, isSeq, type Node as YamlNode } from "yaml";
import { Unreadable } from "../../workload";

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
