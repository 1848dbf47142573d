/**
 * A Go type as encoding/json sees it: what the daemon decodes a request body into. The tables in
 * schema.generated.ts are written in these terms by the generator (toolchain/schemas), from the Engine API's own
 * Go types.
 */
export type Shape =
  | { readonly k: "string" }
  | { readonly k: "bool" }
  | { readonly k: "int"; readonly bits: 8 | 16 | 32 | 64; readonly unsigned: boolean }
  | { readonly k: "float" }
  | { readonly k: "ptr"; readonly to: Shape }
  | { readonly k: "struct"; readonly fields: Readonly<Record<string, Shape>> }
  /** Keys are data (labels, sysctls), or of a type that parses them (`network.Port`: `80`, `80/tcp`). */
  | { readonly k: "map"; readonly of: Shape; readonly key?: string }
  | { readonly k: "slice"; readonly of: Shape }
  /** A fixed-length Go array (`ConsoleSize [2]uint`). */
  | { readonly k: "array"; readonly len: number; readonly of: Shape }
  /** A list of texts, or one text read as a one-element list (`strslice.StrSlice`'s own UnmarshalJSON). */
  | { readonly k: "strslice" }
  /** A type with its own UnmarshalText (`netip.Addr`, `HardwareAddr`): a JSON text, parsed by the type. */
  | { readonly k: "text"; readonly type: string }
  /** `[]byte`: a base64 JSON text. */
  | { readonly k: "bytes" }
  /** `interface{}`: any JSON value. */
  | { readonly k: "any" }
  /**
   * A core Kubernetes type inside an operator's CRD (`core/v1.PodTemplateSpec`, `meta/v1.Time`): not expanded in
   * the CRD's table, its fields are those of the claimed Kubernetes version (crds.generated.ts).
   */
  | { readonly k: "core"; readonly type: string };

export const string: Shape = { k: "string" };
export const bool: Shape = { k: "bool" };
export const float: Shape = { k: "float" };
export const bytes: Shape = { k: "bytes" };
export const any: Shape = { k: "any" };
export const strslice: Shape = { k: "strslice" };
const int = (bits: 8 | 16 | 32 | 64, unsigned: boolean): Shape => ({ k: "int", bits, unsigned });
export const int8 = int(8, false);
export const int16 = int(16, false);
export const int32 = int(32, false);
export const int64 = int(64, false);
export const uint8 = int(8, true);
export const uint16 = int(16, true);
export const uint32 = int(32, true);
export const uint64 = int(64, true);
export const text = (type: string): Shape => ({ k: "text", type });
export const core = (type: string): Shape => ({ k: "core", type });
export const ptr = (to: Shape): Shape => ({ k: "ptr", to });
export const struct = (fields: Record<string, Shape>): Shape => ({ k: "struct", fields });
export const map = (of: Shape, key?: string): Shape =>
  key === undefined ? { k: "map", of } : { k: "map", of, key };
export const slice = (of: Shape): Shape => ({ k: "slice", of });
export const array = (len: number, of: Shape): Shape => ({ k: "array", len, of });

/** The fields of a struct shape (through pointers); throws for any other shape, which is a table's mistake. */
export function fieldsOf(s: Shape): Readonly<Record<string, Shape>> {
  const t = s.k === "ptr" ? s.to : s;
  if (t.k !== "struct") throw new Error(`not a struct shape: ${t.k}`);
  return t.fields;
}

/**
 * Every field path a shape holds, as the verdict tables write them: struct fields joined by `.`, a list's or an
 * array's element as `[]`, a map's values as `{}` (map keys are data, not fields). Paths of structs are listed
 * before their fields.
 */
export function fieldPaths(s: Shape, base = ""): string[] {
  switch (s.k) {
    case "ptr":
      return fieldPaths(s.to, base);
    case "slice":
    case "array":
      return fieldPaths(s.of, `${base}[]`);
    case "map":
      return fieldPaths(s.of, `${base}{}`);
    case "struct":
      return Object.entries(s.fields).flatMap(([k, f]) => {
        const p = base === "" ? k : `${base}.${k}`;
        return [p, ...fieldPaths(f, p)];
      });
    default:
      return [];
  }
}
