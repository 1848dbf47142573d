import type * as docker from "@pulumi/docker";
import type * as pulumi from "@pulumi/pulumi";
import type Dockerode from "dockerode";

/** `docker.ContainerArgs` with every input resolved to a plain value, as a provider or the launcher receives it. */
export type PlainContainerArgs = pulumi.Unwrap<docker.ContainerArgs>;

/** What the launcher adds that `@pulumi/docker` cannot express. */
export interface CreateExtras {
  /** The container's name on the engine. */
  readonly name?: string;
  /** `HostConfig.PidsLimit`: the process cap that stops a fork bomb. */
  readonly pidsLimit?: number;
}

const MB = 1024 * 1024;

/** Docker's restart policy names, as `@pulumi/docker` spells them. */
const RESTART = ["no", "on-failure", "always", "unless-stopped"] as const;

/** `"1.5"` vCPUs as the Engine API's NanoCpus (billionths of a CPU). */
export function nanoCpus(cpus: string): number {
  const n = Number(cpus);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`cpus "${cpus}" is not a positive number of CPUs`);
  return Math.round(n * 1e9);
}

/**
 * The one mapping from `docker.Container` arguments to the Engine API's create body (`POST /containers/create`).
 * The launcher uses it so that the container it starts is exactly the one a component declares; the local Docker
 * provider uses it too. It maps the properties the toolkit and common hand-written stacks set, and throws for a
 * set property it does not map, naming it, so that nothing is silently dropped.
 */
export function containerCreateBody(
  args: PlainContainerArgs,
  extras: CreateExtras = {},
): Dockerode.ContainerCreateOptions {
  const unsupported = Object.entries(args)
    .filter(([k, v]) => v !== undefined && !MAPPED.has(k))
    .map(([k]) => k);
  if (unsupported.length > 0) {
    throw new Error(
      `container property ${unsupported.map((k) => `"${k}"`).join(", ")} is not mapped to the Engine API by this toolkit`,
    );
  }
  if (args.restart !== undefined && !(RESTART as readonly string[]).includes(args.restart)) {
    throw new Error(`restart "${args.restart}" is not one of ${RESTART.join(", ")}`);
  }
  const hostConfig: Dockerode.HostConfig = {
    CapAdd: args.capabilities?.adds ?? [],
    CapDrop: args.capabilities?.drops ?? [],
    SecurityOpt: args.securityOpts ?? [],
    Privileged: args.privileged ?? false,
    ReadonlyRootfs: args.readOnly ?? false,
    Tmpfs: args.tmpfs ?? {},
    NetworkMode: args.networkMode ?? "bridge",
    IpcMode: args.ipcMode,
    PidMode: args.pidMode,
    UsernsMode: args.usernsMode,
    PublishAllPorts: args.publishAllPorts ?? false,
    RestartPolicy: { Name: args.restart ?? "no" },
    LogConfig:
      args.logDriver === undefined
        ? undefined
        : { Type: args.logDriver, Config: { ...(args.logOpts as Record<string, string> | undefined) } },
    Mounts: (args.mounts ?? []).map((m) => ({
      Type: m.type as "bind" | "volume" | "tmpfs",
      Source: m.source ?? "",
      Target: m.target,
      ReadOnly: m.readOnly ?? false,
    })),
    Binds: (args.volumes ?? []).flatMap((v) =>
      v.hostPath !== undefined && v.containerPath !== undefined
        ? [`${v.hostPath}:${v.containerPath}${v.readOnly ? ":ro" : ""}`]
        : v.volumeName !== undefined && v.containerPath !== undefined
          ? [`${v.volumeName}:${v.containerPath}${v.readOnly ? ":ro" : ""}`]
          : [],
    ),
    PortBindings: Object.fromEntries(
      (args.ports ?? []).map((p) => [
        `${p.internal}/${p.protocol ?? "tcp"}`,
        [{ HostIp: p.ip ?? "", HostPort: p.external === undefined ? "" : String(p.external) }],
      ]),
    ),
    Devices: (args.devices ?? []).map((d) => ({
      PathOnHost: d.hostPath,
      PathInContainer: d.containerPath ?? d.hostPath,
      CgroupPermissions: d.permissions ?? "rwm",
    })),
    Sysctls: args.sysctls,
    GroupAdd: args.groupAdds,
    Ulimits: args.ulimits?.map((u) => ({ Name: u.name, Soft: u.soft, Hard: u.hard })),
    ShmSize: args.shmSize === undefined ? undefined : args.shmSize * MB,
    Runtime: args.runtime,
    Init: args.init,
  };
  if (args.memory !== undefined) hostConfig.Memory = args.memory * MB;
  if (args.memorySwap !== undefined) hostConfig.MemorySwap = args.memorySwap < 0 ? -1 : args.memorySwap * MB;
  if (args.cpus !== undefined) hostConfig.NanoCpus = nanoCpus(args.cpus);
  if (args.cpuShares !== undefined) hostConfig.CpuShares = args.cpuShares;
  if (extras.pidsLimit !== undefined) hostConfig.PidsLimit = extras.pidsLimit;

  const body: Dockerode.ContainerCreateOptions = {
    Image: args.image,
    Cmd: args.command,
    Entrypoint: args.entrypoints,
    User: args.user,
    Env: args.envs ?? [],
    WorkingDir: args.workingDir,
    Hostname: args.hostname,
    Labels: Object.fromEntries((args.labels ?? []).map((l) => [l.label, l.value])),
    ExposedPorts: Object.fromEntries(
      (args.ports ?? []).map((p) => [`${p.internal}/${p.protocol ?? "tcp"}`, {}]),
    ),
    StopSignal: args.stopSignal,
    StopTimeout: args.stopTimeout,
    Tty: args.tty ?? false,
    OpenStdin: args.stdinOpen ?? false,
    HostConfig: dropUndefined(hostConfig),
  };
  if (extras.name !== undefined) body.name = extras.name;
  // The create call joins one network (the network mode's); the others are connected before start.
  const primary = (args.networksAdvanced ?? []).find((n) => n.name === hostConfig.NetworkMode);
  if (primary !== undefined) {
    body.NetworkingConfig = {
      EndpointsConfig: { [primary.name]: { Aliases: [...(primary.aliases ?? [])] } },
    };
  }
  return dropUndefined(body);
}

/** The `networksAdvanced` entries to connect after create: every one but the network mode's. */
export function additionalNetworks(args: PlainContainerArgs): { name: string; aliases: string[] }[] {
  const mode = args.networkMode ?? "bridge";
  return (args.networksAdvanced ?? [])
    .filter((n) => n.name !== mode)
    .map((n) => ({ name: n.name, aliases: [...(n.aliases ?? [])] }));
}

/**
 * Properties of `docker.ContainerArgs` the mapping understands (the rest must be unset): the container body's, then
 * the Pulumi resource's own lifecycle settings, which the local provider implements. The provider accepts exactly
 * these.
 */
export const MAPPED_CONTAINER_PROPERTIES: readonly string[] = [
  "image",
  "command",
  "entrypoints",
  "user",
  "envs",
  "workingDir",
  "hostname",
  "labels",
  "ports",
  "publishAllPorts",
  "capabilities",
  "securityOpts",
  "privileged",
  "readOnly",
  "tmpfs",
  "networkMode",
  "networksAdvanced",
  "ipcMode",
  "pidMode",
  "usernsMode",
  "restart",
  "mounts",
  "volumes",
  "devices",
  "sysctls",
  "groupAdds",
  "ulimits",
  "shmSize",
  "runtime",
  "init",
  "logDriver",
  "logOpts",
  "memory",
  "memorySwap",
  "cpus",
  "cpuShares",
  "stopSignal",
  "stopTimeout",
  "tty",
  "stdinOpen",
  // Lifecycle settings of the Pulumi resource, not of the container body.
  "attach",
  "logs",
  "mustRun",
  "rm",
  "start",
  "name",
  "waitTimeout",
  "destroyGraceSeconds",
  "removeVolumes",
];
const MAPPED = new Set<string>(MAPPED_CONTAINER_PROPERTIES);

function dropUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
