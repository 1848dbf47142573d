/**
 * The resources the local Docker provider serves, in `@pulumi/docker` 5.2.0's type tokens and property names, on the
 * real Engine API. Every property a resource accepts is listed here; anything else fails `check` by name.
 */
import type Dockerode from "dockerode";
import { demuxLogs, isNotFound } from "../../runtime/docker/client";
import {
  additionalNetworks,
  containerCreateBody,
  MAPPED_CONTAINER_PROPERTIES,
  type PlainContainerArgs,
} from "../../runtime/docker/createBody";

export const CONTAINER = "docker:index/container:Container";
export const NETWORK = "docker:index/network:Network";
export const VOLUME = "docker:index/volume:Volume";

type Label = { label: string; value: string };
export type Props = Record<string, unknown>;

/**
 * The label that ties an object to the Pulumi resource that created it. After an interrupted `up` the engine
 * creates the resource again; the provider then finds what the first attempt left instead of duplicating it.
 */
export const URN_LABEL = "sandbox.pulumi-urn";

/** The properties each resource implements (inputs); the official plugin supports more. */
export const SUPPORTED: Readonly<Record<string, readonly string[]>> = {
  [NETWORK]: ["name", "driver", "internal", "attachable", "options", "labels", "ipamConfigs", "ipamDriver"],
  [VOLUME]: ["name", "driver", "driverOpts", "labels"],
  [CONTAINER]: MAPPED_CONTAINER_PROPERTIES,
};

/** Outputs a resource computes (never inputs). */
const COMPUTED: Readonly<Record<string, readonly string[]>> = {
  [CONTAINER]: ["containerLogs", "exitCode", "networkDatas", "bridge"],
  [NETWORK]: ["scope"],
  [VOLUME]: ["mountpoint"],
};

/** The pulumi-generated keys every resource may carry in its inputs. */
const META = ["__defaults"];

/** The check failures for properties this provider does not implement: named, never silently ignored. */
export function unsupportedProperties(type: string, news: Props): { property: string; reason: string }[] {
  const supported = SUPPORTED[type];
  if (supported === undefined)
    return [{ property: "", reason: `resource type ${type} is not served by this provider` }];
  return Object.keys(news)
    .filter(
      (k) =>
        news[k] !== undefined &&
        !supported.includes(k) &&
        !META.includes(k) &&
        !(COMPUTED[type] ?? []).includes(k),
    )
    .sort()
    .map((property) => ({
      property,
      reason: `property "${property}" of ${type} is not implemented by the toolkit's local Docker provider; the official pulumi-docker plugin supports it (install it, or remove the property)`,
    }));
}

const labelsRecord = (labels: unknown): Record<string, string> =>
  Object.fromEntries(((labels as Label[] | undefined) ?? []).map((l) => [l.label, l.value]));
/** Labels as `@pulumi/docker` lists them, without the provider's own bookkeeping label. */
const labelsList = (labels: Record<string, string> | undefined): Label[] =>
  Object.entries(labels ?? {})
    .filter(([k]) => k !== URN_LABEL)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([label, value]) => ({ label, value }));

/** A random suffix, as Pulumi auto-names resources. */
function autoName(urn: string): string {
  const name = urn.split("::").pop() ?? "resource";
  return `${name}-${Math.random().toString(16).slice(2, 9)}`;
}

// ---------------------------------------------------------------- networks

export async function createNetwork(
  docker: Dockerode,
  urn: string,
  p: Props,
): Promise<{ id: string; outs: Props }> {
  const name = (p.name as string | undefined) ?? autoName(urn);
  const ipam = p.ipamConfigs as { subnet?: string; gateway?: string; ipRange?: string }[] | undefined;
  const net = await docker.createNetwork({
    Name: name,
    Driver: (p.driver as string | undefined) ?? "bridge",
    Internal: (p.internal as boolean | undefined) ?? false,
    Attachable: (p.attachable as boolean | undefined) ?? false,
    Options: (p.options as Record<string, string> | undefined) ?? {},
    Labels: { ...labelsRecord(p.labels), [URN_LABEL]: urn },
    CheckDuplicate: true,
    ...(ipam
      ? {
          IPAM: {
            Driver: (p.ipamDriver as string | undefined) ?? "default",
            Config: ipam.map((c) => ({ Subnet: c.subnet, Gateway: c.gateway, IPRange: c.ipRange })),
          },
        }
      : {}),
  });
  const n = (await docker.getNetwork(net.id).inspect()) as { Scope: string };
  return { id: net.id, outs: { ...p, name, scope: n.Scope } };
}

/** Overrides the keys the state has with what the engine says, so a refresh shows drift. */
function overlay(state: Props, observed: Props): Props {
  const out: Props = { ...state };
  for (const [k, v] of Object.entries(observed)) if (state[k] !== undefined || k === "name") out[k] = v;
  return out;
}

async function readNetworkProps(docker: Dockerode, id: string, state: Props): Promise<Props> {
  const n = (await docker.getNetwork(id).inspect()) as {
    Name: string;
    Driver: string;
    Internal: boolean;
    Attachable: boolean;
    Options?: Record<string, string>;
    Labels?: Record<string, string>;
    Scope: string;
    IPAM?: { Config?: { Subnet?: string; Gateway?: string }[] };
  };
  return overlay(state, {
    name: n.Name,
    driver: n.Driver,
    internal: n.Internal,
    attachable: n.Attachable,
    options: n.Options ?? {},
    labels: labelsList(n.Labels),
    scope: n.Scope,
    ipamConfigs: (n.IPAM?.Config ?? []).map((c) => ({
      subnet: c.Subnet,
      ...(c.Gateway ? { gateway: c.Gateway } : {}),
    })),
  });
}

export async function readNetwork(docker: Dockerode, id: string, state: Props): Promise<Props | undefined> {
  try {
    return await readNetworkProps(docker, id, state);
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

// ---------------------------------------------------------------- volumes

export async function createVolume(
  docker: Dockerode,
  urn: string,
  p: Props,
): Promise<{ id: string; outs: Props }> {
  const name = (p.name as string | undefined) ?? autoName(urn);
  const volume = await docker.createVolume({
    Name: name,
    Driver: (p.driver as string | undefined) ?? "local",
    DriverOpts: (p.driverOpts as Record<string, string> | undefined) ?? {},
    Labels: { ...labelsRecord(p.labels), [URN_LABEL]: urn },
  });
  const info = (await volume.inspect()) as unknown as { Name: string; Mountpoint: string };
  return { id: info.Name, outs: { ...p, name: info.Name, mountpoint: info.Mountpoint } };
}

export async function readVolume(docker: Dockerode, id: string, state: Props): Promise<Props | undefined> {
  try {
    const v = (await docker.getVolume(id).inspect()) as unknown as {
      Name: string;
      Driver: string;
      Options?: Record<string, string> | null;
      Labels?: Record<string, string> | null;
      Mountpoint: string;
    };
    return overlay(state, {
      name: v.Name,
      driver: v.Driver,
      driverOpts: v.Options ?? {},
      labels: labelsList(v.Labels ?? {}),
      mountpoint: v.Mountpoint,
    });
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

// ---------------------------------------------------------------- containers

/** The error for an image that is not on the engine: nothing is ever pulled by this provider. */
export function missingImageMessage(image: string): string {
  return `image "${image}" is not present on the Docker engine, and the toolkit's local provider never pulls; build or load it first (the project's offline test image is built by toolchain/docker.sh)`;
}

export async function createContainer(
  docker: Dockerode,
  urn: string,
  p: Props,
): Promise<{ id: string; outs: Props }> {
  const image = p.image as string;
  try {
    await docker.getImage(image).inspect();
  } catch (e) {
    if (isNotFound(e)) throw new Error(missingImageMessage(image));
    throw e;
  }
  // A container an interrupted create left behind is not in the state: remove it rather than run a second one.
  for (const left of await docker.listContainers({
    all: true,
    filters: { label: [`${URN_LABEL}=${urn}`] },
  })) {
    await removeContainer(docker, left.Id);
  }
  const name = (p.name as string | undefined) ?? autoName(urn);
  const body = containerCreateBody(p as PlainContainerArgs, { name });
  body.Labels = { ...body.Labels, [URN_LABEL]: urn };
  const container = await docker.createContainer(body);
  for (const n of additionalNetworks(p as PlainContainerArgs)) {
    await docker
      .getNetwork(n.name)
      .connect({ Container: container.id, EndpointConfig: { Aliases: n.aliases } });
  }
  const outs: Props = { ...p, name };
  if (p.start === false) return { id: container.id, outs };
  await container.start();
  if (p.attach === true) {
    const timeoutMs = ((p.waitTimeout as number | undefined) ?? 3600) * 1000;
    const status = await Promise.race([
      container.wait() as Promise<{ StatusCode: number }>,
      new Promise<never>((_, reject) =>
        setTimeout(
          () => reject(new Error(`container ${name} did not exit within ${timeoutMs / 1000} s`)),
          timeoutMs,
        ),
      ),
    ]);
    outs.exitCode = status.StatusCode;
    if (p.logs === true) {
      const logs = demuxLogs((await container.logs({ stdout: true, stderr: true, follow: false })) as Buffer);
      outs.containerLogs = logs.stdout + logs.stderr;
    }
    if (p.rm === true) await removeContainer(docker, container.id);
  } else if (p.mustRun !== false) {
    const info = await container.inspect();
    if (!info.State.Running) {
      throw new Error(
        `container ${name} exited with code ${info.State.ExitCode} right after start, and mustRun is true`,
      );
    }
  }
  return { id: container.id, outs };
}

/** Reads a container back: the walls as the engine has them, so that `refresh` shows drift. */
export async function readContainer(docker: Dockerode, id: string, state: Props): Promise<Props | undefined> {
  let info: Dockerode.ContainerInspectInfo;
  try {
    info = await docker.getContainer(id).inspect();
  } catch (e) {
    // A container that ran to its end with `rm` is gone by design: keep the recorded state.
    if (isNotFound(e)) return state.rm === true && state.attach === true ? state : undefined;
    throw e;
  }
  const hc = info.HostConfig as Dockerode.HostConfig & { Init?: boolean; Runtime?: string };
  const props: Props = { ...state, name: info.Name.replace(/^\//, "") };
  // Only what the stack declared is compared: the engine's defaults for undeclared settings are not drift.
  const set = (key: string, value: unknown) => {
    if (state[key] !== undefined) props[key] = value;
  };
  set("readOnly", hc.ReadonlyRootfs ?? false);
  set("privileged", hc.Privileged ?? false);
  set("user", info.Config.User || undefined);
  set("securityOpts", hc.SecurityOpt ?? []);
  set("networkMode", hc.NetworkMode);
  set("restart", hc.RestartPolicy?.Name || "no");
  if (state.capabilities !== undefined) {
    props.capabilities = { adds: hc.CapAdd ?? [], drops: hc.CapDrop ?? [] };
  }
  if (hc.Memory) set("memory", Math.round(hc.Memory / 1024 / 1024));
  if (hc.MemorySwap) set("memorySwap", hc.MemorySwap < 0 ? -1 : Math.round(hc.MemorySwap / 1024 / 1024));
  if (hc.NanoCpus) set("cpus", String(hc.NanoCpus / 1e9));
  // The image's own labels are merged into the container's; only the declared ones are the stack's.
  const declared = new Set(((state.labels as Label[] | undefined) ?? []).map((l) => l.label));
  set(
    "labels",
    labelsList(Object.fromEntries(Object.entries(info.Config.Labels ?? {}).filter(([k]) => declared.has(k)))),
  );
  if (state.init !== undefined) props.init = hc.Init ?? false;
  if (state.runtime !== undefined) props.runtime = hc.Runtime;
  return props;
}

export async function removeContainer(docker: Dockerode, id: string): Promise<void> {
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      await docker.getContainer(id).remove({ force: true, v: true });
      return;
    } catch (e) {
      if (isNotFound(e)) return;
      if (!/already in progress/.test(String(e))) throw e;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** Deletes any of the three kinds; an object that is already gone is not an error. */
export async function deleteResource(docker: Dockerode, type: string, id: string): Promise<void> {
  try {
    if (type === CONTAINER) await removeContainer(docker, id);
    else if (type === NETWORK) await docker.getNetwork(id).remove();
    else if (type === VOLUME) await docker.getVolume(id).remove({ force: true });
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}

/** Keys whose change the provider can apply in place (Pulumi-only settings); every other change replaces. */
const IN_PLACE: Readonly<Record<string, readonly string[]>> = {
  [CONTAINER]: ["destroyGraceSeconds", "removeVolumes", "mustRun", "logs", "attach", "rm"],
  [NETWORK]: [],
  [VOLUME]: [],
};

/**
 * The input keys whose values differ between the old state and the new inputs (deep, order-sensitive). Only
 * input keys count; a name the provider chose (the new inputs have none) is not a change.
 */
export function changedKeys(type: string, olds: Props, news: Props): string[] {
  return (SUPPORTED[type] ?? [])
    .filter((k) => !(k === "name" && news.name === undefined))
    .filter((k) => JSON.stringify(olds[k] ?? null) !== JSON.stringify(news[k] ?? null))
    .sort();
}

/** A diff: which keys changed and which of them force a replacement. */
export function diffInputs(
  type: string,
  olds: Props,
  news: Props,
): { changed: string[]; replaces: string[] } {
  const changed = changedKeys(type, olds, news);
  const replaces = changed.filter((k) => !(IN_PLACE[type] ?? []).includes(k));
  return { changed, replaces };
}
