/**
 * The fields of a decoded Engine API body that no rule may pass in silence: keys the claimed API does not have
 * (the decoder keeps them, body.ts {@link UNKNOWN_FIELDS_KEY}) and fields whose verdict is refused (verdicts.ts),
 * each where it is written. sandbox-disallow-unjudged-fields turns them into findings.
 */
import { isUnknown } from "../../workload";
import { isGoZero, type UnjudgedField, type VerdictTable, verdictFor } from "../verdict";
import { UNKNOWN_FIELDS_KEY, UnknownFields } from "./decode";
import { CREATE_REQUEST, ENGINE_API } from "./schema";
import type { Shape } from "./shape";
import { CONTAINER_CREATE_VERDICTS } from "./verdicts";

const isPlain = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;

const shown = (path: string, key: string): string =>
  /^[A-Za-z_][A-Za-z0-9_]*$/.test(key)
    ? path === ""
      ? key
      : `${path}.${key}`
    : `${path}[${JSON.stringify(key)}]`;

/** Refused fields of `v` (of shape `s`, at schema path `schema`, written at `path`) that a body sets. */
function walk(
  v: unknown,
  s: Shape,
  table: VerdictTable,
  schema: string,
  path: string,
  out: UnjudgedField[],
): void {
  if (v === undefined || v === null || isUnknown(v)) return;
  switch (s.k) {
    case "ptr":
      walk(v, s.to, table, schema, path, out);
      return;
    case "slice":
    case "array":
      if (Array.isArray(v))
        v.forEach((x, i) => {
          walk(x, s.of, table, `${schema}[]`, `${path}[${i}]`, out);
        });
      return;
    case "map":
      if (isPlain(v))
        for (const [k, x] of Object.entries(v)) walk(x, s.of, table, `${schema}{}`, shown(path, k), out);
      return;
    case "struct":
      if (!isPlain(v)) return;
      for (const [k, x] of Object.entries(v)) {
        const f = s.fields[k];
        if (f === undefined) continue;
        const fieldSchema = schema === "" ? k : `${schema}.${k}`;
        const at = shown(path, k);
        const verdict = verdictFor(table, fieldSchema);
        if (verdict === undefined) {
          out.push({ path: at, field: fieldSchema, reason: `the project has no verdict for ${fieldSchema}` });
          continue;
        }
        if (verdict.v === "refused") {
          if (!isGoZero(x) && !isUnknown(x) && verdict.allows?.(x) !== true)
            out.push({ path: at, field: fieldSchema, reason: verdict.why });
          continue;
        }
        walk(x, f, table, fieldSchema, at, out);
      }
      return;
    default:
      return;
  }
}

/** Every field of a container create body (as body.ts decodes it) that fails closed, with why. */
export function unjudgedContainerFields(body: unknown): UnjudgedField[] {
  const out: UnjudgedField[] = [];
  if (!isPlain(body)) return out;
  const unknown = body[UNKNOWN_FIELDS_KEY];
  if (unknown instanceof UnknownFields)
    for (const p of unknown.paths)
      out.push({
        path: p,
        field: p,
        reason: `it is not a field of Engine API ${ENGINE_API.apiVersion}, the version the project claims (${ENGINE_API.module} ${ENGINE_API.version}): a daemon that reads it runs something the rules never judged`,
      });
  walk(body, CREATE_REQUEST, CONTAINER_CREATE_VERDICTS, "", "", out);
  return out;
}
