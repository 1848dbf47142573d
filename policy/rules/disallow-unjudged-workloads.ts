import { violation } from "./helpers";
import { defineRule, type Finding } from "./types";

/**
 * Nothing that may start a container passes unjudged: a Helm release or chart, a YAML config group, a
 * kustomization, a patch of a live object, a swarm service, or an unknown kind that names a container image but
 * carries no pod spec the rules can read. The pack cannot see what they will run, so it fails closed on them.
 */
export const disallowUnjudgedWorkloads = defineRule({
  id: "sandbox-disallow-unjudged-workloads",
  description:
    "No object that may create workloads the rules cannot read (Kubernetes kinds with no verdict, mutating admission, Helm releases, charts, config groups, patches).",
  mission: false,
  enforcementLevel: "mandatory",
  severity: "high",
  // CWE-636, not failing securely: what the rules cannot read must not pass as if judged.
  crosswalk: { cwe: ["636"] },
  subjects: ["unjudged"],
  defaults: {},
  remediationSteps:
    "Render what the object deploys (`helm template`, `kustomize build`) and declare those objects so the rules judge each one, or exempt this object with a reason.",
  check(s) {
    const out: Finding[] = [];
    if (s.subject !== "unjudged") return out;
    out.push(
      violation(
        `${s.origin.kind} "${s.origin.name}" may create workloads the rules cannot judge: ${s.reason}`,
      ),
    );
    return out;
  },
});
