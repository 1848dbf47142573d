/**
 * A KEDA ScaledObject's `spec.scaleTargetRef` (github.com/kedacore/keda/v2, the version crds.generated.ts pins;
 * controllers/keda scaledobject_controller.go, pkg/scaling/resolver): the operator scales the named object of the
 * ScaledObject's namespace through its /scale subresource (an apps/v1 Deployment when apiVersion and kind are unset)
 * with an HPA of up to maxReplicaCount. The object must be one whose replicas the readers price as its pods' (an apps
 * Deployment, StatefulSet or ReplicaSet, an Argo Rollout) and in the set, where its pods are judged and the budget
 * bound prices it at the ScaledObject's most replicas (policy/stack/autoscalers.ts); any other fails closed.
 */
import { isUnknown } from "../../workload";
import { at, field } from "../lenient";
import type { Resolver } from "./references";

/** The kinds whose /scale replicas the readers read as their pods' copies: group, kind. */
const TARGETS: readonly { group: string; kind: string }[] = [
  { group: "apps", kind: "Deployment" },
  { group: "apps", kind: "StatefulSet" },
  { group: "apps", kind: "ReplicaSet" },
  { group: "argoproj.io", kind: "Rollout" },
];

const text = (v: unknown, unset: string): unknown => (v === undefined || v === null || v === "" ? unset : v);

/** Checks the object a ScaledObject scales against the set. */
export function kedaReferences(kind: string, props: Record<string, unknown>, r: Resolver): void {
  if (kind !== "ScaledObject") return;
  const path = "spec.scaleTargetRef";
  const ref = at(props, path);
  const apiVersion = text(field(ref, "apiVersion"), "apps/v1");
  const k = text(field(ref, "kind"), "Deployment");
  if (isUnknown(ref) || isUnknown(apiVersion) || isUnknown(k)) {
    r.unknown.push(path);
    return;
  }
  const group =
    typeof apiVersion === "string" && apiVersion.includes("/") ? apiVersion.split("/")[0] : "core";
  const target = TARGETS.find((x) => x.group === group && x.kind === k);
  if (target === undefined) {
    r.unresolved.push({
      path,
      reason: `scales ${JSON.stringify(apiVersion)} ${JSON.stringify(k)}, not an apps Deployment, StatefulSet or ReplicaSet or an Argo Rollout whose replicas the budget bound prices: what it scales cannot be read`,
    });
    return;
  }
  const name = r.name(ref, path, target.kind);
  if (name !== undefined) r.lookup(target.group, target.kind, name, path, "scales");
}
