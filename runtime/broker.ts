/**
 * The secrets broker on a Docker engine: the container `up` runs (or the runtime starts for tests and library use,
 * given the credentials), how a task's network finds it, and the calls it logged for one task.
 */
import { createHash } from "node:crypto";
import type Dockerode from "dockerode";
import { brokerContainerArgs, ICC_OPTION } from "../components/docker/containerArgs";
import {
  type BrokerCall,
  type BrokerSpec,
  brokerUnit,
  egressNetworkName,
  LABELS,
  parseBrokerLog,
  projectLabels,
} from "../components/model";
import { brokerCredentialValue } from "../components/model/haproxy";
import { demuxLogs, isNotFound } from "./docker/client";
import { containerCreateBody, type PlainContainerArgs } from "./docker/createBody";
import { ensureNetwork, inIpv4Cidr, runningService, waitReady } from "./proxy";

/** How the runtime runs a project's broker. */
export interface BrokerOptions {
  /**
   * The network the broker reaches upstreams through. Defaults to `<project>-egress`, the plain bridge network the
   * proxy uses too. Tests pass an `internal` network of their own, where the "upstream" lives.
   */
  readonly egressNetwork?: string;
  /** Seconds to wait for HAProxy to serve. Defaults to 30. */
  readonly readySeconds?: number;
}

const BROKER_READY = /sandbox-broker: ready/;

/**
 * The broker's credentials as its variables: `NAME=value` for each route templates use, from `values` (variable →
 * the credential as the config holds it). A missing or unusable credential is an error naming its config key,
 * never its value.
 */
export function brokerCredentialEnvs(broker: BrokerSpec, values: Readonly<Record<string, string>>): string[] {
  return broker.credentials.map((ref) => {
    const raw = values[ref.variable];
    if (raw === undefined)
      throw new Error(`the credential of route ${ref.route} (${ref.configKey}) was not given`);
    const checked = brokerCredentialValue(raw);
    if ("problem" in checked) throw new Error(`the credential in ${ref.configKey} ${checked.problem}`);
    return `${ref.variable}=${checked.value}`;
  });
}

/** The Engine API body of the broker container: exactly the component's arguments, with its process limit. */
export function brokerCreateBody(
  broker: BrokerSpec,
  credentialEnvs: readonly string[],
  egressNetwork: string,
): Dockerode.ContainerCreateOptions {
  const {
    name,
    networksAdvanced: _attachments,
    ...args
  } = brokerContainerArgs(broker, credentialEnvs, egressNetwork);
  const body = containerCreateBody(args as PlainContainerArgs, {
    name: name as string,
    pidsLimit: broker.resources.pids,
  });
  return body;
}

/** What the runtime's broker was made from: its configuration and its credentials (a changed one replaces it). */
function brokerHash(broker: BrokerSpec, credentialEnvs: readonly string[]): string {
  return createHash("sha256")
    .update([broker.configHash, ...credentialEnvs].join("\n"))
    .digest("hex")
    .slice(0, 16);
}

/**
 * Makes sure template `template`'s own broker (see service-units: its routes and their credentials only) runs with
 * the configuration of `broker` and these credentials, and serves; returns its container, or undefined when the
 * template calls no route. One made from anything else is replaced. Creates the project network and the default
 * egress network when they are missing. For tests and library users that run no stack: the CLI only uses the
 * broker `up` started.
 */
export async function ensureBroker(
  docker: Dockerode,
  broker: BrokerSpec,
  template: string,
  credentials: Readonly<Record<string, string>>,
  options: BrokerOptions = {},
): Promise<Dockerode.Container | undefined> {
  const unit = brokerUnit(broker, template);
  if (unit === undefined) return undefined;
  const envs = brokerCredentialEnvs(unit, credentials);
  const made = brokerHash(unit, envs);
  const existing = docker.getContainer(unit.name);
  try {
    const info = await existing.inspect();
    if (info.State.Running && info.Config.Labels?.[LABELS.specHash] === made) return existing;
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
  const body = brokerCreateBody(unit, envs, egress);
  body.Labels = { ...body.Labels, [LABELS.specHash]: made };
  const container = await docker.createContainer(body);
  await docker.getNetwork(unit.projectNetwork).connect({
    Container: container.id,
    EndpointConfig: { Aliases: [unit.name] },
  });
  await container.start();
  await waitReady(container, BROKER_READY, "the broker", (options.readySeconds ?? 30) * 1000);
  return container;
}

/** Template `template`'s running broker in project `project` (started by `up` or by {@link ensureBroker}), or undefined. */
export async function findBroker(
  docker: Dockerode,
  project: string,
  template: string,
): Promise<Dockerode.Container | undefined> {
  return runningService(docker, project, "broker", template);
}

/**
 * The broker's calls for one task: lines logged since `sinceMs` whose client is on the task's own network (which
 * holds only the task and its peers, so its subnet names the task).
 */
export async function taskCalls(
  broker: Dockerode.Container,
  subnet: string,
  sinceMs: number,
): Promise<BrokerCall[]> {
  const raw = (await broker.logs({
    stdout: true,
    stderr: false,
    since: Math.floor(sinceMs / 1000) - 1,
  })) as Buffer;
  return parseBrokerLog(demuxLogs(raw, Number.POSITIVE_INFINITY).stdout).filter(
    (c) => c.time * 1000 >= sinceMs - 1000 && inIpv4Cidr(c.client, subnet),
  );
}
