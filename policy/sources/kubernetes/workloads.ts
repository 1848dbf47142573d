/**
 * Every Kubernetes pod carrier -> workload views, one per pod it runs. Where the pods are is carriers.ts's job
 * (built-in kinds in any group, custom resources by group, anything else by shape); each pod is read by pod.ts,
 * its containers by container.ts, with pod-level security settings inherited the way the kubelet applies them
 * (security.ts).
 */
import type { WorkloadView } from "../../workload";
import { at, noTaint, str, type TaintCheck } from "../lenient";
import { podSites } from "./carriers";
import { adaptPod } from "./pod";
import { remapView } from "./remap";
import { parseKubeType } from "./sites";

export { isPodCarrierType, POD_CARRIER_KINDS, podSites } from "./carriers";
export { type KubeType, type PodSite, parseKubeType } from "./sites";

/**
 * Adapts every pod a carrier runs (plain values; preview unknowns as `UNKNOWN`): one view per pod, named
 * `<name>/<where>` when there are several. Returns undefined when the object runs no pod the rules can find.
 */
export function adaptKubernetesWorkloads(
  type: string,
  props: unknown,
  name: string,
  tainted: TaintCheck = noTaint,
): WorkloadView[] | undefined {
  const t = parseKubeType(type);
  const sites = podSites(type, props);
  if (t === undefined || sites === undefined || sites.length === 0) return undefined;
  // The pods run in the carrier's namespace; a pod rebuilt from a custom resource does not carry it.
  const namespace = str(at(props, "metadata.namespace"));
  return sites.map((site) => {
    const own = sites.length > 1 ? `${name}/${site.where}` : name;
    const remap = site.remap;
    if (remap === undefined) return adaptPod(type, t.kind, site, own, tainted, namespace);
    return remapView(
      adaptPod(type, t.kind, site, own, (p) => tainted(remap(p)), namespace),
      remap,
    );
  });
}

/** The first pod of a carrier, for callers that judge one view per resource. */
export function adaptKubernetesWorkload(
  type: string,
  props: unknown,
  name: string,
  tainted: TaintCheck = noTaint,
): WorkloadView | undefined {
  return adaptKubernetesWorkloads(type, props, name, tainted)?.[0];
}
