import { isUnknown } from "../workload";
import { label, unchecked, violation } from "./helpers";
import { defineRule, type Finding } from "./types";

/** A task pod gets no Kubernetes API credential: no automounted token, no projected token volume. */
export const disallowServiceAccountToken = defineRule({
  id: "sandbox-disallow-service-account-token",
  description: "Pods set automountServiceAccountToken: false and mount no projected service-account token.",
  mission: false,
  enforcementLevel: "advisory",
  severity: "medium",
  crosswalk: {
    kyverno: ["restrict-automount-sa-token"],
    checkov: ["CKV_K8S_38"],
    kubesec: ["AutomountServiceAccountToken"],
  },
  subjects: ["workload"],
  defaults: {},
  remediationSteps:
    "Set `automountServiceAccountToken: false` in the pod spec and remove serviceAccountToken projections.",
  check(s) {
    if (s.subject !== "workload" || s.origin.backend !== "kubernetes") return [];
    const out: Finding[] = [];
    const a = s.automountServiceAccountToken;
    const path = `${s.podPath}.automountServiceAccountToken`;
    if (isUnknown(a)) out.push(unchecked("automountServiceAccountToken", path, a));
    else if (a !== false)
      out.push(
        violation("the pod mounts a service-account token (automountServiceAccountToken is not false)", path),
      );
    for (const c of s.containers) {
      for (const m of c.mounts) {
        if (m.type === "projected" && (m.projectedSources ?? []).includes("serviceAccountToken")) {
          out.push(
            violation(
              `${label(c)} mounts a projected service-account token (volume "${m.volume ?? "?"}")`,
              m.path,
            ),
          );
        }
      }
    }
    return out;
  },
});
