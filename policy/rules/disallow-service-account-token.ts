import { isUnknown } from "../workload";
import { label, unchecked, violation } from "./helpers";
import { defineRule, type Finding } from "./types";

/** A task pod gets no Kubernetes API credential: no automounted token, no projected token or pod certificate. */
export const disallowServiceAccountToken = defineRule({
  id: "sandbox-disallow-service-account-token",
  description:
    "Pods set automountServiceAccountToken: false and mount no projected service-account token or pod certificate.",
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
    "Set `automountServiceAccountToken: false` in the pod spec and remove serviceAccountToken and podCertificate projections.",
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
        if (m.type !== "projected") continue;
        const sources = m.projectedSources ?? [];
        // `podCertificate`: the kubelet mints a private key and a certificate the signer issues to the pod's
        // identity, a credential of the pod as the token is.
        for (const [source, what] of [
          ["serviceAccountToken", "a projected service-account token"],
          ["podCertificate", "a projected pod certificate and its private key"],
        ] as const)
          if (sources.includes(source))
            out.push(violation(`${label(c)} mounts ${what} (volume "${m.volume ?? "?"}")`, m.path));
      }
    }
    return out;
  },
});
