import type * as docker from "@pulumi/docker";
import type * as pulumi from "@pulumi/pulumi";
import type { LaunchSpec } from "../spec/launch";

/** The one writable folder of a task container: a host folder (bind) or a Docker volume. */
export interface JobMount {
  readonly type: "bind" | "volume";
  /** The host folder (bind) or the volume's name (volume). */
  readonly source: pulumi.Input<string>;
}

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
  } = {},
): docker.ContainerArgs {
  const command = overrides.command
    ? ["timeout", "-s", "KILL", String(spec.timeoutSeconds), ...overrides.command]
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
    networkMode: spec.network,
    ipcMode: "private",
    publishAllPorts: false,
    ports: [],
    mounts: [{ type: job.type, source: job.source, target: spec.jobFolder.containerPath, readOnly: false }],
    envs: Object.entries(spec.env).map(([k, v]) => `${k}=${v}`),
    labels: dockerLabels(overrides.labels ?? spec.labels),
    workingDir: spec.jobFolder.containerPath,
  };
  if (spec.runtime !== "runc") args.runtime = spec.runtime;
  return args;
}
