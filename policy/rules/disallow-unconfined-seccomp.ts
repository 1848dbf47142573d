import { type ContainerView, isUnknown } from "../workload";
import { label, unchecked, violation } from "./helpers";
import { defineRule, type Finding } from "./types";

/** Why a Kubernetes container is not confined by a profile the kubelet applies, or undefined when it is. */
function kubernetesProfileProblem(c: ContainerView): string | undefined {
  if (c.seccomp === undefined)
    return "sets no seccomp profile, so it runs Unconfined unless the kubelet enables seccompDefault (set seccompProfile RuntimeDefault or Localhost at pod or container level)";
  if (c.seccomp === "Other")
    return "sets a seccomp profile type that is neither RuntimeDefault nor Localhost";
  if (c.seccompSource.startsWith("annotation "))
    return `gets its seccomp profile only from the ${c.seccompSource}, which Kubernetes ignores since v1.27 (set securityContext.seccompProfile)`;
  return undefined;
}

/**
 * Seccomp is never turned off: no `Unconfined` profile (field or the old annotations), no Docker
 * `seccomp=unconfined`.
 *
 * The platforms' baselines differ. Docker applies its default profile unless told otherwise, so an absent option is
 * confined. On Kubernetes an absent profile is Unconfined: the kubelet applies RuntimeDefault only with
 * `seccompDefault: true` in its own configuration, which no manifest shows. So with `requireExplicit` (the default,
 * as Pod Security `restricted`) a Kubernetes container must get RuntimeDefault or Localhost from its own
 * `securityContext.seccompProfile` or the pod's; the old seccomp annotations do not count, since Kubernetes ignores
 * them from v1.27 (the API server only warns "non-functional in v1.27+").
 */
export const disallowUnconfinedSeccomp = defineRule({
  id: "sandbox-disallow-unconfined-seccomp",
  description: "No container runs with seccomp disabled (Unconfined / seccomp=unconfined).",
  mission: false,
  enforcementLevel: "mandatory",
  severity: "high",
  crosswalk: {
    cis: ["5.22"],
    psa: ["seccompProfile_baseline", "seccompProfile_restricted"],
    kyverno: ["restrict-seccomp", "restrict-seccomp-strict"],
    checkov: ["CKV_K8S_31"],
    kubesec: ["SeccompUnconfined", "SeccompAny"],
  },
  subjects: ["workload"],
  configSchema: {
    properties: {
      judgePodLevel: {
        type: "boolean",
        description:
          "Judge the pod's own securityContext values even where every container overrides them, as Pod Security does (the baseline, restricted and sandbox presets set it).",
        default: false,
      },
      requireExplicit: {
        type: "boolean",
        description:
          "Require Kubernetes containers to get RuntimeDefault or Localhost from the seccompProfile field, at pod or container level (PSA restricted). Set false only when every node's kubelet runs with seccompDefault: true.",
        default: true,
      },
    },
  },
  defaults: { requireExplicit: true, judgePodLevel: false },
  remediationSteps:
    "Remove the Unconfined profile; set `seccompProfile: {type: RuntimeDefault}` (Kubernetes) or drop `seccomp=unconfined` (Docker).",
  check(s, config) {
    if (s.subject !== "workload") return [];
    const out: Finding[] = [];
    // Under judgePodLevel a pod-level Unconfined is refused even where every container sets its own profile, as Pod
    // Security baseline checks the pod's value by itself (only the pod sandbox runs with it).
    if (
      config.judgePodLevel &&
      s.pod?.seccomp === "Unconfined" &&
      s.containers.every((c) => c.seccomp !== "Unconfined")
    )
      out.push(violation("the pod's securityContext sets seccompProfile Unconfined", s.pod.path));
    for (const c of s.containers) {
      if (c.seccomp === "Unconfined")
        out.push(violation(`${label(c)} runs with seccomp disabled (${c.seccompSource})`, c.path));
      else if (isUnknown(c.seccomp))
        out.push(unchecked(`the seccomp profile of ${label(c)}`, c.path, c.seccomp));
      else if (config.requireExplicit && s.origin.backend === "kubernetes") {
        const missing = kubernetesProfileProblem(c);
        if (missing !== undefined) out.push(violation(`${label(c)} ${missing}`, c.path));
      }
    }
    return out;
  },
});
