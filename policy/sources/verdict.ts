/**
 * A field's verdict: what the project says of one field of an engine's input schema. Every field of every pinned
 * schema has one (test/policy/sources/<engine>/verdicts.test.ts walks the schema and fails on a field without):
 *
 * - **inert**: it cannot weaken a wall; the reason says why in one line.
 * - **judged**: the rules named read it (through the container or exposure view). `hostile` is a body fragment that
 *   sets the field so that one of those rules refuses it (under `config`, the pack config, for a rule that judges
 *   the field only when configured); the conformance test proves the rule does, and, with `control`, that the same
 *   fragment with the field left benign passes.
 * - **refused**: the project does not support it: a body that sets it is a finding of
 *   sandbox-disallow-unjudged-fields. `allows` says which values are as good as unset (the engine does nothing with
 *   them); the Go zero value (absent, `""`, `0`, `false`, an empty list or map) always is.
 *
 * A verdict on a field covers the fields under it that have none of their own.
 */
export type Verdict =
  | { readonly v: "inert"; readonly why: string }
  | {
      readonly v: "judged";
      readonly rules: readonly string[];
      readonly hostile: unknown;
      readonly control?: unknown;
      readonly config?: Readonly<Record<string, object>>;
    }
  | {
      readonly v: "refused";
      readonly why: string;
      readonly allows?: (value: unknown) => boolean;
      /** For a map: which entries pass, so that each one that does not is its own finding, at its key. */
      readonly allowsEntry?: (key: string, value: unknown) => boolean;
    };

export const inert = (why: string): Verdict => ({ v: "inert", why });
export const judged = (
  rules: readonly string[],
  hostile: unknown,
  more: { readonly control?: unknown; readonly config?: Readonly<Record<string, object>> } = {},
): Verdict => ({ v: "judged", rules, hostile, ...more });
export const refused = (why: string, allows?: (value: unknown) => boolean): Verdict =>
  allows === undefined ? { v: "refused", why } : { v: "refused", why, allows };

/** A refused map whose entries pass one by one: a map of passing entries passes, each other entry is a finding. */
export const refusedEntries = (
  why: string,
  allowsEntry: (key: string, value: unknown) => boolean,
): Verdict => ({
  v: "refused",
  why,
  allows: (v) =>
    typeof v === "object" &&
    v !== null &&
    !Array.isArray(v) &&
    Object.entries(v).every(([k, x]) => allowsEntry(k, x)),
  allowsEntry,
});

/** A table of verdicts by field path (`HostConfig.Mounts[].Type`, `NetworkingConfig.EndpointsConfig{}.Aliases`). */
export type VerdictTable = Readonly<Record<string, Verdict>>;

/** The verdict that covers `path`: its own, else its nearest enclosing field's. */
export function verdictFor(table: VerdictTable, path: string): Verdict | undefined {
  let p = path;
  for (;;) {
    const v = table[p];
    if (v !== undefined && Object.hasOwn(table, p)) return v;
    const cut = Math.max(p.lastIndexOf("."), p.lastIndexOf("[]"), p.lastIndexOf("{}"));
    if (cut <= 0) return undefined;
    p = p.slice(0, cut);
  }
}

/** Go's zero value, as a decoded body holds it: what the engine reads as "not set". */
export function isGoZero(v: unknown): boolean {
  if (v === undefined || v === null || v === "" || v === 0 || v === false) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype)
    return Object.values(v as object).every(isGoZero);
  return false;
}

/** One field a body sets that the project refuses, or that the claimed schema does not have. */
export interface UnjudgedField {
  /** Where it is written, with map keys and list indices (`HostConfig.Links`, `NetworkingConfig.EndpointsConfig.n.Aliases`). */
  readonly path: string;
  /** The field as the schema names it (`HostConfig.Links`, `NetworkingConfig.EndpointsConfig{}.Aliases`). */
  readonly field: string;
  readonly reason: string;
}

/**
 * The top-level inputs of a resource that its table refuses, set to a value the engine acts on (props outside the
 * table are outputs or other versions' inputs). `kind` prefixes the field's name (`docker.Network`).
 */
export function refusedInputs(table: VerdictTable, kind: string, props: unknown): UnjudgedField[] {
  if (typeof props !== "object" || props === null) return [];
  const out: UnjudgedField[] = [];
  for (const [k, v] of Object.entries(props)) {
    const verdict = Object.hasOwn(table, k) ? verdictFor(table, k) : undefined;
    if (verdict?.v === "refused" && !isGoZero(v) && verdict.allows?.(v) !== true)
      out.push({ path: k, field: `${kind}.${k}`, reason: verdict.why });
  }
  return out;
}
