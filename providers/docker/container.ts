/**
 * `docker:index/container:Container`: a container created from `@pulumi/docker`'s container args through the same
 * create body the launcher sends (runtime/docker/createBody.ts). Nothing is ever pulled.
 */
import type Dockerode from "dockerode";
import { demuxLogs, isNotFound } from "../../runtime/docker/client";
import {
  additionalNetworks,
  containerCreateBody,
  MAPPED_CONTAINER_PROPERTIES,
  type PlainContainerArgs,
} from "../../runtime/docker/createBody";
import { type Label, labelsList, objectName, type Props, type ResourceKind, URN_LABEL } from "./kind";

export const CONTAINER = "docker:index/container:Container";

/** The error for an image that is not on the engine: nothing is ever pulled by this provider. */
export function missingImageMessage(image: string): string {
  return `image "${image}" is not present on the Docker engine, and the toolkit's local provider never pulls; build or load it first (the project's offline test image is built by toolchain/docker.sh)`;
}

export const container: ResourceKind = {
  type: CONTAINER,
  inputs: MAPPED_CONTAINER_PROPERTIES,
  outputs: ["containerLogs", "exitCode", "networkDatas", "bridge"],
  inPlace: ["destroyGraceSeconds", "removeVolumes", "mustRun", "logs", "attach", "rm"],

  check(news) {
    return typeof news.image === "string"
      ? []
      : [{ property: "image", reason: "image is required: the image to run, present on the engine" }];
  },

  async create(docker, urn, p) {
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
    const name = objectName(p, urn);
    const body = containerCreateBody(p as PlainContainerArgs, { name });
    body.Labels = { ...body.Labels, [URN_LABEL]: urn };
    const created = await docker.createContainer(body);
    for (const n of additionalNetworks(p as PlainContainerArgs)) {
      await docker
        .getNetwork(n.name)
        .connect({ Container: created.id, EndpointConfig: { Aliases: n.aliases } });
    }
    const outs: Props = { ...p, name };
    if (p.start === false) return { id: created.id, outs };
    await created.start();
    if (p.attach === true) {
      const timeoutMs = ((p.waitTimeout as number | undefined) ?? 3600) * 1000;
      const status = await Promise.race([
        created.wait() as Promise<{ StatusCode: number }>,
        new Promise<never>((_, reject) =>
          setTimeout(
            () => reject(new Error(`container ${name} did not exit within ${timeoutMs / 1000} s`)),
            timeoutMs,
          ),
        ),
      ]);
      outs.exitCode = status.StatusCode;
      if (p.logs === true) {
        const logs = demuxLogs((await created.logs({ stdout: true, stderr: true, follow: false })) as Buffer);
        outs.containerLogs = logs.stdout + logs.stderr;
      }
      if (p.rm === true) await removeContainer(docker, created.id);
    } else if (p.mustRun !== false) {
      const info = await created.inspect();
      if (!info.State.Running) {
        throw new Error(
          `container ${name} exited with code ${info.State.ExitCode} right after start, and mustRun is true`,
        );
      }
    }
    return { id: created.id, outs };
  },

  /** The walls as the engine has them, so that `refresh` shows drift. */
  async read(docker, id, state) {
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
      labelsList(
        Object.fromEntries(Object.entries(info.Config.Labels ?? {}).filter(([k]) => declared.has(k))),
      ),
    );
    if (state.init !== undefined) props.init = hc.Init ?? false;
    if (state.runtime !== undefined) props.runtime = hc.Runtime;
    // The networks it is on beside its own: a network connected behind the stack's back (to the broker, which holds
    // the credentials) is drift, and `up` replaces the container with only the declared ones.
    if (state.networksAdvanced !== undefined)
      props.networksAdvanced = networksAsOn(info, state, hc.NetworkMode);
    return props;
  },

  async remove(docker, id) {
    await removeContainer(docker, id);
  },
};

/**
 * The container's networks other than its own (`networkMode`), as the state names them: a declared network keeps its
 * declared entry (the engine adds aliases of its own), one not declared is listed by name, a declared one it left is
 * not listed.
 */
function networksAsOn(
  info: Dockerode.ContainerInspectInfo,
  state: Props,
  own: string | undefined,
): { name: string; aliases?: string[] }[] {
  const declared = (state.networksAdvanced as { name: string; aliases?: string[] }[] | undefined) ?? [];
  const on = Object.keys(info.NetworkSettings?.Networks ?? {}).filter((n) => n !== own);
  return [
    ...declared.filter((d) => on.includes(d.name)),
    ...on.filter((n) => !declared.some((d) => d.name === n)).map((name) => ({ name })),
  ];
}

/** Removes a container and its anonymous volumes, waiting out a removal already in progress; gone is done. */
async function removeContainer(docker: Dockerode, id: string): Promise<void> {
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
