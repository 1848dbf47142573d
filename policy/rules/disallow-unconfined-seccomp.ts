import { isUnknown } from "../workload";
import { label, unchecked, violation } from "./helpers";
import { defineRule, type Finding } from "./types";

/**
 * Seccomp is never turned off: no `Unconfined` profile (field or the old annotations), no Docker
 * `seccomp=unconfined`. With `requireExplicit`, Kubernetes containers must also name RuntimeDefault or Localhost
 * (PSA restricted), since an absent profile runs unconfined on most clusters.
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
      requireExplicit: {
        type: "boolean",
        description:
          "Also require Kubernetes containers to set RuntimeDefault or Localhost explicitly (PSA restricted).",
        default: false,
      },
    },
  },
  defaults: { requireExplicit: false },
  remediationSteps:
    "Remove the Unconfined profile; set `seccompProfile: {type: RuntimeDefault}` (Kubernetes) or drop `seccomp=unconfined` (Docker).",
  check(s, config) {
    if (s.subject !== "workload") return [];
    const out: Finding[] = [];
    for (const c of s.containers) {
      if (c.seccomp === "Unconfined")
        out.push(violation(`${label(c)} runs with seccomp disabled (${c.seccompSource})`, c.path));
      else if (isUnknown(c.seccomp))
        out.push(unchecked(`the seccomp profile of ${label(c)}`, c.path, c.seccomp));
      else if (config.requireExplicit && (c.seccomp === undefined || c.seccomp === "Other")) {
        out.push(
          violation(`${label(c)} does not set a seccomp profile (RuntimeDefault or Localhost)`, c.path),
        );
      }
    }
    return out;
  },
});
