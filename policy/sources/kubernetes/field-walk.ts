/**
 * The one walk of a value against its pinned schema and a verdict table, shared by the built-in kinds' pod fields
 * (fields.ts) and the operators' CRD fields (crd-fields.ts): every key of a struct is a field of the schema, with a
 * verdict; a key outside the schema fails closed where it is written (the API server and the operators decode field
 * names exactly as written, and a newer release may act on it); a refused field fails when set to anything but Go's
 * zero value or a value its verdict allows; any other field is walked into. Lists, maps and pointers are walked
 * through; a core Kubernetes value inside an operator's schema goes to the walk's `core` reader.
 */
import { isUnknown } from "../../workload";
import type { Shape } from "../docker/shape";
import { join } from "../lenient";
import { isGoZero, type UnjudgedField, type VerdictTable, verdictFor } from "../verdict";

/** What differs between the walks: how a field is named, looked up, and explained. */
export interface FieldWalk {
  readonly table: VerdictTable;
  /** A field's name in findings, from its schema path (`PodSpec.hostNetwork`, `RayCluster.headGroupSpec`). */
  readonly name: (schemaPath: string) => string;
  /** The key of a field in the table, from its schema path. */
  readonly key: (schemaPath: string) => string;
  /** Why a key outside the schema fails closed. */
  readonly notAField: string;
  /**
   * The findings inside a core Kubernetes value (a `core` leaf of an operator's schema) at `path`, or undefined for a
   * core type the claimed tables do not hold (then the field's own verdict decided alone). Without a reader, a core
   * leaf is a field with no verdict.
   */
  readonly core?: (type: string, value: unknown, path: string) => UnjudgedField[] | undefined;
  /**
   * Why a value of the wrong kind where a list or an object belongs fails closed (`what`: "a list", "an object"), for
   * walks that refuse it; without, such a value is passed over (the API server refuses it before any controller
   * reads it).
   */
  readonly malformed?: (what: string, value: unknown) => string;
  readonly out: UnjudgedField[];
}

const isPlain = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;

/** A value of the wrong kind where a list or an object belongs, for walks that refuse it. */
function malformed(w: FieldWalk, v: unknown, what: string, schema: string, path: string): void {
  if (w.malformed !== undefined) w.out.push({ path, field: w.name(schema), reason: w.malformed(what, v) });
}

/** Walks `v`, written at `path`, against the shape `s` at the schema path `schema`. */
export function walkFields(
  w: FieldWalk,
  v: unknown,
  s: Shape,
  schema: string,
  path: string,
  depth = 0,
): void {
  if (v === undefined || v === null || isUnknown(v) || depth > 64) return;
  switch (s.k) {
    case "ptr":
      walkFields(w, v, s.to, schema, path, depth);
      return;
    case "slice":
    case "array":
      if (!Array.isArray(v)) malformed(w, v, "a list", schema, path);
      else
        v.forEach((x, i) => {
          walkFields(w, x, s.of, `${schema}[]`, join(path, i), depth + 1);
        });
      return;
    case "map":
      if (!isPlain(v)) malformed(w, v, "an object", schema, path);
      else
        for (const [k, x] of Object.entries(v))
          walkFields(w, x, s.of, `${schema}{}`, join(path, k), depth + 1);
      return;
    case "core": {
      const found = w.core?.(s.type, v, path);
      if (w.core === undefined)
        w.out.push({
          path,
          field: w.name(schema),
          reason: `the project has no verdict for ${w.name(schema)}`,
        });
      else if (found !== undefined) w.out.push(...found);
      else refusedInside(w, v, schema, path);
      return;
    }
    case "struct":
      if (!isPlain(v)) {
        if (schema !== "") malformed(w, v, "an object", schema, path);
        return;
      }
      for (const [k, x] of Object.entries(v)) {
        const fieldSchema = schema === "" ? k : `${schema}.${k}`;
        const at = join(path, k);
        const name = w.name(fieldSchema);
        const f = Object.hasOwn(s.fields, k) ? s.fields[k] : undefined;
        if (f === undefined) {
          w.out.push({ path: at, field: name, reason: w.notAField });
          continue;
        }
        const verdict = verdictFor(w.table, w.key(fieldSchema));
        if (verdict === undefined) {
          w.out.push({ path: at, field: name, reason: `the project has no verdict for ${name}` });
          continue;
        }
        if (verdict.v === "refused") {
          if (isGoZero(x) || isUnknown(x) || verdict.allows?.(x) === true) continue;
          // A map judged entry by entry: each entry that does not pass is its own finding, at its key.
          const each = verdict.allowsEntry;
          if (each !== undefined && isPlain(x)) {
            for (const [key, entry] of Object.entries(x))
              if (!each(key, entry))
                w.out.push({ path: join(at, key), field: `${name}{}`, reason: `${key}: ${verdict.why}` });
          } else w.out.push({ path: at, field: name, reason: verdict.why });
          continue;
        }
        walkFields(w, x, f, fieldSchema, at, depth + 1);
      }
      return;
    default:
      return;
  }
}

/**
 * Refused verdicts the table keeps on fields inside a core value the claimed tables do not hold (a KubeRay head
 * Service's `metadata.annotations`): each such field set to a value its verdict does not allow fails where it is.
 */
function refusedInside(w: FieldWalk, v: unknown, schema: string, path: string): void {
  const prefix = `${w.key(schema)}.`;
  for (const [key, verdict] of Object.entries(w.table)) {
    if (!key.startsWith(prefix) || verdict.v !== "refused") continue;
    const rest = key.slice(prefix.length).split(".");
    let x: unknown = v;
    for (const k of rest) x = isPlain(x) && Object.hasOwn(x, k) ? x[k] : undefined;
    if (x === undefined || isGoZero(x) || isUnknown(x) || verdict.allows?.(x) === true) continue;
    w.out.push({
      path: rest.reduce((p, k) => join(p, k), path),
      field: w.name(`${schema}.${rest.join(".")}`),
      reason: verdict.why,
    });
  }
}
