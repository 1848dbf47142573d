import { isUnknown } from "../workload";
import { unchecked, violation } from "./helpers";
import { defineRule, type Finding } from "./types";

/**
 * A task runs once: Docker `restart` unset or `no`; a Pod, Job or CronJob template `restartPolicy: Never`.
 * Controllers that restart by design (Deployment, StatefulSet, DaemonSet, ReplicaSet, ReplicationController,
 * agent-sandbox Sandbox) are not judged here: their restart policy is not a choice.
 */
export const requireNoRestart = defineRule({
  id: "sandbox-require-no-restart",
  description: "A task container is never restarted (Docker restart no, Kubernetes restartPolicy Never).",
  mission: false,
  enforcementLevel: "advisory",
  severity: "low",
  crosswalk: { cis: ["5.15"], kubeLinter: ["restart-policy"] },
  subjects: ["workload"],
  configSchema: {
    properties: {
      allowOnFailure: {
        type: "boolean",
        description: "Accept on-failure / OnFailure restarts.",
        default: false,
      },
    },
  },
  defaults: { allowOnFailure: false },
  remediationSteps:
    "Docker: remove `restart` or set it to `no`. Kubernetes: `restartPolicy: Never` (and `backoffLimit: 0` on Jobs).",
  check(s, config) {
    if (s.subject !== "workload") return [];
    const l = s.lifecycle;
    if (l.restartForcedByController) return [];
    const out: Finding[] = [];
    for (const r of l.containerRestarts ?? []) {
      if (isUnknown(r.restart)) out.push(unchecked("a container's restart policy", r.path, r.restart));
      else if (config.allowOnFailure && (r.restart === "on-failure" || (r.rules && r.restart !== "always")))
        continue;
      else
        out.push(
          violation(
            r.restart !== undefined && r.restart !== "never"
              ? `the container restarts by its own restartPolicy ${r.restart}${r.path.includes("initContainers") && r.restart === "always" ? " (a sidecar, restarted each time it exits)" : ""}; a task runs once`
              : "the container restarts on the exit codes its restartPolicyRules name; a task runs once",
            `${r.path}.${r.restart !== undefined && r.restart !== "never" ? "restartPolicy" : "restartPolicyRules"}`,
          ),
        );
    }
    const path = s.origin.backend === "kubernetes" ? `${s.podPath}.restartPolicy` : "restart";
    if (isUnknown(l.restart)) out.push(unchecked("the restart policy", path, l.restart));
    else if (l.restart === undefined || l.restart === "never") return out;
    else if (l.restart === "on-failure" && config.allowOnFailure) return out;
    else {
      const shown = s.origin.backend === "kubernetes" ? `restartPolicy ${l.restart}` : `restart ${l.restart}`;
      out.push(violation(`the workload restarts its containers (${shown}); a task runs once`, path));
    }
    return out;
  },
});
