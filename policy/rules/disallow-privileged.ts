import { isUnknown } from "../workload";
import { label, unchecked, violation } from "./helpers";
import { defineRule, type Finding } from "./types";

/** A privileged container has every capability, every device and no seccomp or LSM confinement. */
export const disallowPrivileged = defineRule({
  id: "sandbox-disallow-privileged",
  description: "No container runs privileged.",
  mission: false,
  enforcementLevel: "mandatory",
  severity: "critical",
  crosswalk: {
    cis: ["5.5"],
    psa: ["privileged"],
    kyverno: ["disallow-privileged-containers"],
    checkov: ["CKV_K8S_16"],
    kubeLinter: ["privileged-container"],
    kubesec: ["Privileged"],
  },
  subjects: ["workload"],
  defaults: {},
  remediationSteps:
    "Remove `privileged: true`; grant nothing in its place (a task needs no capability the hardened template lacks).",
  check(s) {
    if (s.subject !== "workload") return [];
    const out: Finding[] = [];
    for (const c of s.containers) {
      if (c.privileged === true) out.push(violation(`${label(c)} runs privileged`, c.path));
      else if (isUnknown(c.privileged))
        out.push(unchecked(`privileged on ${label(c)}`, c.path, c.privileged));
    }
    return out;
  },
});
