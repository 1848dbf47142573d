/**
 * A networked task's network: an internal network of its own that holds only the task and what it may reach (the
 * project's proxy in proxy mode, the project's broker when it calls broker routes), opened before the task's
 * container is created and closed after it.
 */
import type Dockerode from "dockerode";
import { TASK_NETWORK_OPTIONS } from "../components/docker/containerArgs";
import { LABELS, type LaunchSpec, projectLabels } from "../components/model";
import { isNotFound } from "./docker/client";
import type { Preflight } from "./launch-errors";
import { LaunchRefused } from "./launch-errors";

/** A container a task's network holds besides the task, under the name the task resolves it by. */
export interface TaskNetworkMember {
  readonly container: Dockerode.Container;
  readonly alias: string;
  /** Its address on the task's network (filled for gVisor tasks only, which find it by a hosts entry). */
  readonly ip: string;
}

export interface TaskNetwork {
  readonly name: string;
  readonly network: Dockerode.Network;
  /** The proxy (proxy mode). */
  readonly proxy?: TaskNetworkMember;
  /** The broker (a template with broker routes). */
  readonly broker?: TaskNetworkMember;
  readonly subnet: string;
}

/** The containers a task's network may hold: the project's running proxy and broker, when there are. */
export interface TaskNetworkPeers {
  readonly proxy?: Dockerode.Container;
  readonly broker?: Dockerode.Container;
}

/** Disconnects the proxy and the broker from a task's network and removes it (also when the task never started). */
export async function closeTaskNetwork(docker: Dockerode, net: TaskNetwork): Promise<void> {
  for (const member of [net.proxy, net.broker]) {
    if (member === undefined) continue;
    try {
      await net.network.disconnect({ Container: member.container.id, Force: true });
    } catch (e) {
      if (!isNotFound(e) && !/is not connected/.test(String(e))) throw e;
    }
  }
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      await docker.getNetwork(net.name).remove();
      return;
    } catch (e) {
      if (isNotFound(e)) return;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/**
 * An internal network of the task's own (inter-container traffic allowed: it holds only the task and its peers;
 * the bridge has no host address, so no host service answers on it),
 * with the proxy connected as `<project>-proxy` in proxy mode and the broker as `<project>-broker` when the template
 * calls broker routes. A peer the template needs and the project does not run refuses the launch. Removed after the
 * task.
 */
export async function openTaskNetwork(
  docker: Dockerode,
  peers: TaskNetworkPeers,
  spec: LaunchSpec,
  id: string,
  name: string,
): Promise<TaskNetwork> {
  const wanted: { role: "proxy" | "broker"; container: Dockerode.Container; alias: string }[] = [];
  if (spec.egress.mode === "proxy") {
    if (peers.proxy === undefined) {
      throw new LaunchRefused(spec.template, [
        `template "${spec.template}" sends traffic through the proxy, and project "${spec.project}" has no running proxy (start it with \`up\`)`,
      ]);
    }
    wanted.push({ role: "proxy", container: peers.proxy, alias: spec.egress.proxyHost ?? "" });
  }
  if (spec.broker !== undefined) {
    if (peers.broker === undefined) {
      throw new LaunchRefused(spec.template, [
        `template "${spec.template}" calls the broker (${spec.broker.routes.join(", ")}), and project "${spec.project}" has no running broker (start it with \`up\`)`,
      ]);
    }
    wanted.push({ role: "broker", container: peers.broker, alias: spec.broker.host });
  }
  const network = await docker.createNetwork({
    Name: name,
    Driver: "bridge",
    Internal: true,
    Options: { ...TASK_NETWORK_OPTIONS },
    Labels: { ...projectLabels(spec.project, "network", spec.template), [LABELS.task]: id },
  });
  let opened: TaskNetwork = { name, network, subnet: "" };
  try {
    for (const w of wanted) {
      await network.connect({ Container: w.container.id, EndpointConfig: { Aliases: [w.alias] } });
      opened = { ...opened, [w.role]: { container: w.container, alias: w.alias, ip: "" } };
    }
    const info = (await network.inspect()) as { IPAM?: { Config?: { Subnet?: string }[] } };
    opened = { ...opened, subnet: info.IPAM?.Config?.[0]?.Subnet ?? "" };
    // Only a gVisor task needs its peers' addresses (see withPeerHosts).
    if (spec.runtime === "runsc") {
      for (const w of wanted) {
        const own = (await w.container.inspect()) as {
          NetworkSettings?: { Networks?: Record<string, { IPAddress?: string }> };
        };
        const ip = own.NetworkSettings?.Networks?.[name]?.IPAddress ?? "";
        opened = { ...opened, [w.role]: { container: w.container, alias: w.alias, ip } };
      }
    }
    return opened;
  } catch (e) {
    await closeTaskNetwork(docker, opened);
    throw e;
  }
}

/**
 * gVisor's own network stack does not reach the engine's embedded DNS (127.0.0.11 is answered by the engine's
 * rules in the task's network namespace, which gVisor's stack never passes): a runsc task finds the proxy and the
 * broker by hosts entries with their addresses on the task's network. The body with the entries is judged by the
 * preflight again.
 */
export function withPeerHosts(
  body: Dockerode.ContainerCreateOptions,
  spec: LaunchSpec,
  net: TaskNetwork,
  preflight: Preflight,
): Dockerode.ContainerCreateOptions {
  if (spec.runtime !== "runsc") return body;
  const members = [net.proxy, net.broker].filter((m): m is TaskNetworkMember => m !== undefined);
  if (members.length === 0) return body;
  const missing = members.find((m) => m.ip === "");
  if (missing !== undefined) {
    throw new LaunchRefused(spec.template, [
      `${missing.alias} has no address on the task's network ${net.name}, and a gVisor task can reach it by address only`,
    ]);
  }
  const amended = {
    ...body,
    HostConfig: { ...body.HostConfig, ExtraHosts: members.map((m) => `${m.alias}:${m.ip}`) },
  };
  const violations = preflight(amended, spec);
  if (violations.length > 0) throw new LaunchRefused(spec.template, violations);
  return amended;
}
