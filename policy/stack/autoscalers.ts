/**
 * What autoscalers do to the budget bound: a HorizontalPodAutoscaler raises its target's replicas up to
 * maxReplicas; a KEDA ScaledObject (keda.sh, github.com/kedacore/keda/v2) makes such an HPA over its
 * `scaleTargetRef` (a Deployment when the kind is unset) up to maxReplicaCount (100 when unset, `GetHPAMaxReplicas`),
 * keeps at least minReplicaCount, and scales the target to its `autoscaling.keda.sh/paused-replicas` annotation
 * itself, past the HPA (pkg/scaling/executor): the most of those.
 */
import { parseKubeType } from "../sources/kubernetes/workloads";
import { at, field, num } from "../sources/lenient";
import { isUnknown, UNKNOWN, type Val } from "../workload";
import type { StackResource } from "./types";

/** The target (`Kind/name`) and the most replicas an autoscaler gives it, or undefined for any other object. */
function scaling(r: StackResource): { target: unknown; kind: unknown; max: Val<number> } | undefined {
  const t = parseKubeType(r.type);
  if (t?.kind === "HorizontalPodAutoscaler" && t.group === "autoscaling") {
    const target = at(r.props, "spec.scaleTargetRef");
    return { target, kind: field(target, "kind"), max: num(at(r.props, "spec.maxReplicas")) };
  }
  if (t?.kind !== "ScaledObject" || t.group !== "keda.sh") return undefined;
  const target = at(r.props, "spec.scaleTargetRef");
  const kind = field(target, "kind");
  const counts = [
    num(at(r.props, "spec.maxReplicaCount")) ?? 100,
    num(at(r.props, "spec.minReplicaCount")) ?? 0,
    num(field(at(r.props, "metadata.annotations"), "autoscaling.keda.sh/paused-replicas")) ?? 0,
  ];
  const max = counts.some(isUnknown)
    ? UNKNOWN
    : counts.every((c) => typeof c === "number")
      ? Math.max(...(counts as number[]))
      : undefined;
  return { target, kind: kind === undefined || kind === null || kind === "" ? "Deployment" : kind, max };
}

/**
 * The most replicas an autoscaler of the stack gives each target, by `namespace/Kind/name` (UNKNOWN when a maximum
 * is not known yet).
 */
export function autoscaledReplicas(
  resources: readonly StackResource[],
  namespaceOf: (r: StackResource) => string | undefined | "unknown",
): Map<string, Val<number>> {
  const scaled = new Map<string, Val<number>>();
  for (const r of resources) {
    const s = scaling(r);
    if (s === undefined) continue;
    const text = (v: unknown) => (typeof v === "string" ? v : "?");
    const key = `${namespaceOf(r) ?? "default"}/${text(s.kind)}/${text(field(s.target, "name"))}`;
    const before = scaled.get(key);
    scaled.set(
      key,
      typeof s.max !== "number" || isUnknown(before)
        ? UNKNOWN
        : Math.max(s.max, typeof before === "number" ? before : 0),
    );
  }
  return scaled;
}
