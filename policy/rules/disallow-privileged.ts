import { isUnknown } from "../workload";
import { label, unchecked, violation } from "./helpers";
import { defineRule, type Finding } from "./types";

/**
 * A privileged container has every capability, every device and no seccomp or LSM confinement. A Windows
 * HostProcess container (`windowsOptions.hostProcess: true`, pod or container) runs as a process on the host itself,
 * in the host's network: Pod Security baseline's `windowsHostProcess`.
 */
export const disallowPrivileged = defineRule({
  id: "sandbox-disallow-privileged",
  description: "No container runs privileged or as a Windows host process.",
  mission: false,
  enforcementLevel: "mandatory",
  severity: "critical",
  crosswalk: {
    cis: ["5.5"],
    psa: ["privileged", "windowsHostProcess"],
    kyverno: ["disallow-privileged-containers"],
    checkov: ["CKV_K8S_16"],
    kubeLinter: ["privileged-container"],
    kubesec: ["Privileged"],
  },
  subjects: ["workload"],
  defaults: {},
  remediationSteps:
    "Remove `privileged: true` and `windowsOptions.hostProcess: true`; grant nothing in their place (a task needs no capability the hardened template lacks).",
  check(s) {
    if (s.subject !== "workload") return [];
    const out: Finding[] = [];
    const hostProcess = s.pod?.hostProcess;
    if (hostProcess === true)
      out.push(
        violation("the pod sets windowsOptions.hostProcess: true: it runs on the Windows host", s.pod?.path),
      );
    else if (isUnknown(hostProcess))
      out.push(unchecked("the pod's windowsOptions.hostProcess", s.pod?.path, hostProcess));
    for (const c of s.containers) {
      if (c.privileged === true) out.push(violation(`${label(c)} runs privileged`, c.path));
      else if (isUnknown(c.privileged))
        out.push(unchecked(`privileged on ${label(c)}`, c.path, c.privileged));
      if (c.hostProcess === true)
        out.push(
          violation(`${label(c)} sets windowsOptions.hostProcess: true: it runs on the Windows host`, c.path),
        );
      else if (isUnknown(c.hostProcess))
        out.push(unchecked(`windowsOptions.hostProcess of ${label(c)}`, c.path, c.hostProcess));
    }
    return out;
  },
});
