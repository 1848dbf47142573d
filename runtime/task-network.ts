/**
 * A proxy-mode task's network: an internal network of its own that holds only the task and the project's proxy,
 * opened before the task's container is created and closed after it.
 */
import type Dockerode from "dockerode";
import { LABELS, type LaunchSpec, projectLabels } from "../components/model";
import { isNotFound } from "./docker/client";
import { LaunchRefused } from "./launch-errors";
import type { Preflight } from "./launcher";

export interface TaskNetwork {
  readonly name: string;
  readonly network: Dockerode.Network;
  readonly proxy: Dockerode.Container;
  readonly subnet: string;
  /** The proxy's address on the task's network. */
  readonly proxyIp: string;
}

/** Disconnects the proxy from a task's network and removes the network (also when the task never started). */
export async function closeTaskNetwork(docker: Dockerode, net: TaskNetwork): Promise<void> {
  try {
    await net.network.disconnect({ Container: net.proxy.id, Force: true });
  } catch (e) {
    if (!isNotFound(e) && !/is not connected/.test(String(e))) throw e;
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
 * Proxy mode: an internal network of the task's own (inter-container traffic allowed: it holds only the task and
 * the proxy), with the proxy connected under its name `<project>-proxy`. Removed after the task.
 */
export async function openTaskNetwork(
  docker: Dockerode,
  proxy: Dockerode.Container | undefined,
  spec: LaunchSpec,
  id: string,
  name: string,
): Promise<TaskNetwork> {
  if (proxy === undefined) {
    throw new LaunchRefused(spec.template, [
      `template "${spec.template}" sends traffic through the proxy, and project "${spec.project}" has no running proxy (start it with \`up\`)`,
    ]);
  }
  const network = await docker.createNetwork({
    Name: name,
    Driver: "bridge",
    Internal: true,
    Labels: { ...projectLabels(spec.project, "network", spec.template), [LABELS.task]: id },
  });
  const opened: TaskNetwork = { name, network, proxy, subnet: "", proxyIp: "" };
  try {
    await network.connect({
      Container: proxy.id,
      EndpointConfig: { Aliases: [spec.egress.proxyHost ?? ""] },
    });
    const info = (await network.inspect()) as { IPAM?: { Config?: { Subnet?: string }[] } };
    // Only a gVisor task needs the proxy's address (see withProxyHost).
    let proxyIp = "";
    if (spec.runtime === "runsc") {
      const own = (await proxy.inspect()) as {
        NetworkSettings?: { Networks?: Record<string, { IPAddress?: string }> };
      };
      proxyIp = own.NetworkSettings?.Networks?.[name]?.IPAddress ?? "";
    }
    return { ...opened, subnet: info.IPAM?.Config?.[0]?.Subnet ?? "", proxyIp };
  } catch (e) {
    await closeTaskNetwork(docker, opened);
    throw e;
  }
}

/**
 * gVisor's own network stack does not reach the engine's embedded DNS (127.0.0.11 is answered by the engine's
 * rules in the task's network namespace, which gVisor's stack never passes): a runsc task finds the proxy by a
 * hosts entry with its address on the task's network. The body with the entry is judged by the preflight again.
 */
export function withProxyHost(
  body: Dockerode.ContainerCreateOptions,
  spec: LaunchSpec,
  net: TaskNetwork,
  preflight: Preflight,
): Dockerode.ContainerCreateOptions {
  if (spec.runtime !== "runsc" || spec.egress.proxyHost === undefined) return body;
  if (net.proxyIp === "") {
    throw new LaunchRefused(spec.template, [
      `the proxy has no address on the task's network ${net.name}, and a gVisor task can reach it by address only`,
    ]);
  }
  const amended = {
    ...body,
    HostConfig: { ...body.HostConfig, ExtraHosts: [`${spec.egress.proxyHost}:${net.proxyIp}`] },
  };
  const violations = preflight(amended, spec);
  if (violations.length > 0) throw new LaunchRefused(spec.template, violations);
  return amended;
}
