import type Dockerode from "dockerode";
import { ICC_OPTION, proxyContainerArgs } from "../components/docker/containerArgs";
import {
  egressNetworkName,
  LABELS,
  type ProxyDecision,
  type ProxySpec,
  parseDecisionLog,
  projectLabels,
} from "../components/model";
import { demuxLogs, isNotFound } from "./docker/client";
import { containerCreateBody, type PlainContainerArgs } from "./docker/createBody";

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
 * Makes sure the project's proxy runs with the configuration of `proxy` and answers; returns its container. A proxy
 * with another configuration (its `sandbox.spec-hash` label) is replaced. Creates the project network (internal,
 * inter-container traffic off, as the component does) and the default egress network when they are missing.
 */
export async function ensureProxy(
  docker: Dockerode,
  proxy: ProxySpec,
  options: ProxyOptions = {},
): Promise<Dockerode.Container> {
  const existing = docker.getContainer(proxy.name);
  try {
    const info = await existing.inspect();
    if (info.State.Running && info.Config.Labels?.[LABELS.specHash] === proxy.configHash) return existing;
    await existing.remove({ force: true });
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
  const labels = projectLabels(proxy.project, "network");
  await ensureNetwork(docker, proxy.projectNetwork, {
    Name: proxy.projectNetwork,
    Driver: "bridge",
    Internal: true,
    Options: { [ICC_OPTION]: "false" },
    Labels: labels,
  });
  const egress = options.egressNetwork ?? egressNetworkName(proxy.project);
  if (options.egressNetwork === undefined) {
    await ensureNetwork(docker, egress, { Name: egress, Driver: "bridge", Internal: false, Labels: labels });
  }
  const container = await docker.createContainer(proxyCreateBody(proxy, egress, options.extraHosts));
  await docker.getNetwork(proxy.projectNetwork).connect({
    Container: container.id,
    EndpointConfig: { Aliases: [proxy.name] },
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

/** The running proxy of a project (started by `up` or by {@link ensureProxy}), or undefined. */
export async function findProxy(
  docker: Dockerode,
  project: string,
): Promise<Dockerode.Container | undefined> {
  const found = await docker.listContainers({
    filters: { label: [`${LABELS.project}=${project}`, `${LABELS.role}=proxy`] },
  });
  const first = found[0];
  return first === undefined ? undefined : docker.getContainer(first.Id);
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
