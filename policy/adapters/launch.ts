/**
 * The runtime's launch spec -> workload view. The launcher starts a task through the Docker Engine API, so its
 * launch spec is the body of `POST /containers/create` (Engine API v1.41+: `Image`, `User`, `Env`, `Cmd`,
 * `Labels`, `HostConfig.{CapAdd,CapDrop,SecurityOpt,Binds,Mounts,PortBindings,...}`). Judging that body with the
 * same rules means a template that passed `preview` cannot be launched looser than it was judged.
 */
import {
  type ArgView,
  type CapabilitiesView,
  type ContainerView,
  type EnvView,
  isUnknown,
  type MountView,
  type PortView,
  UNKNOWN,
  type Val,
  type WorkloadView,
} from "../workload";
import {
  namespaceMode,
  normalizeRestart,
  parseDockerUser,
  parseSecurityOpts,
  splitEnv,
} from "./docker-common";
import { bool, entries, field, items, join, noTaint, num, str, strList, type TaintCheck } from "./read";
import { findUnreadable } from "./unreadable";

export const LAUNCH_TYPE = "launch";

/** `src:dst[:opts]` from `HostConfig.Binds`: a source starting with `/` is a host path, otherwise a volume name. */
function parseBind(raw: string): { source: string; target: string; readOnly: boolean; propagation?: string } {
  const [source = "", target = "", opts = ""] = raw.split(":");
  const flags = opts.split(",").map((o) => o.trim().toLowerCase());
  return {
    source,
    target,
    readOnly: flags.includes("ro"),
    propagation: flags.find((f) => /^r?(?:shared|slave|private)$/.test(f)),
  };
}

export function adaptLaunchSpec(body: unknown, name: string, tainted: TaintCheck = noTaint): WorkloadView {
  const hc = field(body, "HostConfig");
  const sec = parseSecurityOpts(strList(field(hc, "SecurityOpt")));
  const user = parseDockerUser(str(field(body, "User")));
  const mounts: MountView[] = [];
  items(field(hc, "Binds")).forEach((b, i) => {
    const s = str(b);
    const path = join("HostConfig.Binds", i);
    if (typeof s !== "string") return;
    const bind = parseBind(s);
    mounts.push({
      type: bind.source.startsWith("/") ? "bind" : "volume",
      source: bind.source,
      target: bind.target,
      readOnly: bind.readOnly,
      propagation: bind.propagation,
      tainted: tainted(path),
      path,
    });
  });
  items(field(hc, "Mounts")).forEach((m, i) => {
    const t = str(field(m, "Type"));
    const type = typeof t === "string" ? t.toLowerCase() : t;
    mounts.push({
      type:
        type === "bind"
          ? "bind"
          : type === "tmpfs"
            ? "tmpfs"
            : type === "volume"
              ? "volume"
              : isUnknown(type)
                ? "bind"
                : "other",
      source: str(field(m, "Source")),
      target: str(field(m, "Target")),
      readOnly: bool(field(m, "ReadOnly")),
      propagation: str(field(field(m, "BindOptions"), "Propagation")),
      tainted: tainted(join("HostConfig.Mounts", i)),
      path: join("HostConfig.Mounts", i),
    });
  });
  for (const [target] of entries(field(hc, "Tmpfs"))) {
    mounts.push({
      type: "tmpfs",
      source: undefined,
      target,
      readOnly: false,
      propagation: undefined,
      tainted: false,
      path: join("HostConfig.Tmpfs", target),
    });
  }
  const ports: PortView[] = [];
  for (const [spec, bindings] of entries(field(hc, "PortBindings"))) {
    const containerPort = Number.parseInt(spec, 10);
    const bs = items(bindings);
    (bs.length === 0 ? [undefined] : bs).forEach((b, i) => {
      ports.push({
        containerPort: Number.isFinite(containerPort) ? containerPort : undefined,
        hostPort: num(field(b, "HostPort")),
        hostIp: str(field(b, "HostIp")),
        published: true,
        path: join(join("HostConfig.PortBindings", spec), i),
      });
    });
  }
  const nano = num(field(hc, "NanoCpus"));
  const quota = num(field(hc, "CpuQuota"));
  const period = num(field(hc, "CpuPeriod"));
  const cpu: Val<number> = isUnknown(nano)
    ? UNKNOWN
    : nano !== undefined && nano > 0
      ? nano / 1e9
      : typeof quota === "number" && quota > 0
        ? quota / (typeof period === "number" && period > 0 ? period : 100_000)
        : undefined;
  const memory = num(field(hc, "Memory"));
  const swap = num(field(hc, "MemorySwap"));
  const env = items(field(body, "Env")).map((e, i): EnvView => {
    const path = join("Env", i);
    const s = str(e);
    if (typeof s !== "string")
      return { name: s, value: s, from: "literal" as const, tainted: tainted(path), path };
    const { name: n, value } = splitEnv(s);
    return {
      name: n,
      value,
      from: value === undefined ? ("host" as const) : ("literal" as const),
      tainted: tainted(path),
      path,
    };
  });
  const args = ["Entrypoint", "Cmd"].flatMap((k) =>
    items(field(body, k)).map(
      (a, i): ArgView => ({ value: str(a), tainted: tainted(join(k, i)), path: join(k, i) }),
    ),
  );
  const labels: Record<string, string> = {};
  for (const [k, v] of entries(field(body, "Labels"))) if (typeof v === "string") labels[k] = v;
  const caps: CapabilitiesView = { add: strList(field(hc, "CapAdd")), drop: strList(field(hc, "CapDrop")) };
  const network = namespaceMode(str(field(hc, "NetworkMode")));
  const pid = namespaceMode(str(field(hc, "PidMode")));
  const ipc = namespaceMode(str(field(hc, "IpcMode")));
  const container: ContainerView = {
    name,
    role: "container",
    image: str(field(body, "Image")),
    privileged: bool(field(hc, "Privileged")),
    allowPrivilegeEscalation: isUnknown(sec.noNewPrivileges)
      ? UNKNOWN
      : sec.noNewPrivileges === true
        ? false
        : undefined,
    capabilities: caps,
    runAsUser: user.uid,
    runAsGroup: user.gid,
    runAsNonRoot: undefined,
    userName: user.name,
    extraGroups: strList(field(hc, "GroupAdd")),
    readOnlyRootFilesystem: bool(field(hc, "ReadonlyRootfs")),
    seccomp: sec.seccomp,
    seccompSource: "HostConfig.SecurityOpt",
    appArmor: sec.appArmor,
    appArmorSource: "HostConfig.SecurityOpt",
    seLinux: sec.seLinux,
    procMount: sec.procMount,
    cpuLimit: cpu,
    memoryLimitBytes: typeof memory === "number" && memory <= 0 ? undefined : memory,
    memorySwapBytes: swap,
    resourcesNotSupported: false,
    extendedResources: [],
    env,
    envUnknown: false,
    args,
    ports,
    portsUnknown: false,
    mounts,
    mountsUnknown: false,
    devices: items(field(hc, "Devices")).map((d) => str(field(d, "PathOnHost"))),
    hostProbes: [],
    path: "",
  };
  return {
    subject: "workload",
    origin: { backend: "launch", type: LAUNCH_TYPE, kind: "Container", name },
    labels,
    role: labels["sandbox.role"],
    project: labels["sandbox.project"],
    namespaces: {
      hostNetwork: network.host,
      hostPID: pid.host,
      hostIPC: ipc.host,
      hostUsers: namespaceMode(str(field(hc, "UsernsMode"))).host,
      hostCgroupns: namespaceMode(str(field(hc, "CgroupnsMode"))).host,
      joined: [network.joined, pid.joined, ipc.joined].filter((x): x is string => typeof x === "string"),
    },
    networkMode: str(field(hc, "NetworkMode")),
    publishAllPorts: bool(field(hc, "PublishAllPorts")),
    sysctls: entries(field(hc, "Sysctls")).map(([k]) => ({ name: k, path: join("HostConfig.Sysctls", k) })),
    sysctlsUnknown: false,
    automountServiceAccountToken: false,
    runtimeClass: str(field(hc, "Runtime")),
    lifecycle: {
      restart: normalizeRestart(str(field(field(hc, "RestartPolicy"), "Name"))) ?? "never",
      restartForcedByController: false,
    },
    podLimits: { cpu: undefined, memoryBytes: undefined },
    deviceRequests: items(field(hc, "DeviceRequests")).map((_, i) => `HostConfig.DeviceRequests[${i}]`),
    unmountedHostVolumes: [],
    containers: [container],
    replicas: undefined,
    podPath: "",
    unknownParts: [],
    unreadableParts: findUnreadable(body),
  };
}
