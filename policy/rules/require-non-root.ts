import { windowsUserProblem } from "../sources/kubernetes/windows";
import { isUnknown } from "../workload";
import { label, unchecked, violation } from "./helpers";
import { defineRule, type Finding } from "./types";

/** Groups that give root's file access (`0`, `root`) or the runtime's (`docker`). */
const ROOT_GROUPS = new Set(["0", "root", "docker"]);

/**
 * The task runs as a non-root user and group. Kubernetes: the effective `runAsUser` (container over pod) is not 0,
 * and either it is set or `runAsNonRoot: true`; `runAsGroup`, `fsGroup` and `supplementalGroups` are not 0. Docker:
 * `user` is set and is not `root`, `0`, `0:<gid>` or `<uid>:0`, and names its group (`1000` alone runs with the gid of
 * the image's passwd entry, gid 0 when there is none); `groupAdds` has no root or docker group. A pod on Windows nodes
 * (policy/sources/kubernetes/windows.ts) runs as its `windowsOptions.runAsUserName`, which must be `ContainerUser`.
 */
export const requireNonRoot = defineRule({
  id: "sandbox-require-non-root",
  description: "Every container runs as a non-root user and without the root group.",
  mission: false,
  enforcementLevel: "mandatory",
  severity: "high",
  crosswalk: {
    cis: ["4.1"],
    psa: ["runAsNonRoot", "runAsUser"],
    kyverno: ["require-run-as-nonroot", "require-run-as-non-root-user", "require-non-root-groups"],
    checkov: ["CKV_K8S_23", "CKV_K8S_40", "CKV_DOCKER_3", "CKV_DOCKER_8"],
    kubeLinter: ["run-as-non-root"],
    kubesec: ["RunAsNonRoot", "RunAsUser", "RunAsGroup"],
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
      allowRootGroup: {
        type: "boolean",
        description: "Allow gid 0 (the root group) with a non-root uid.",
        default: false,
      },
      requireRunAsNonRoot: {
        type: "boolean",
        description:
          "Kubernetes: require runAsNonRoot: true for every container (its own or the pod's) and no runAsNonRoot: false anywhere, as Pod Security restricted does; the restricted and sandbox presets set it.",
        default: false,
      },
      requireNumericUser: {
        type: "boolean",
        description: "Docker: refuse a user given by name (its uid depends on the image's /etc/passwd).",
        default: false,
      },
    },
  },
  defaults: {
    allowRootGroup: false,
    requireNumericUser: false,
    requireRunAsNonRoot: false,
    judgePodLevel: false,
  },
  remediationSteps:
    'Set a non-root uid:gid (the toolkit uses 1000:1000): Docker `user: "1000:1000"`; Kubernetes `runAsNonRoot: true`, `runAsUser: 1000`, `runAsGroup: 1000`.',
  check(s, config) {
    if (s.subject !== "workload") return [];
    const out: Finding[] = [];
    const docker = s.origin.backend !== "kubernetes";
    const pod = s.pod;
    // Pod Security restricted refuses a pod-level runAsUser 0 even when every container overrides it (it is the pod
    // sandbox's user); the kubelet gives no task container that uid, so this is judged under judgePodLevel only.
    if (config.judgePodLevel && pod?.runAsUser === 0 && s.containers.every((c) => c.runAsUser !== 0))
      out.push(violation("the pod's securityContext sets runAsUser: 0 (root)", pod.path));
    if (config.requireRunAsNonRoot && pod?.runAsNonRoot === false)
      out.push(violation("the pod's securityContext sets runAsNonRoot: false", pod.path));
    const windows = docker ? undefined : pod?.windows;
    for (const c of s.containers) {
      const who = label(c);
      if (windows !== undefined) {
        // A Windows node ignores runAsUser, runAsGroup and the groups: the container's Windows account is its user.
        if (isUnknown(c.windowsUserName))
          out.push(unchecked(`the Windows user of ${who}`, c.path, c.windowsUserName));
        const problem = windowsUserProblem(c.windowsUserName);
        if (problem !== undefined)
          out.push(violation(`${who} runs on Windows nodes (${windows.reason}) and ${problem}`, c.path));
        continue;
      }
      const uid = c.runAsUser;
      if (isUnknown(uid) || isUnknown(c.runAsNonRoot) || isUnknown(c.userName)) {
        out.push(unchecked(`the user of ${who}`, c.path, uid, c.runAsNonRoot, c.userName));
      } else if (uid === 0) {
        out.push(violation(`${who} runs as root (uid 0)`, c.path));
      } else if (uid === undefined) {
        if (typeof c.userName === "string" && c.userName !== "") {
          if (config.requireNumericUser)
            out.push(violation(`${who} names its user "${c.userName}" instead of a numeric uid`, c.path));
        } else if (c.runAsNonRoot !== true) {
          out.push(
            violation(
              docker
                ? `${who} sets no user, so the image's default user (often root) runs the task`
                : `${who} sets neither runAsNonRoot: true nor a non-zero runAsUser${c.runAsNonRoot === false ? " (runAsNonRoot is false)" : ""}`,
              c.path,
            ),
          );
        }
      }
      if (config.requireRunAsNonRoot && !docker && c.runAsNonRoot !== true && !isUnknown(c.runAsNonRoot))
        out.push(
          violation(
            `${who} ${c.runAsNonRoot === false ? "sets runAsNonRoot: false" : "has no runAsNonRoot: true (its own or the pod's)"}; Pod Security restricted requires it whatever the uid`,
            c.path,
          ),
        );
      if (config.allowRootGroup) continue;
      if (c.runAsGroup === 0) out.push(violation(`${who} runs with the root group (gid 0)`, c.path));
      else if (isUnknown(c.runAsGroup)) out.push(unchecked(`the group of ${who}`, c.path, c.runAsGroup));
      const groups = c.extraGroups;
      if (isUnknown(groups)) out.push(unchecked(`the extra groups of ${who}`, c.path, groups));
      else {
        const bad = (groups ?? []).filter(
          (g) => g !== undefined && !isUnknown(g) && ROOT_GROUPS.has(String(g).trim().toLowerCase()),
        );
        if (bad.length > 0)
          out.push(
            violation(
              `${who} joins the group${bad.length > 1 ? "s" : ""} ${bad.map(String).join(", ")}`,
              c.path,
            ),
          );
      }
    }
    return out;
  },
});
