/** What HorizontalPodAutoscalers do to the budget bound: each raises its target's replicas up to maxReplicas. */
import { parseKubeType } from "../sources/kubernetes/workloads";
import { at, field, num } from "../sources/lenient";
import { isUnknown, UNKNOWN, type Val } from "../workload";
import type { StackResource } from "./types";

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
    const t = parseKubeType(r.type);
    if (t?.kind !== "HorizontalPodAutoscaler" || t.group !== "autoscaling") continue;
    const target = at(r.props, "spec.scaleTargetRef");
    const text = (v: unknown) => (typeof v === "string" ? v : "?");
    const key = `${namespaceOf(r) ?? "default"}/${text(field(target, "kind"))}/${text(field(target, "name"))}`;
    const max = num(at(r.props, "spec.maxReplicas"));
    const before = scaled.get(key);
    scaled.set(
      key,
      typeof max !== "number" || isUnknown(before)
        ? UNKNOWN
        : Math.max(max, typeof before === "number" ? before : 0),
    );
  }
  return scaled;
}
