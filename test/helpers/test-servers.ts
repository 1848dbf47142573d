/**
 * The throwaway objects the real-engine tests of the proxy and the broker stand up on the machine: `internal`
 * networks in their own ranges, busybox servers on them, and the sweep that removes what a run left behind.
 */
import type Dockerode from "dockerode";
import { TEST_IMAGE } from "./docker";

/** Removes every container and network carrying `label` (`key=value`), and whatever sits on those networks. */
export async function removeLabelled(docker: Dockerode, label: string): Promise<void> {
  for (const c of await docker.listContainers({ all: true, filters: { label: [label] } }))
    await docker.getContainer(c.Id).remove({ force: true });
  for (const n of await docker.listNetworks({ filters: { label: [label] } })) {
    const info = await docker.getNetwork(n.Id).inspect();
    for (const id of Object.keys(info.Containers ?? {}))
      await docker
        .getContainer(id)
        .remove({ force: true })
        .catch(() => undefined);
    await docker.getNetwork(n.Id).remove();
  }
}

/** An `internal` network (no route off the machine) on `subnet`. */
export async function internalNetwork(
  docker: Dockerode,
  name: string,
  subnet: string,
  labels: Readonly<Record<string, string>>,
): Promise<void> {
  await docker.createNetwork({
    Name: name,
    Internal: true,
    IPAM: { Config: [{ Subnet: subnet }] },
    Labels: { ...labels },
  });
}

/** A hardened busybox container running `script` on `network`, answering there to `aliases`. */
export async function testServer(
  docker: Dockerode,
  network: string,
  aliases: readonly string[],
  script: string,
  labels: Readonly<Record<string, string>>,
  extra: Record<string, unknown> = {},
): Promise<Dockerode.Container> {
  const c = await docker.createContainer({
    name: `${network}-server`,
    Image: TEST_IMAGE,
    User: "1000:1000",
    Cmd: ["sh", "-c", script],
    Labels: { ...labels },
    HostConfig: {
      NetworkMode: network,
      ReadonlyRootfs: true,
      Tmpfs: { "/tmp": "rw,size=4m" },
      CapDrop: ["ALL"],
      SecurityOpt: ["no-new-privileges:true"],
      Memory: 64 * 1024 * 1024,
    },
    NetworkingConfig: { EndpointsConfig: { [network]: { Aliases: [...aliases] } } },
    ...extra,
  });
  await c.start();
  return c;
}

/** Fails with what to run when an offline image the test needs is missing. */
export async function requireImage(docker: Dockerode, image: string, script: string): Promise<void> {
  try {
    await docker.getImage(image).inspect();
  } catch {
    throw new Error(`the image ${image} is missing; run ${script} (./sandbox test does)`);
  }
}
