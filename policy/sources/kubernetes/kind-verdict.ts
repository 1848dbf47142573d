/**
 * Every Kubernetes kind has a verdict, as every field does: an object of a kind the rules read, judge with its set,
 * judge where pods use it, or know to be inert passes through the rules; an object of a kind that changes pods after
 * they were judged, or of a kind the project pins no schema for, fails closed (`sandbox-disallow-unjudged-workloads`;
 * `--allow-unjudged <Kind>` or an exemption names it). The built-in kinds of the claimed version are in
 * kinds-builtin.ts, generated kinds checked by a test; operators' kinds in kinds-operators.ts.
 */
import { isObj } from "../lenient";
import { BUILTIN_KINDS, KUBERNETES_API } from "./schema.generated";
import type { KubeType } from "./sites";

/**
 * - **read**: a reader turns the object into the views the rules judge (`by` names it);
 * - **stack**: the stack rules named judge it with the rest of its set;
 * - **through**: it reaches a task only through a pod that names it, and is judged there (`unless`: settings that
 *   reach every pod of a controller instead);
 * - **inert**: it cannot start a pod, open a route or reach the host (`unless` names the settings that make an
 *   object of the kind fail closed after all);
 * - **unjudged**: it fails closed, for the reason given.
 */
export type KindVerdict =
  | { readonly v: "read"; readonly by: string }
  | { readonly v: "stack"; readonly rules: readonly string[] }
  | { readonly v: "through"; readonly why: string; readonly unless?: Condition }
  | { readonly v: "inert"; readonly why: string; readonly unless?: Condition }
  | { readonly v: "unjudged"; readonly why: string };

/** One API resource an RBAC rule names, with the kind it serves and that kind's verdict (none: no verdict). */
export interface ResourceKind {
  readonly group: string;
  readonly kind: string;
  readonly verdict: KindVerdict | undefined;
}

/**
 * The kinds an RBAC rule's resource name serves in an API group (`*`: every group a table knows), by the plural the
 * API server registers for the kind; an empty list when no table knows the resource there.
 */
export type ResourceKinds = (group: string, resource: string) => readonly ResourceKind[];

/** The settings of an object that make it fail closed; `kinds` reads the resources an RBAC rule names. */
export type Condition = (props: unknown, kinds: ResourceKinds) => string | undefined;

/** The verdict table of one family of kinds: group -> kind -> verdict. */
export type KindTable = Readonly<Record<string, Readonly<Record<string, KindVerdict>>>>;

/** A table entry, own keys only (a kind named `constructor` is not a verdict). */
export function tableVerdict(table: KindTable, t: KubeType): KindVerdict | undefined {
  const group = Object.hasOwn(table, t.group) ? table[t.group] : undefined;
  return group !== undefined && Object.hasOwn(group, t.kind) ? group[t.kind] : undefined;
}

/** True when the claimed Kubernetes version serves the kind in that group (any version of the group). */
export function isBuiltInKind(t: KubeType): boolean {
  const group = Object.hasOwn(BUILTIN_KINDS, t.group) ? BUILTIN_KINDS[t.group] : undefined;
  return group !== undefined && Object.hasOwn(group, t.kind);
}

/** Why an object of a kind with no verdict fails closed. */
export function unknownKindReason(t: KubeType): string {
  return `${t.kind} of ${t.group === "core" ? "the core group" : t.group} is neither a kind of Kubernetes ${KUBERNETES_API.kubernetes} nor one of an operator whose schema the project pins: its controller may create pods, routes or host access that no rule sees`;
}

/** Why an object of a kind whose verdict is conditional fails closed, or undefined. */
export function conditionalReason(
  verdict: KindVerdict,
  props: unknown,
  kinds: ResourceKinds,
): string | undefined {
  if (verdict.v === "unjudged") return verdict.why;
  if ((verdict.v === "inert" || verdict.v === "through") && verdict.unless !== undefined)
    return verdict.unless(isObj(props) ? props : {}, kinds);
  return undefined;
}
