/**
 * The pod a stack rule prices or counts for a resource: its own view, or, for an Argo Rollout whose pods are the
 * template of the Deployment, ReplicaSet or PodTemplate its `workloadRef` names (../sources/kubernetes/
 * references-rollouts.ts), that template under the rollout's own replicas, when the set holds the object. Without
 * it a rollout of a thousand replicas over a Deployment scaled to zero would cost nothing. Only a Rollout: a
 * Tekton run or an Argo Workflow that references a template runs the pods of an object priced on its own.
 */
import { RefIndex, resolveReferences } from "../sources/kubernetes/references";
import { parseKubeType } from "../sources/kubernetes/sites";
import { adaptResources } from "../sources/subject";
import type { Subject } from "../workload";
import type { StackResource } from "./types";

/** The view of each resource, with a rollout's referenced workload put in place. */
export function referencedWorkloads(
  resources: readonly StackResource[],
): (r: StackResource) => Subject | undefined {
  const index = new RefIndex(resources);
  return (r) => {
    if (r.subject?.subject === "workload") return r.subject;
    const t = parseKubeType(r.type);
    if (t?.group !== "argoproj.io" || t.kind !== "Rollout") return r.subject;
    const res = resolveReferences(r.type, r.props, index);
    if (res === undefined || res.used.length === 0) return r.subject;
    return adaptResources(r.type, res.props, r.name).find((s) => s.subject === "workload") ?? r.subject;
  };
}
