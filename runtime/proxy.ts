import type Dockerode from "dockerode";
import { ICC_OPTION, proxyContainerArgs } from "../components/docker/containerArgs";
import {
  egressNetworkName,
  LABELS,
  type ProxyDecision,
  type ProxySpec,
  parseDecisionLog,
  projectLabels,
  proxyUnit,
} from "../components/model";
import { demuxLogs, isNotFound } from "./docker/client";
import { containerCreateBody, type PlainContainerArgs } from "./docker/createBody";
import { LaunchRefused } from "./launch-errors";

/** How the runtime runs a project's proxy. */
export interface ProxyOptions {
  /**
   * The network the proxy reaches the outside through. Defaults to `<project>-egress`, a plain bridge network the
   * runtime creates (labelled for the off switch). Tests pass an `internal` network of their own, where the
   * "outside" server lives, so that nothing can leave the machine.
   */
  readonly egressNetwork?: string;
  /**
   * Extra `/etc/hosts` entries of the proxy (`name:address`): Squid reads them before DNS. For tests that point an
   * allowed name at a refused address; never needed in use.
   */
  readonly extraHosts?: readonly string[];
  /** Seconds to wait for Squid to accept connections. Defaults to 30. */
  readonly readySeconds?: number;
}

const PROXY_READY = /Accepting HTTP Socket connections/;

/**
 * The Engine API body of the proxy container: exactly `proxyContainerArgs` (the component's), with the process limit
 * the launcher gives tasks, plus the test resolver entries when asked. Networks other than the egress network are
 * connected after creation (the create body takes one).
 */
export function proxyCreateBody(
  proxy: ProxySpec,
  egressNetwork: string,
  extraHosts: readonly string[] = [],
): Dockerode.ContainerCreateOptions {
  const { name, networksAdvanced: _attachments, ...args } = proxyContainerArgs(proxy, egressNetwork);
  const body = containerCreateBody(args as PlainContainerArgs, {
    name: name as string,
    pidsLimit: proxy.resources.pids,
  });
  if (extraHosts.length > 0 && body.HostConfig !== undefined) body.HostConfig.ExtraHosts = [...extraHosts];
  return body;
}

/** Creates the network `name` unless it exists. */
export async function ensureNetwork(
  docker: Dockerode,
  name: string,
  create: Dockerode.NetworkCreateOptions,
): Promise<void> {
  try {
    await docker.getNetwork(name).inspect();
  } catch (e) {
    if (!isNotFound(e)) throw e;
    await docker.createNetwork({ ...create, Name: name });
  }
}

/**
 * Makes sure template `template`'s own proxy (see service-units) runs with the configuration of `proxy` and
 * answers; returns its container, or undefined when the template does not use the proxy. A proxy with another
 * configuration (its `sandbox.spec-hash` label) is replaced. Creates the project network (internal,
 * inter-container traffic off, as the component does) and the default egress network when they are missing. For
 * tests and library users that run no stack: the CLI only ever uses the proxy `up` started ({@link currentProxy}).
 */
export async function ensureProxy(
  docker: Dockerode,
  proxy: ProxySpec,
  template: string,
  options: ProxyOptions = {},
): Promise<Dockerode.Container | undefined> {
  const unit = proxyUnit(proxy, template);
  if (unit === undefined) return undefined;
  const existing = docker.getContainer(unit.name);
  try {
    const info = await existing.inspect();
    if (info.State.Running && info.Config.Labels?.[LABELS.specHash] === unit.configHash) return existing;
    await existing.remove({ force: true });
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
  const labels = projectLabels(unit.project, "network");
  await ensureNetwork(docker, unit.projectNetwork, {
    Name: unit.projectNetwork,
    Driver: "bridge",
    Internal: true,
    Options: { [ICC_OPTION]: "false" },
    Labels: labels,
  });
  const egress = options.egressNetwork ?? egressNetworkName(unit.project);
  if (options.egressNetwork === undefined) {
    await ensureNetwork(docker, egress, { Name: egress, Driver: "bridge", Internal: false, Labels: labels });
  }
  const container = await docker.createContainer(proxyCreateBody(unit, egress, options.extraHosts));
  await docker.getNetwork(unit.projectNetwork).connect({
    Container: container.id,
    EndpointConfig: { Aliases: [unit.name] },
  });
  await container.start();
  await waitReady(container, PROXY_READY, "the proxy", (options.readySeconds ?? 30) * 1000);
  return container;
}

/** Waits until a service container's stderr says `ready`; a container that stops or takes too long is an error. */
export async function waitReady(
  container: Dockerode.Container,
  ready: RegExp,
  what: string,
  timeoutMs: number,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const logs = demuxLogs(
      (await container.logs({ stdout: true, stderr: true })) as Buffer,
      Number.POSITIVE_INFINITY,
    );
    if (ready.test(logs.stderr)) return;
    const info = await container.inspect();
    if (!info.State.Running || Date.now() > until) {
      throw new Error(
        `${what} ${info.Name.replace(/^\//, "")} did not start: ${logs.stderr.trim().split("\n").slice(-5).join(" | ")}`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Template `template`'s running proxy in project `project` (started by `up` or by {@link ensureProxy}), or undefined. */
export async function findProxy(
  docker: Dockerode,
  project: string,
  template: string,
): Promise<Dockerode.Container | undefined> {
  return runningService(docker, project, "proxy", template);
}

/** The running service container of `role` for one template of a project (by labels), or undefined. */
export async function runningService(
  docker: Dockerode,
  project: string,
  role: "proxy" | "broker",
  template: string,
): Promise<Dockerode.Container | undefined> {
  const found = await docker.listContainers({
    filters: {
      label: [`${LABELS.project}=${project}`, `${LABELS.role}=${role}`, `${LABELS.template}=${template}`],
    },
  });
  const first = found[0];
  return first === undefined ? undefined : docker.getContainer(first.Id);
}

/**
 * Template `template`'s proxy as `up` deployed it, for a launch: undefined when none runs (the launch is refused,
 * naming `up`), an error when the one running was made from another configuration than `proxy` (the stack changed
 * and was not deployed). Never starts or replaces one: after the off switch, nothing comes back until `up`.
 */
export async function currentProxy(
  docker: Dockerode,
  proxy: ProxySpec,
  template: string,
): Promise<Dockerode.Container | undefined> {
  const unit = proxyUnit(proxy, template);
  if (unit === undefined) return undefined;
  const found = await runningService(docker, unit.project, "proxy", template);
  if (found === undefined) return undefined;
  const made = (await found.inspect()).Config.Labels?.[LABELS.specHash];
  if (made !== unit.configHash) {
    throw new LaunchRefused(template, [
      `the proxy of template "${template}" runs another configuration (${made ?? "unlabelled"}) than the stack's (${unit.configHash}); deploy the stack's with \`up\``,
    ]);
  }
  return found;
}

/** True when `ip` (IPv4) lies in `cidr`. */
export function inIpv4Cidr(ip: string, cidr: string): boolean {
  const toInt = (a: string) => a.split(".").reduce((acc, p) => acc * 256 + Number(p), 0);
  const [base = "", lenText = "32"] = cidr.split("/");
  if (!/^\d+\.\d+\.\d+\.\d+$/.test(ip) || !/^\d+\.\d+\.\d+\.\d+$/.test(base)) return false;
  const size = 2 ** (32 - Number(lenText));
  const start = Math.floor(toInt(base) / size) * size;
  const n = toInt(ip);
  return n >= start && n < start + size;
}

/**
 * The proxy's decisions about one task: lines logged since `sinceMs` whose client is on the task's own network
 * (which holds only the task and the proxy, so its subnet names the task).
 */
export async function taskDecisions(
  proxy: Dockerode.Container,
  subnet: string,
  sinceMs: number,
): Promise<ProxyDecision[]> {
  const raw = (await proxy.logs({
    stdout: true,
    stderr: false,
    since: Math.floor(sinceMs / 1000) - 1,
  })) as Buffer;
  return parseDecisionLog(demuxLogs(raw, Number.POSITIVE_INFINITY).stdout).filter(
    (d) => d.time * 1000 >= sinceMs - 1000 && inIpv4Cidr(d.client, subnet),
  );
}
