import { isUnknown, type WorkloadView } from "../workload";
import { containerFieldPath, label, unchecked, violation } from "./helpers";
import { defineRule, type Edit, type Finding } from "./types";

/** The image's filesystem is read-only; a task writes only to its job folder and a small tmpfs. */
export const requireReadonlyRootfs = defineRule({
  id: "sandbox-require-readonly-rootfs",
  description: "Every container runs with a read-only root filesystem.",
  mission: false,
  enforcementLevel: "advisory",
  severity: "medium",
  crosswalk: {
    cis: ["5.13"],
    kyverno: ["require-ro-rootfs"],
    checkov: ["CKV_K8S_22"],
    kubeLinter: ["no-read-only-root-fs"],
    kubesec: ["ReadOnlyRootFilesystem"],
  },
  subjects: ["workload"],
  defaults: {},
  remediationSteps:
    "Set `readOnly: true` (Docker) or `securityContext.readOnlyRootFilesystem: true` (Kubernetes); mount a sized tmpfs/emptyDir at /tmp.",
  check(s) {
    if (s.subject !== "workload") return [];
    const out: Finding[] = [];
    for (const c of s.containers) {
      const ro = c.readOnlyRootFilesystem;
      if (ro === true) continue;
      if (isUnknown(ro)) out.push(unchecked(`the root filesystem of ${label(c)}`, c.path, ro));
      else out.push(violation(`${label(c)} has a writable root filesystem`, c.path));
    }
    return out;
  },
  remediate(s) {
    if (s.subject !== "workload") return [];
    const w: WorkloadView = s;
    const edits: Edit[] = [];
    for (const c of w.containers) {
      if (c.readOnlyRootFilesystem === true || isUnknown(c.readOnlyRootFilesystem)) continue;
      edits.push({
        op: "set",
        path: containerFieldPath(w, c, {
          docker: "readOnly",
          launch: "HostConfig.ReadonlyRootfs",
          kubernetes: "securityContext.readOnlyRootFilesystem",
        }),
        value: true,
      });
    }
    return edits;
  },
});
