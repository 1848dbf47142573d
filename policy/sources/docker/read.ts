/**
 * The runtime's launch spec -> workload view. The launcher starts a task through the Docker Engine API, so its
 * launch spec is the body of `POST /containers/create` (Engine API v1.41+: `Image`, `User`, `Env`, `Cmd`,
 * `Labels`, `HostConfig.{CapAdd,CapDrop,SecurityOpt,Binds,Mounts,PortBindings,...}`). Judging that body with the
 * same rules means a template that passed `preview` cannot be launched looser than it was judged.
 *
 * The body is first read the way the daemon decodes it (engine-json.ts: field names in any case, repeated keys),
 * so every field below is read by its canonical name.
 */

import { isWithin, normalizeHostPath } from "../../paths";
import {
  type ArgView,
  type CapabilitiesView,
  type ContainerView,
  type EnvView,
  isUnknown,
  type MountView,
  type PortView,
  Unreadable,
  type Val,
  type WorkloadView,
} from "../../workload";
import { capabilitiesView } from "../capabilities";
import { bool, entries, field, items, join, noTaint, num, str, strList, type TaintCheck } from "../lenient";
import { findUnreadable } from "../unreadable";
import { engineBodyOf } from "./body";
import { DEFAULT_MASKED_PATHS, DEFAULT_READONLY_PATHS } from "./daemon.generated";
import { unjudgedContainerFields } from "./fields";
import { readBind, readMount, tmpfsMounts } from "./mounts";
import {
  healthcheckArgs,
  ipcShareable,
  namespaceMode,
  normalizeRestart,
  parseDockerUser,
  parseSecurityOpts,
  splitEnv,
  writableCgroupsWeakening,
} from "./spellings";

export const LAUNCH_TYPE = "launch";

/** The daemon's default masked and read-only paths (daemon.generated.ts, oci.DefaultLinuxSpec), which a list replaces. */
const DEFAULT_MASKED = DEFAULT_MASKED_PATHS;
const DEFAULT_READONLY = DEFAULT_READONLY_PATHS;

/**
 * `MaskedPaths`/`ReadonlyPaths`: absent keeps the daemon's defaults; a list replaces them, so one that leaves a
 * default path out (`[]` is what `systempaths=unconfined` sends) unprotects it.
 */
function systemPathsWeakened(v: unknown, defaults: readonly string[], key: string): Val<string> | undefined {
  const l = strList(v);
  if (l === undefined) return undefined;
  if (isUnknown(l)) return l;
  if (l.some(isUnknown)) return l.find(isUnknown);
  // A default is kept when the list names it or a folder that holds it, in any spelling of the path.
  const given = l.flatMap((x) => {
    const n = typeof x === "string" ? normalizeHostPath(x) : undefined;
    return n === undefined ? [] : [n];
  });
  const missing = defaults.filter((d) => !given.some((g) => isWithin(d, g)));
  return missing.length === 0 ? undefined : `${key} leaves out ${missing.join(", ")}`;
}

/** `VolumesFrom`: another container's mounts, which the body does not show: never read as "no mount". */
function volumesFrom(hc: unknown): MountView[] {
  return items(field(hc, "VolumesFrom")).map((v, i) => {
    const s = str(v);
    const path = join("HostConfig.VolumesFrom", i);
    const why =
      typeof s === "string"
        ? new Unreadable(
            `it takes every mount of container "${s.split(":")[0]}", which this body does not show`,
          )
        : s;
    const ro = typeof s === "string" && s.split(":")[1] === "ro";
    return {
      type: "bind",
      source: why,
      target: why,
      readOnly: ro,
      propagation: undefined,
      tainted: false,
      path,
    };
  });
}

export function adaptLaunchSpec(raw: unknown, name: string, tainted: TaintCheck = noTaint): WorkloadView {
  const body = engineBodyOf(raw);
  const hc = field(body, "HostConfig");
  const sec = parseSecurityOpts(strList(field(hc, "SecurityOpt")));
  const user = parseDockerUser(str(field(body, "User")));
  const mounts: MountView[] = [];
  items(field(hc, "Binds")).forEach((b, i) => {
    const path = join("HostConfig.Binds", i);
    mounts.push({ ...readBind(str(b)), tainted: tainted(path), path });
  });
  items(field(hc, "Mounts")).forEach((m, i) => {
    const path = join("HostConfig.Mounts", i);
    // `VolumeDriver` is for Binds only: a `Mounts` volume names its driver in DriverConfig, else `local`.
    for (const { at, ...r } of readMount(m)) {
      mounts.push({ ...r, tainted: tainted(path), path: at === undefined ? path : `${path}.${at}` });
    }
  });
  mounts.push(...volumesFrom(hc));
  mounts.push(...tmpfsMounts(field(hc, "Tmpfs"), "HostConfig.Tmpfs"));
  const ports: PortView[] = [];
  for (const [spec, bindings] of entries(field(hc, "PortBindings"))) {
    const containerPort = Number.parseInt(spec, 10);
    // A port with an empty list of bindings publishes nothing (the daemon binds each entry of the list, and there
    // are none); one whose list cannot be read is judged as published.
    const bs = items(bindings);
    if (bs.length === 0 && !isUnknown(bindings)) continue;
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
    ? nano
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
  const caps: CapabilitiesView = capabilitiesView(
    strList(field(hc, "CapAdd")),
    strList(field(hc, "CapDrop")),
    "launch",
  );
  const network = namespaceMode(str(field(hc, "NetworkMode")));
  // Connecting to the network named `host` is host networking whatever NetworkMode says.
  const endpoints = entries(field(field(body, "NetworkingConfig"), "EndpointsConfig")).map(([k]) => k);
  const pid = namespaceMode(str(field(hc, "PidMode")));
  const ipcRaw = str(field(hc, "IpcMode"));
  const ipc = namespaceMode(ipcRaw);
  const container: ContainerView = {
    name,
    role: "container",
    image: str(field(body, "Image")),
    privileged: bool(field(hc, "Privileged")),
    allowPrivilegeEscalation: isUnknown(sec.noNewPrivileges)
      ? sec.noNewPrivileges
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
    seccompSource:
      sec.seccompWhy === undefined ? "HostConfig.SecurityOpt" : `HostConfig.SecurityOpt: ${sec.seccompWhy}`,
    appArmor: sec.appArmor,
    appArmorSource: "HostConfig.SecurityOpt",
    ...(sec.appArmorName !== undefined ? { appArmorLocalhost: sec.appArmorName } : {}),
    seLinux: sec.seLinux,
    procMount: sec.procMount,
    cpuLimit: cpu,
    memoryLimitBytes: typeof memory === "number" && memory <= 0 ? undefined : memory,
    memorySwapBytes: swap,
    pidsLimit: num(field(hc, "PidsLimit")),
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
    execHooks: field(body, "Healthcheck") === undefined ? [] : ["Healthcheck"],
    hookCommands: [
      {
        what: "Healthcheck",
        args: healthcheckArgs(
          strList(field(field(body, "Healthcheck"), "Test")),
          "Healthcheck.Test",
          tainted,
          () => false,
        ),
      },
    ].filter((h) => h.args.length > 0),
    path: "",
    weakenedSystemPaths: [
      ...(
        [
          {
            what: systemPathsWeakened(field(hc, "MaskedPaths"), DEFAULT_MASKED, "MaskedPaths"),
            path: "HostConfig.MaskedPaths",
          },
          {
            what: systemPathsWeakened(field(hc, "ReadonlyPaths"), DEFAULT_READONLY, "ReadonlyPaths"),
            path: "HostConfig.ReadonlyPaths",
          },
        ] as { what: Val<string>; path: string }[]
      ).filter((w) => w.what !== undefined),
      ...writableCgroupsWeakening(sec.writableCgroups, "HostConfig.SecurityOpt"),
    ],
  };
  return {
    subject: "workload",
    origin: { backend: "launch", type: LAUNCH_TYPE, kind: "Container", name },
    labels,
    role: labels["sandbox.role"],
    project: labels["sandbox.project"],
    namespaces: {
      hostNetwork: network.host === true || endpoints.includes("host") ? true : network.host,
      hostPID: pid.host,
      hostIPC: ipc.host,
      hostUsers: namespaceMode(str(field(hc, "UsernsMode"))).host,
      hostCgroupns: namespaceMode(str(field(hc, "CgroupnsMode"))).host,
      hostUTS: namespaceMode(str(field(hc, "UTSMode"))).host,
      joined: [
        network.joined,
        pid.joined,
        ipc.joined,
        ipcShareable(ipcRaw) ? "IpcMode shareable" : undefined,
      ].filter((x): x is string => typeof x === "string"),
    },
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
    deviceCgroupRules: items(field(hc, "DeviceCgroupRules")).map((r, i) => {
      const rule = str(r);
      return `HostConfig.DeviceCgroupRules[${i}]${typeof rule === "string" ? `: ${rule}` : ""}`;
    }),
    unmountedHostVolumes: [],
    containers: [container],
    replicas: undefined,
    podPath: "",
    unknownParts: [],
    unreadableParts: findUnreadable(body),
    unjudgedFields: unjudgedContainerFields(body),
  };
}
