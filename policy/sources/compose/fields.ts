/**
 * The keys of a loaded Compose service (or job, or `pre_start` hook) that fail closed: keys the claimed Compose
 * schema does not have (compose-go refuses them; `x-` extensions are data) and keys whose verdict is refused
 * (verdicts.ts), each where it is written.
 */
import { isGoZero, type UnjudgedField, verdictFor } from "../verdict";
import { COMPOSE_DEFS, COMPOSE_SPEC } from "./schema.generated";
import { COMPOSE_SERVICE_VERDICTS } from "./verdicts";

const isMap = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** The keys each kind of entry may have, by the schema's definition. */
const KEYS: Readonly<Record<string, ReadonlySet<string>>> = Object.fromEntries(
  (["service", "job", "pre_start_hook"] as const).map((d) => [
    d,
    new Set((COMPOSE_DEFS[d] ?? []).filter((p) => !p.includes(".") && !p.includes("[]"))),
  ]),
);

/** Every refused or unknown key of one entry (`kind` is the schema's definition), written under `base`. */
export function unjudgedComposeFields(
  entry: Record<string, unknown>,
  kind: "service" | "job" | "pre_start_hook",
  base: string,
): UnjudgedField[] {
  const out: UnjudgedField[] = [];
  const keys = KEYS[kind] ?? new Set<string>();
  for (const [k, v] of Object.entries(entry)) {
    if (k.startsWith("x-")) continue;
    if (!keys.has(k)) {
      out.push({
        path: `${base}.${k}`,
        field: k,
        reason: `it is not a key of a Compose ${kind.replace(/_/g, " ")} in ${COMPOSE_SPEC.module} ${COMPOSE_SPEC.version}, the Compose the project claims`,
      });
      continue;
    }
    const verdict = verdictFor(COMPOSE_SERVICE_VERDICTS, k);
    if (verdict === undefined) {
      out.push({ path: `${base}.${k}`, field: k, reason: `the project has no verdict for ${k}` });
      continue;
    }
    if (verdict.v === "refused" && !isGoZero(v) && verdict.allows?.(v) !== true)
      out.push({ path: `${base}.${k}`, field: k, reason: verdict.why });
  }
  // Refused keys inside a judged one (`build.ssh`).
  for (const [p, verdict] of Object.entries(COMPOSE_SERVICE_VERDICTS)) {
    if (!p.includes(".") || verdict.v !== "refused") continue;
    const [head, ...rest] = p.split(".");
    let v: unknown = head === undefined ? undefined : entry[head];
    for (const part of rest) v = isMap(v) ? v[part] : undefined;
    if (!isGoZero(v) && verdict.allows?.(v) !== true)
      out.push({ path: `${base}.${p}`, field: p, reason: verdict.why });
  }
  return out;
}
