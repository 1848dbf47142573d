import { runtimeSocketReason } from "../paths";
import { isUnknown, type MountView } from "../workload";
import { label, unchecked, violation } from "./helpers";
import { defineRule, type Finding } from "./types";

/** Host mounts (bind, hostPath) are the only way a socket reaches a container; volumes and tmpfs are not host paths. */
export function hostMounts(ms: readonly MountView[]): MountView[] {
  return ms.filter((m) => m.type === "bind" || m.type === "hostPath");
}

/**
 * Mission rule: no container runtime API socket (Docker, containerd, CRI-O, cri-dockerd, Podman, BuildKit) reaches a
 * task, however the path is spelled: `/run` ≡ `/var/run`, `//`, `.`/`..`, a trailing `/`, the folder that holds the
 * socket, or anything under a runtime's socket folder.
 */
export const disallowRuntimeSocket = defineRule({
  id: "sandbox-disallow-runtime-socket",
  description:
    "No container mounts a container runtime socket, a folder that contains one, a runtime's socket folder, a host folder where daemons keep control sockets, or a hostPath of type Socket.",
  mission: true,
  enforcementLevel: "mandatory",
  severity: "critical",
  crosswalk: {
    cis: ["5.32"],
    psa: ["hostPathVolumes"],
    kyverno: ["disallow-cri-sock-mount", "disallow-host-path"],
    checkov: ["CKV_K8S_27"],
    kubeLinter: ["docker-sock"],
    kubesec: ["DockerSock"],
  },
  subjects: ["workload"],
  defaults: {},
  remediationSteps:
    "Remove the mount. A task that needs to build or run containers must get its own sandboxed builder, never the host's runtime.",
  check(s) {
    if (s.subject !== "workload") return [];
    const out: Finding[] = [];
    const judge = (m: MountView, who: string) => {
      if (isUnknown(m.source)) {
        out.push(unchecked(`the host path mounted by ${who}`, m.path, m.source));
        return;
      }
      if (m.source === undefined) return;
      // The kubelet checks that a hostPath of type Socket is a unix socket: wherever it is, the task can connect to
      // it (a read-only mount does not stop that; paths.ts HOST_SOCKET_FOLDERS).
      const socket =
        typeof m.hostPathType === "string" && m.hostPathType.trim().toLowerCase() === "socket"
          ? `its hostPath type is ${m.hostPathType}: a unix socket of the host, which the task can connect to whatever the mount's readOnly`
          : undefined;
      const reason = runtimeSocketReason(m.source) ?? socket;
      if (reason === undefined) return;
      const at = typeof m.target === "string" ? ` at ${m.target}` : "";
      out.push(violation(`${who} mounts host path ${m.source}${at}: ${reason}`, m.path));
    };
    for (const c of s.containers) {
      if (c.mountsUnknown) out.push(unchecked(`the mounts of ${label(c)}`, c.path));
      for (const m of hostMounts(c.mounts)) judge(m, label(c));
    }
    for (const m of s.unmountedHostVolumes)
      judge(m, `pod volume "${m.volume ?? "?"}" (not mounted by any container yet)`);
    return out;
  },
});
