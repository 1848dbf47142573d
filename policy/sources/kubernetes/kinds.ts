/**
 * The verdict of an object's kind (kind-verdict.ts): the built-in kinds of the claimed version
 * (kinds-builtin.ts), the operators' kinds the readers rebuild pods from or read as entry points (carriers.ts,
 * crd-pods.ts, service.ts), policy engines and operators' configuration (kinds-operators.ts). A kind none of them
 * names has no verdict, and fails closed.
 */
import { isObj } from "../lenient";
import { opaqueKindReason } from "../unjudged";
import { carrierCustomKinds, readsCarrierKind } from "./carriers";
import {
  conditionalReason,
  isBuiltInKind,
  type KindVerdict,
  type ResourceKind,
  tableVerdict,
  unknownKindReason,
} from "./kind-verdict";
import { BUILTIN_KIND_VERDICTS } from "./kinds-builtin";
import { INERT_GROUPS, OPERATOR_KINDS } from "./kinds-operators";
import { OPERATOR_EXPOSURE_KINDS } from "./operator-exposure";
import { BUILTIN_KINDS } from "./schema.generated";
import { isIngressType } from "./service";
import type { KubeType } from "./sites";
import { TUNNEL_KINDS } from "./tunnel-exposure";

/**
 * The custom resources whose pods crd-pods.ts, crd-spark-kubevirt.ts and crd-rollouts.ts rebuild or read
 * (test/policy/sources/kubernetes kinds.test.ts holds the list to what they read).
 */
export const REBUILT: Readonly<Record<string, readonly string[]>> = {
  "argoproj.io": [
    "Workflow",
    "WorkflowTemplate",
    "ClusterWorkflowTemplate",
    "CronWorkflow",
    "AnalysisTemplate",
    "ClusterAnalysisTemplate",
    "AnalysisRun",
  ],
  "tekton.dev": ["Task", "TaskRun", "Pipeline", "PipelineRun"],
  "sparkoperator.k8s.io": ["SparkApplication", "ScheduledSparkApplication"],
  "kubevirt.io": [
    "VirtualMachine",
    "VirtualMachineInstance",
    "VirtualMachineInstanceReplicaSet",
    "VirtualMachinePool",
  ],
  "pool.kubevirt.io": ["VirtualMachinePool"],
};

/** Kinds whose objects hold other objects a controller creates (embedded.ts): each held object is judged. */
export const EMBEDDING: Readonly<Record<string, readonly string[]>> = {
  "argoproj.io": ["Sensor"],
  "triggers.tekton.dev": ["TriggerTemplate"],
};

const listed = (table: Readonly<Record<string, readonly string[]>>, t: KubeType): boolean =>
  Object.hasOwn(table, t.group) && (table[t.group] ?? []).includes(t.kind);

/** The verdict of a kind, or undefined when the project has none (the object then fails closed). */
export function kindVerdict(t: KubeType): KindVerdict | undefined {
  if (isBuiltInKind(t)) return tableVerdict(BUILTIN_KIND_VERDICTS, t);
  const operator = tableVerdict(OPERATOR_KINDS, t);
  if (operator !== undefined) return operator;
  if (Object.hasOwn(INERT_GROUPS, t.group)) return { v: "inert", why: INERT_GROUPS[t.group] ?? "" };
  const opaque = opaqueKindReason(t);
  if (opaque !== undefined) return { v: "unjudged", why: opaque };
  if (readsCarrierKind(t) || listed(REBUILT, t))
    return { v: "read", by: "the pod carriers' reader (policy/sources/kubernetes/carriers.ts, crd-pods.ts)" };
  if (listed(EMBEDDING, t))
    return {
      v: "read",
      by: "the embedded objects' reader (policy/sources/kubernetes/embedded.ts): each object it holds",
    };
  if (listed(TUNNEL_KINDS, t))
    return { v: "read", by: "the exposure reader (policy/sources/kubernetes/tunnel-exposure.ts)" };
  if (listed(OPERATOR_EXPOSURE_KINDS, t))
    return {
      v: "unjudged",
      why: "its operator runs pods from flattened settings the project pins no schema for (its exposure settings are judged too)",
    };
  if (isIngressType(`kubernetes:${t.group}/${t.version}:${t.kind}`))
    return { v: "read", by: "the entry points' reader (policy/sources/kubernetes/service.ts)" };
  return undefined;
}

/**
 * The resource name the API server registers for a kind: its lower-case name in the plural, as the API machinery
 * guesses it (`UnsafeGuessKindToResource`: `…s` -> `…ses`, `…y` -> `…ies`, else `…s`; `endpoints` as it is), the
 * plural every CRD of the tables declares too.
 */
export function kindResource(kind: string): string {
  const k = kind.toLowerCase();
  if (k === "endpoints") return k;
  if (k.endsWith("s")) return `${k}es`;
  if (k.endsWith("y")) return `${k.slice(0, -1)}ies`;
  return `${k}s`;
}

let catalogue: Map<string, Map<string, string>> | undefined;

/** group -> resource -> kind, for every kind some table names (built-in, operators', carriers', readers'). */
function kindCatalogue(): Map<string, Map<string, string>> {
  if (catalogue !== undefined) return catalogue;
  const out = new Map<string, Map<string, string>>();
  const add = (group: string, kind: string) => {
    const g = out.get(group) ?? new Map<string, string>();
    g.set(kindResource(kind), kind);
    out.set(group, g);
  };
  for (const table of [BUILTIN_KINDS, OPERATOR_KINDS])
    for (const [group, kinds] of Object.entries(table))
      for (const kind of Object.keys(kinds)) add(group, kind);
  for (const table of [REBUILT, EMBEDDING, TUNNEL_KINDS, OPERATOR_EXPOSURE_KINDS])
    for (const [group, kinds] of Object.entries(table)) for (const kind of kinds) add(group, kind);
  for (const { group, kind } of carrierCustomKinds()) add(group, kind);
  catalogue = out;
  return out;
}

/** The kinds an RBAC rule's resource (its subresource cut off) serves in a group, or in every group for `*`. */
export function resourceKinds(group: string, resource: string): ResourceKind[] {
  const name = resource.split("/")[0] ?? "";
  const all = kindCatalogue();
  const groups = group === "*" ? [...all.keys()] : [group === "" ? "core" : group];
  return groups.flatMap((g) => {
    const kind = all.get(g)?.get(name);
    if (kind !== undefined)
      return [{ group: g, kind, verdict: kindVerdict({ group: g, version: "", kind }) }];
    // A group whose every kind is inert (Gatekeeper's constraints, one kind per template).
    return Object.hasOwn(INERT_GROUPS, g)
      ? [{ group: g, kind: name, verdict: { v: "inert", why: INERT_GROUPS[g] ?? "" } as const }]
      : [];
  });
}

/** Why an object fails closed by its kind alone (no verdict, an unjudged one, or a setting its verdict names). */
export function kindReason(t: KubeType, props: unknown): string | undefined {
  const verdict = kindVerdict(t);
  if (verdict === undefined) return unknownKindReason(t);
  const conditional = conditionalReason(verdict, props, resourceKinds);
  if (conditional !== undefined) return conditional;
  return t.group === "apiextensions.k8s.io" && t.kind === "CustomResourceDefinition"
    ? schemaDefaults(props)
    : undefined;
}

/** The first `default` in a structural schema (a path), depth-limited; a `default` under `properties` is a field's. */
function firstDefault(schema: unknown, path: string, depth = 0): string | undefined {
  if (!isObj(schema) || depth > 40) return undefined;
  if (Object.hasOwn(schema, "default")) return path || "the schema";
  for (const [k, v] of Object.entries(schema)) {
    if (k === "properties" && isObj(v)) {
      for (const [name, sub] of Object.entries(v)) {
        const found = firstDefault(sub, path === "" ? name : `${path}.${name}`, depth + 1);
        if (found !== undefined) return found;
      }
    } else if (k === "items" || k === "additionalProperties") {
      const found = firstDefault(v, `${path}[]`, depth + 1);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/**
 * A CustomResourceDefinition whose schema defaults fields of a kind the rules read: the API server writes those
 * defaults into every object of the kind (on create and on read), after the rules judged the object as written.
 */
function schemaDefaults(props: unknown): string | undefined {
  const spec = isObj(props) && isObj(props.spec) ? props.spec : {};
  const names = isObj(spec.names) ? spec.names : {};
  if (typeof spec.group !== "string" || typeof names.kind !== "string") return undefined;
  if (kindVerdict({ group: spec.group, version: "", kind: names.kind })?.v !== "read") return undefined;
  const schemas = [
    ...(Array.isArray(spec.versions) ? spec.versions : []).map((v) =>
      isObj(v) && isObj(v.schema) ? v.schema.openAPIV3Schema : undefined,
    ),
    isObj(spec.validation) ? spec.validation.openAPIV3Schema : undefined,
  ];
  for (const schema of schemas) {
    const at = firstDefault(schema, "");
    if (at !== undefined)
      return `its schema defaults ${at} of ${names.kind} (${spec.group}), a kind the rules read: the API server writes the default into every such object after the rules judged it`;
  }
  return undefined;
}
