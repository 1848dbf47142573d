/**
 * `docker:index/container:Container` props -> workload view. Property names are @pulumi/docker's
 * (`capabilities.drops`, `securityOpts`, `memory` in MB, `envs` as `NAME=value`, ...).
 */

import {
  type ArgView,
  type ContainerView,
  type EnvView,
  isUnknown,
  type PortView,
  UNKNOWN,
  type Val,
  type WorkloadView,
} from "../../workload";
import { capabilitiesView } from "../capabilities";
import {
  ipcShareable,
  namespaceMode,
  normalizeRestart,
  parseDockerUser,
  parseSecurityOpts,
  splitEnv,
  writableCgroupsWeakening,
} from "../docker/spellings";
import {
  bool,
  entries,
  field,
  isObj,
  items,
  join,
  list,
  noTaint,
  num,
  REDACTED_SECRET,
  str,
  strList,
  type TaintCheck,
} from "../lenient";
import { findUnreadable } from "../unreadable";
import type { UnjudgedField } from "../verdict";
import { dockerHooks, dockerUploads } from "./container-files";
import { dockerMounts } from "./container-mounts";
import { dockerNetworks, hostLanNetworks } from "./container-networks";
import { refusedContainerInputs } from "./docker-container";

export const DOCKER_CONTAINER_TYPE = "docker:index/container:Container";

const MB = 1024 * 1024;

/** Labels as a list of `{label, value}` (the provider's shape) or a plain map (tolerated). */
export function dockerLabels(raw: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const l of items(raw)) {
    const k = str(field(l, "label"));
    const v = str(field(l, "value"));
    if (typeof k === "string" && typeof v === "string") out[k] = v;
  }
  if (isObj(raw)) for (const [k, v] of entries(raw)) if (typeof v === "string") out[k] = v;
  return out;
}

function isTaintedValue(v: Val<string>): boolean {
  return typeof v === "string" && v.includes(REDACTED_SECRET);
}

function dockerEnv(raw: unknown, tainted: TaintCheck): { env: EnvView[]; unknown: boolean } {
  const l = list(raw);
  if (isUnknown(l)) return { env: [], unknown: true };
  const env: EnvView[] = [];
  (l ?? []).forEach((e, i) => {
    const path = join("envs", i);
    const s = str(e);
    if (isUnknown(s)) {
      env.push({ name: UNKNOWN, value: UNKNOWN, from: "literal", tainted: tainted(path), path });
      return;
    }
    if (s === undefined) return;
    const { name, value } = splitEnv(s);
    env.push({
      // `=<secret>`: the pack's redaction of a whole entry that was a secret; its name is not known.
      name: name === "" ? undefined : name,
      value,
      from: value === undefined ? "host" : "literal",
      tainted: tainted(path) || isTaintedValue(value),
      path,
    });
  });
  return { env, unknown: false };
}

function dockerArgs(props: unknown, tainted: TaintCheck): ArgView[] {
  const out: ArgView[] = [];
  for (const key of ["entrypoints", "command"]) {
    const l = list(field(props, key));
    if (isUnknown(l)) {
      out.push({ value: UNKNOWN, tainted: tainted(key), path: key });
      continue;
    }
    (l ?? []).forEach((a, i) => {
      const path = join(key, i);
      const value = str(a);
      out.push({ value, tainted: tainted(path) || isTaintedValue(value), path });
    });
  }
  return out;
}

function dockerPorts(props: unknown): { ports: PortView[]; unknown: boolean } {
  const l = list(field(props, "ports"));
  if (isUnknown(l)) return { ports: [], unknown: true };
  return {
    ports: (l ?? []).map((p, i) => ({
      containerPort: num(field(p, "internal")),
      hostPort: num(field(p, "external")),
      hostIp: str(field(p, "ip")),
      // Every `ports` entry publishes on the host; an absent `external` picks a random host port.
      published: true,
      path: join("ports", i),
    })),
    unknown: false,
  };
}

function cpuLimit(props: unknown): Val<number> {
  const cpus = num(field(props, "cpus"));
  if (isUnknown(cpus)) return cpus;
  // The provider sends whole billionths of a CPU (NanoCpus); a value that comes to none of them sets no limit.
  if (cpus !== undefined && Math.trunc(cpus * 1e9) > 0) return cpus;
  const quota = num(field(props, "cpuQuota"));
  const period = num(field(props, "cpuPeriod"));
  if (isUnknown(quota) || isUnknown(period)) return UNKNOWN;
  if (quota !== undefined && quota > 0)
    return quota / (period !== undefined && period > 0 ? period : 100_000);
  return undefined;
}

function mbToBytes(v: Val<number>): Val<number> {
  if (isUnknown(v) || v === undefined) return v;
  if (v < 0) return -1;
  return v === 0 ? undefined : v * MB;
}

/** Adapts a `docker.Container`'s props (plain values; preview unknowns as {@link UNKNOWN}). */
export function adaptDockerContainer(
  props: unknown,
  name: string,
  tainted: TaintCheck = noTaint,
): WorkloadView {
  const sec = parseSecurityOpts(strList(field(props, "securityOpts")));
  const user = parseDockerUser(str(field(props, "user")));
  const caps = field(props, "capabilities");
  const { env, unknown: envUnknown } = dockerEnv(field(props, "envs"), tainted);
  const { mounts, unknown: mountsUnknown } = dockerMounts(props, tainted);
  const { ports, unknown: portsUnknown } = dockerPorts(props);
  const network = namespaceMode(str(field(props, "networkMode")));
  const pid = namespaceMode(str(field(props, "pidMode")));
  const ipcRaw = str(field(props, "ipcMode"));
  const ipc = namespaceMode(ipcRaw);
  const userns = namespaceMode(str(field(props, "usernsMode")));
  const cgroupns = namespaceMode(str(field(props, "cgroupnsMode")));
  // Not a @pulumi/docker input: Compose's `uts` is carried under the Engine's name so that it is judged.
  const uts = namespaceMode(str(field(props, "utsMode")));
  const joined = [
    network.joined && `networkMode ${network.joined}`,
    pid.joined && `pidMode ${pid.joined}`,
    ipc.joined && `ipcMode ${ipc.joined}`,
    ipcShareable(ipcRaw) ? "ipcMode shareable" : undefined,
  ].filter((x): x is string => typeof x === "string");
  const devices = items(field(props, "devices")).map((d) => str(field(d, "hostPath")));
  const deviceRequests: string[] = [];
  items(field(props, "deviceRequests")).forEach((d, i) => {
    const driver = str(field(d, "driver"));
    deviceRequests.push(`deviceRequests[${i}]${typeof driver === "string" ? ` (driver ${driver})` : ""}`);
  });
  const gpus = str(field(props, "gpus"));
  if (typeof gpus === "string" && gpus.trim() !== "") deviceRequests.push(`gpus=${gpus}`);
  const deviceRequestsUnknown = isUnknown(gpus) ? ["gpus"] : [];
  const deviceCgroupRules: string[] = [];
  items(field(props, "deviceCgroupRules")).forEach((r, i) => {
    const rule = str(r);
    deviceCgroupRules.push(`deviceCgroupRules[${i}]${typeof rule === "string" ? ` (${rule})` : ""}`);
  });
  const sysctlsRaw = field(props, "sysctls");
  const labels = dockerLabels(field(props, "labels"));
  const networks = dockerNetworks(props);
  const groups = strList(field(props, "groupAdds"));
  const container: ContainerView = {
    name,
    role: "container",
    image: str(field(props, "image")),
    privileged: bool(field(props, "privileged")),
    allowPrivilegeEscalation: isUnknown(sec.noNewPrivileges)
      ? sec.noNewPrivileges
      : sec.noNewPrivileges === true
        ? false
        : undefined,
    capabilities: capabilitiesView(strList(field(caps, "adds")), strList(field(caps, "drops")), "docker"),
    runAsUser: user.uid,
    runAsGroup: user.gid,
    runAsNonRoot: undefined,
    userName: user.name,
    extraGroups: groups,
    readOnlyRootFilesystem: bool(field(props, "readOnly")),
    seccomp: sec.seccomp,
    seccompSource: sec.seccompWhy === undefined ? "securityOpts" : `securityOpts: ${sec.seccompWhy}`,
    appArmor: sec.appArmor,
    appArmorSource: "securityOpts",
    ...(sec.appArmorName !== undefined ? { appArmorLocalhost: sec.appArmorName } : {}),
    seLinux: sec.seLinux,
    procMount: sec.procMount,
    cpuLimit: cpuLimit(props),
    memoryLimitBytes: mbToBytes(num(field(props, "memory"))),
    memorySwapBytes: mbToBytes(num(field(props, "memorySwap"))),
    // Not a @pulumi/docker property (the launcher adds it); the scanner's Compose reader writes `pids_limit` here.
    pidsLimit: num(field(props, "pidsLimit")),
    resourcesNotSupported: false,
    extendedResources: [],
    env,
    envUnknown,
    args: dockerArgs(props, tainted),
    ports,
    portsUnknown,
    mounts,
    mountsUnknown,
    devices,
    hostProbes: [],
    // A healthcheck runs its command inside the container; uploads put files into it before it starts.
    execHooks: ["healthcheck", "uploads"].filter((k) => field(props, k) !== undefined),
    hookCommands: dockerHooks(props, tainted),
    hookHeaders: [],
    fileTexts: dockerUploads(props, tainted),
    path: "",
    weakenedSystemPaths: writableCgroupsWeakening(sec.writableCgroups, "securityOpts"),
  };
  return {
    subject: "workload",
    origin: { backend: "docker", type: DOCKER_CONTAINER_TYPE, kind: "Container", name },
    labels,
    role: labels["sandbox.role"],
    project: labels["sandbox.project"],
    namespaces: {
      hostNetwork: network.host,
      hostPID: pid.host,
      hostIPC: ipc.host,
      hostUsers: userns.host,
      hostCgroupns: cgroupns.host,
      hostUTS: uts.host,
      joined,
    },
    networks,
    publishAllPorts: bool(field(props, "publishAllPorts")),
    hostLanNetworks: hostLanNetworks(networks),
    sysctls: entries(sysctlsRaw).map(([k]) => ({ name: k, path: join("sysctls", k) })),
    sysctlsUnknown: isUnknown(sysctlsRaw),
    automountServiceAccountToken: false, // Docker containers get no Kubernetes token.
    runtimeClass: str(field(props, "runtime")),
    lifecycle: {
      // Unset means "no": Docker does not restart a container unless told to.
      restart: normalizeRestart(str(field(props, "restart"))) ?? "never",
      restartForcedByController: false,
    },
    podLimits: { cpu: undefined, memoryBytes: undefined },
    deviceRequests,
    deviceRequestsUnknown,
    deviceCgroupRules,
    unmountedHostVolumes: [],
    containers: [container],
    replicas: undefined,
    podPath: "",
    unknownParts: [],
    unreadableParts: findUnreadable(props),
    // The container's refused inputs, and the keys of a Compose service that fail closed (the scanner's Compose
    // reader carries them under this name).
    unjudgedFields: [
      ...refusedContainerInputs(props),
      ...items(field(props, "unjudgedFields")).filter(
        (f): f is UnjudgedField =>
          typeof f === "object" && f !== null && typeof (f as UnjudgedField).path === "string",
      ),
    ],
  };
}
