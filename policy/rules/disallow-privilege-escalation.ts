import { canonicalCapability } from "../../components/model";
import { isUnknown, type WorkloadView } from "../workload";
import { containerFieldPath, label, unchecked, violation } from "./helpers";
import { defineRule, type Edit, type Finding } from "./types";

/** True when the container adds SYS_ADMIN (or ALL): either lets a process regain privileges. */
function addsSysAdmin(raw: readonly string[]): boolean {
  return raw.some((x) => {
    const c = canonicalCapability(x);
    return c === "SYS_ADMIN" || c === "ALL";
  });
}

/**
 * No process may gain more privileges than its parent: Kubernetes `allowPrivilegeEscalation: false`, Docker
 * `no-new-privileges`. `privileged: true` and an added SYS_ADMIN imply escalation whatever the flag says.
 */
export const disallowPrivilegeEscalation = defineRule({
  id: "sandbox-disallow-privilege-escalation",
  description:
    "Every container blocks privilege escalation (allowPrivilegeEscalation: false / no-new-privileges) and neither runs privileged nor adds SYS_ADMIN.",
  mission: false,
  enforcementLevel: "mandatory",
  severity: "high",
  crosswalk: {
    cis: ["5.26"],
    psa: ["allowPrivilegeEscalation"],
    kyverno: ["disallow-privilege-escalation"],
    checkov: ["CKV_K8S_20"],
    kubeLinter: ["privilege-escalation-container"],
    kubesec: ["AllowPrivilegeEscalation"],
  },
  subjects: ["workload"],
  defaults: {},
  remediationSteps:
    "Kubernetes: set `securityContext.allowPrivilegeEscalation: false` on every container. Docker: add `no-new-privileges:true` to `securityOpts`.",
  check(s) {
    if (s.subject !== "workload") return [];
    const out: Finding[] = [];
    const docker = s.origin.backend !== "kubernetes";
    for (const c of s.containers) {
      if (c.privileged === true) {
        out.push(violation(`${label(c)} runs privileged, which always allows privilege escalation`, c.path));
        continue;
      }
      const add = c.capabilities.added;
      if (addsSysAdmin(add.raw)) {
        out.push(violation(`${label(c)} adds SYS_ADMIN, which allows privilege escalation`, c.path));
        continue;
      }
      const ape = c.allowPrivilegeEscalation;
      if (ape === false) continue;
      if (isUnknown(ape)) {
        out.push(
          unchecked(
            docker ? `securityOpts of ${label(c)}` : `allowPrivilegeEscalation of ${label(c)}`,
            c.path,
            ape,
          ),
        );
        continue;
      }
      out.push(
        violation(
          docker
            ? `${label(c)} does not set no-new-privileges in securityOpts`
            : `${label(c)} does not set allowPrivilegeEscalation: false${ape === true ? " (it is true)" : ""}`,
          c.path,
        ),
      );
    }
    return out;
  },
  remediate(s) {
    if (s.subject !== "workload") return [];
    const w: WorkloadView = s;
    const edits: Edit[] = [];
    for (const c of w.containers) {
      if (c.allowPrivilegeEscalation === false || isUnknown(c.allowPrivilegeEscalation)) continue;
      // The API refuses allowPrivilegeEscalation: false next to privileged or SYS_ADMIN; those need a person.
      if (c.privileged !== undefined && c.privileged !== false) continue;
      const add = c.capabilities.added;
      if (add.unknown || addsSysAdmin(add.raw)) continue;
      if (w.origin.backend === "kubernetes") {
        edits.push({
          op: "set",
          path: containerFieldPath(w, c, {
            docker: "",
            launch: "",
            kubernetes: "securityContext.allowPrivilegeEscalation",
          }),
          value: false,
        });
      } else {
        edits.push({
          op: "append",
          path: containerFieldPath(w, c, {
            docker: "securityOpts",
            launch: "HostConfig.SecurityOpt",
            kubernetes: "",
          }),
          value: "no-new-privileges:true",
        });
      }
    }
    return edits;
  },
});
