import type * as docker from "@pulumi/docker";
import type * as pulumi from "@pulumi/pulumi";
import {
  BROKER_CONFIG_ENV,
  BROKER_RUN_DIR,
  type BrokerSpec,
  deadline,
  type LaunchSpec,
  PER_TASK_NETWORK,
  PROXY_CONFIG_ENV,
  PROXY_RUN_DIR,
  type ProxySpec,
  parseUser,
  TASK_LOG_FILE_MB,
  TASK_LOG_FILES,
} from "../model";

/** The one writable folder of a task container: a host folder (bind) or a Docker volume. */
export interface JobMount {
  readonly type: "bind" | "volume";
  /** The host folder (bind) or the volume's name (volume). */
  readonly source: pulumi.Input<string>;
}

/** Docker's bridge option that stops containers on one network from reaching each other. */
export const ICC_OPTION = "com.docker.network.bridge.enable_icc";

/**
 * Docker's bridge option that gives the bridge no IPv4 address on the host. An internal network's gateway is
 * otherwise an address of the host itself, and a service bound to every host address answers a task there (and,
 * through it, on the host's other bridges): with it, the task's network holds no host address at all.
 */
export const NO_HOST_ADDRESS_OPTION = "com.docker.network.bridge.inhibit_ipv4";

/** The options of a network that holds tasks (its own, or a probe's): no address of the host on it. */
export const TASK_NETWORK_OPTIONS: Readonly<Record<string, string>> = { [NO_HOST_ADDRESS_OPTION]: "true" };

/** Options of the `/tmp` tmpfs: sized, not executable, no setuid, no devices, writable by any user. */
export function tmpfsOptions(sizeMb: number): string {
  return `rw,noexec,nosuid,nodev,size=${sizeMb}m,mode=1777`;
}

/** Docker labels as `@pulumi/docker` takes them: a sorted list of `{ label, value }`. */
export function dockerLabels(labels: Readonly<Record<string, string>>): docker.types.input.ContainerLabel[] {
  return Object.entries(labels)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([label, value]) => ({ label, value }));
}

/**
 * The exact `docker.Container` arguments of a hardened task run. Every wall is a known, literal value so that the
 * policy pack sees it at preview. The one wall `@pulumi/docker` cannot express, the process limit, is added by the
 * runtime launcher (HostConfig.PidsLimit) and checked by the probe.
 *
 * Seccomp is left to the engine's default profile: Docker applies it to every container unless a `seccomp=`
 * security option replaces it, and the probe proves `Seccomp: 2` inside the container.
 */
export function hardenedContainerArgs(
  spec: LaunchSpec,
  job: JobMount,
  overrides: {
    readonly command?: readonly string[];
    readonly labels?: Readonly<Record<string, string>>;
    /** The task's own network, required in proxy mode (the spec says only that there is one per task). */
    readonly network?: string;
  } = {},
): docker.ContainerArgs {
  if (spec.network === PER_TASK_NETWORK && overrides.network === undefined) {
    throw new Error(
      `template "${spec.template}" sends traffic through the proxy: its container needs the name of its own task network`,
    );
  }
  const command = overrides.command
    ? deadline(spec.timeoutSeconds, overrides.command, "engine-init")
    : [...spec.commandWithDeadline];
  const args: docker.ContainerArgs = {
    image: spec.image,
    command,
    user: spec.user,
    capabilities: { drops: [...spec.capDrop], adds: [] },
    securityOpts: ["no-new-privileges:true"],
    privileged: false,
    readOnly: true,
    tmpfs: { [spec.tmpfs.path]: tmpfsOptions(spec.tmpfs.sizeMb) },
    memory: spec.resources.memoryMb,
    memorySwap: spec.resources.memoryMb,
    cpus: String(spec.resources.vcpu),
    restart: "no",
    // A real init as PID 1: the kernel ignores SIGKILL sent to a namespace's PID 1 from inside it, so without one
    // the in-container `timeout` (which signals from a child) could never end a task that it had exec'd as PID 1.
    // The init also reaps what a fork bomb leaves behind.
    init: true,
    networkMode: spec.network === PER_TASK_NETWORK ? overrides.network : spec.network,
    ipcMode: "private",
    publishAllPorts: false,
    ports: [],
    // The engine keeps the last TASK_LOG_FILES × TASK_LOG_FILE_MB of the task's output, whatever it prints.
    logDriver: "json-file",
    logOpts: { "max-size": `${TASK_LOG_FILE_MB}m`, "max-file": String(TASK_LOG_FILES) },
    mounts: [{ type: job.type, source: job.source, target: spec.jobFolder.containerPath, readOnly: false }],
    envs: Object.entries(spec.env).map(([k, v]) => `${k}=${v}`),
    labels: dockerLabels(overrides.labels ?? spec.labels),
    workingDir: spec.jobFolder.containerPath,
  };
  if (spec.runtime !== "runc") args.runtime = spec.runtime;
  return args;
}

/** A network the proxy joins besides its egress network, with the names it answers to there. */
export interface ProxyAttachment {
  readonly name: pulumi.Input<string>;
  readonly aliases: readonly string[];
}

/** A project service container (the proxy, the broker): what differs between them. */
interface ServiceContainer {
  readonly name: string;
  readonly image: string;
  readonly user: string;
  readonly resources: { readonly vcpu: number; readonly memoryMb: number; readonly tmpfsMb: number };
  /** Its tmpfs for runtime files (the root stays read-only). */
  readonly runDir: string;
  readonly envs: pulumi.Input<pulumi.Input<string>[]>;
  readonly labels: Readonly<Record<string, string>>;
}

/**
 * A service container's `docker.Container` arguments: hardened like a task (non-root, every capability dropped,
 * no-new-privileges, read-only root with a tmpfs for its runtime files, memory and CPU limits, no ports). Its
 * network at creation is the egress network; `attachments` are the project network and any task networks. It is
 * not restarted by the engine: the runtime starts it again when it is gone, and `up` replaces it.
 */
function serviceContainerArgs(
  service: ServiceContainer,
  egressNetwork: pulumi.Input<string>,
  attachments: readonly ProxyAttachment[],
): docker.ContainerArgs {
  const { uid, gid } = parseUser(service.user);
  const args: docker.ContainerArgs = {
    name: service.name,
    image: service.image,
    user: service.user,
    capabilities: { drops: ["ALL"], adds: [] },
    securityOpts: ["no-new-privileges:true"],
    privileged: false,
    readOnly: true,
    tmpfs: {
      [service.runDir]: `rw,noexec,nosuid,nodev,size=${service.resources.tmpfsMb}m,uid=${uid},gid=${gid},mode=0700`,
      "/tmp": tmpfsOptions(service.resources.tmpfsMb),
    },
    memory: service.resources.memoryMb,
    memorySwap: service.resources.memoryMb,
    cpus: String(service.resources.vcpu),
    restart: "no",
    init: true,
    networkMode: egressNetwork,
    ipcMode: "private",
    publishAllPorts: false,
    ports: [],
    envs: service.envs,
    labels: dockerLabels(service.labels),
  };
  if (attachments.length > 0) {
    args.networksAdvanced = attachments.map((a) => ({ name: a.name, aliases: [...a.aliases] }));
  }
  return args;
}

/**
 * The proxy's `docker.Container` arguments (see serviceContainerArgs), with its generated configuration in the
 * environment; on its attachments it answers to `<project>-proxy`.
 */
export function proxyContainerArgs(
  proxy: ProxySpec,
  egressNetwork: pulumi.Input<string>,
  attachments: readonly ProxyAttachment[] = [],
): docker.ContainerArgs {
  return serviceContainerArgs(
    { ...proxy, runDir: PROXY_RUN_DIR, envs: [`${PROXY_CONFIG_ENV}=${proxy.config}`] },
    egressNetwork,
    attachments,
  );
}

/**
 * The broker's `docker.Container` arguments (see serviceContainerArgs): its generated configuration and the
 * credentials, each `NAME=value` for a variable of `broker.credentials` (a secret output in a stack). The broker is
 * the only container that is given them; on its attachments it answers to `<project>-broker`.
 */
export function brokerContainerArgs(
  broker: BrokerSpec,
  credentialEnvs: readonly pulumi.Input<string>[],
  egressNetwork: pulumi.Input<string>,
  attachments: readonly ProxyAttachment[] = [],
): docker.ContainerArgs {
  const envs: pulumi.Input<string>[] = [`${BROKER_CONFIG_ENV}=${broker.config}`, ...credentialEnvs];
  return serviceContainerArgs({ ...broker, runDir: BROKER_RUN_DIR, envs }, egressNetwork, attachments);
}
