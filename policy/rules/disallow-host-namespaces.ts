import { isUnknown, type Val } from "../workload";
import { unchecked, violation } from "./helpers";
import { defineRule, type Finding } from "./types";

/** No host namespace (network, PID, IPC, user, cgroup) and no joining another container's namespaces. */
export const disallowHostNamespaces = defineRule({
  id: "sandbox-disallow-host-namespaces",
  description:
    "No workload shares the host's network, PID, IPC, user, cgroup or UTS namespace, or joins another container's.",
  mission: false,
  enforcementLevel: "mandatory",
  severity: "critical",
  crosswalk: {
    cis: ["5.10", "5.16", "5.17", "5.21", "5.31"],
    psa: ["hostNamespaces"],
    kyverno: ["disallow-host-namespaces"],
    checkov: ["CKV_K8S_17", "CKV_K8S_18", "CKV_K8S_19"],
    kubeLinter: ["host-network", "host-pid", "host-ipc"],
    kubesec: ["HostNetwork", "HostPID", "HostIPC"],
  },
  subjects: ["workload"],
  defaults: {},
  remediationSteps:
    "Remove hostNetwork/hostPID/hostIPC (Kubernetes) or the host/container: modes (Docker networkMode, pidMode, ipcMode, usernsMode, cgroupnsMode, utsMode; a network named host).",
  check(s) {
    if (s.subject !== "workload") return [];
    const out: Finding[] = [];
    const k8s = s.origin.backend === "kubernetes";
    const ns: [Val<boolean>, string, string][] = [
      [s.namespaces.hostNetwork, "network", k8s ? "hostNetwork" : "networkMode"],
      [s.namespaces.hostPID, "PID", k8s ? "hostPID" : "pidMode"],
      [s.namespaces.hostIPC, "IPC", k8s ? "hostIPC" : "ipcMode"],
      [s.namespaces.hostUsers, "user", "usernsMode"],
      [s.namespaces.hostCgroupns, "cgroup", "cgroupnsMode"],
      [s.namespaces.hostUTS, "UTS", k8s ? "hostUTS" : "utsMode"],
    ];
    for (const [v, what, key] of ns) {
      const path = k8s ? `${s.podPath}.${key}` : key;
      if (v === true) out.push(violation(`the workload shares the host's ${what} namespace (${key})`, path));
      else if (isUnknown(v)) out.push(unchecked(key, path, v));
    }
    for (const j of s.namespaces.joined) out.push(violation(`the workload joins another namespace (${j})`));
    return out;
  },
});
