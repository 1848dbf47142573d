import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type Dockerode from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONTAINER, missingImageMessage } from "../../providers/docker/container";
import { NETWORK } from "../../providers/docker/network";
import { dockerProvider } from "../../providers/docker/provider";
import { diffInputs, kindOf } from "../../providers/docker/resources";
import { VOLUME } from "../../providers/docker/volume";
import { offSwitch } from "../../runtime/offSwitch";
import { requireDocker, TEST_IMAGE } from "../helpers/docker";

const project = `prov-${Math.random().toString(36).slice(2, 8)}`;
const labels = [
  { label: "sandbox.managed-by", value: "sandbox-projects" },
  { label: "sandbox.project", value: project },
];
const urn = (type: string, name: string) => `urn:pulumi:dev::sandbox::${type}::${name}`;

let docker: Dockerode;
let provider: ReturnType<typeof dockerProvider>;

beforeAll(async () => {
  docker = await requireDocker();
  provider = dockerProvider(docker);
});
afterAll(async () => {
  if (docker) await offSwitch(docker, project);
});

/** The input property names of one `@pulumi/docker` resource, read from the SDK's own type definitions. */
function sdkInputs(file: string, iface: string): string[] {
  const text = readFileSync(join(__dirname, "../../node_modules/@pulumi/docker", file), "utf8");
  const block = text.slice(text.indexOf(`export interface ${iface} {`));
  const body = block.slice(0, block.indexOf("\n}\n"));
  return [...body.matchAll(/^ {4}([a-zA-Z]+)\??:/gm)].map((m) => m[1] as string);
}

describe("the provider speaks @pulumi/docker 5.2.0", () => {
  it.each([
    [CONTAINER, "container.d.ts", "ContainerArgs"],
    [NETWORK, "network.d.ts", "NetworkArgs"],
    [VOLUME, "volume.d.ts", "VolumeArgs"],
  ])("every property %s accepts exists in the SDK's %s", (type, file, iface) => {
    const sdk = sdkInputs(file, iface);
    expect(sdk.length).toBeGreaterThan(3);
    expect((kindOf(type)?.inputs ?? []).filter((p) => !sdk.includes(p))).toEqual([]);
  });

  it("fails check by name for a property it does not implement, and says the official plugin supports it", async () => {
    const r = await provider.check?.(
      urn(CONTAINER, "c"),
      {},
      { image: "x:1", gpus: "all", healthcheck: { tests: ["x"] } },
    );
    expect(r?.failures).toEqual([
      {
        property: "gpus",
        reason:
          'property "gpus" of docker:index/container:Container is not implemented by the toolkit\'s local Docker provider; the official pulumi-docker plugin supports it (install it, or remove the property)',
      },
      {
        property: "healthcheck",
        reason:
          'property "healthcheck" of docker:index/container:Container is not implemented by the toolkit\'s local Docker provider; the official pulumi-docker plugin supports it (install it, or remove the property)',
      },
    ]);
    expect((await provider.check?.(urn(NETWORK, "n"), {}, { internal: true }))?.failures).toEqual([]);
  });

  it("replaces on a change of an immutable field, updates Pulumi-only settings in place", () => {
    expect(diffInputs(CONTAINER, { image: "a:1", memory: 64 }, { image: "a:2", memory: 64 })).toEqual({
      changed: ["image"],
      replaces: ["image"],
    });
    expect(
      diffInputs(
        CONTAINER,
        { image: "a:1", destroyGraceSeconds: 1 },
        { image: "a:1", destroyGraceSeconds: 5 },
      ),
    ).toEqual({
      changed: ["destroyGraceSeconds"],
      replaces: [],
    });
    expect(diffInputs(NETWORK, { name: "auto-123", internal: true }, { internal: true })).toEqual({
      changed: [],
      replaces: [],
    });
  });

  it("an in-place update keeps every output and takes the Pulumi-only settings from the new inputs", async () => {
    const olds = { id: "c1", image: "a:1", name: "task", destroyGraceSeconds: 1, rm: true, exitCode: 0 };
    const r = await provider.update?.("c1", urn(CONTAINER, "c"), olds, {
      image: "a:1",
      destroyGraceSeconds: 5,
    });
    expect(r?.outs).toEqual({ id: "c1", image: "a:1", name: "task", destroyGraceSeconds: 5, exitCode: 0 });
  });
});

describe("the plugin executable", () => {
  it("starts as the engine starts it (every module it imports resolves) and prints the port it serves on", async () => {
    const child = spawn(join(__dirname, "../../providers/docker/pulumi-resource-docker"), [], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    const deadline = Date.now() + 60_000;
    while (!/^\d+\s*$/m.test(out) && child.exitCode === null && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
    child.kill("SIGTERM");
    await exited;
    expect({ port: /^\d+\s*$/m.test(out), err }).toEqual({ port: true, err: "" });
  }, 90_000);

  it("stops by itself when the engine that started it is gone", async () => {
    // A shell stands in for the engine: it starts the plugin, prints its pid, and is killed.
    const engine = spawn(
      "sh",
      ["-c", `${join(__dirname, "../../providers/docker/pulumi-resource-docker")} & echo $!; wait`],
      { stdio: ["ignore", "pipe", "ignore"] },
    );
    let out = "";
    engine.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const deadline = Date.now() + 60_000;
    while (!/^\d+\n\d+/.test(out) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const pid = Number(out.split("\n")[0]);
    expect(pid).toBeGreaterThan(0);
    engine.kill("SIGKILL");
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    const gone = Date.now() + 10_000;
    while (alive() && Date.now() < gone) await new Promise((r) => setTimeout(r, 100));
    expect(alive()).toBe(false);
  }, 90_000);
});

describe("on the real engine", () => {
  it("creates an internal, labelled network with inter-container traffic off; reads it; deletes it twice", async () => {
    const created = await provider.create?.(urn(NETWORK, "net"), {
      name: `${project}-net`,
      internal: true,
      options: { "com.docker.network.bridge.enable_icc": "false" },
      labels,
    });
    const id = created?.id ?? "";
    const info = (await docker.getNetwork(id).inspect()) as {
      Internal: boolean;
      Options: Record<string, string>;
      Labels: Record<string, string>;
    };
    expect(info.Internal).toBe(true);
    expect(info.Options["com.docker.network.bridge.enable_icc"]).toBe("false");
    expect(info.Labels["sandbox.project"]).toBe(project);
    const read = await provider.read?.(id, urn(NETWORK, "net"), created?.outs);
    expect(read?.props).toMatchObject({ name: `${project}-net`, internal: true, labels });
    await provider.delete?.(id, urn(NETWORK, "net"), created?.outs);
    await provider.delete?.(id, urn(NETWORK, "net"), created?.outs);
    expect(await provider.read?.(id, urn(NETWORK, "net"), created?.outs)).toEqual({});
  });

  it("runs an attached container to its end and returns its logs and exit code; rm removes it", async () => {
    const created = await provider.create?.(urn(CONTAINER, "job"), {
      image: TEST_IMAGE,
      command: ["sh", "-c", "echo out; echo err >&2; exit 3"],
      user: "1000:1000",
      readOnly: true,
      capabilities: { drops: ["ALL"] },
      securityOpts: ["no-new-privileges:true"],
      networkMode: "none",
      init: true,
      labels,
      attach: true,
      logs: true,
      mustRun: false,
      rm: true,
    });
    expect(created?.outs).toMatchObject({ exitCode: 3, containerLogs: "out\nerr\n" });
    await expect(docker.getContainer(created?.id ?? "").inspect()).rejects.toMatchObject({ statusCode: 404 });
    // Gone by design (rm after attach): refresh keeps it.
    expect((await provider.read?.(created?.id ?? "", urn(CONTAINER, "job"), created?.outs))?.id).toBe(
      created?.id,
    );
  });

  it("keeps a container running and reports drift on refresh", async () => {
    const inputs = {
      image: TEST_IMAGE,
      command: ["sleep", "300"],
      memory: 64,
      memorySwap: 64,
      readOnly: true,
      init: true,
      networkMode: "none",
      labels,
    };
    const created = await provider.create?.(urn(CONTAINER, "svc"), inputs);
    const id = created?.id ?? "";
    expect((await docker.getContainer(id).inspect()).State.Running).toBe(true);
    await docker.getContainer(id).update({ Memory: 128 * 1024 * 1024, MemorySwap: 128 * 1024 * 1024 });
    const read = await provider.read?.(id, urn(CONTAINER, "svc"), created?.outs);
    expect(read?.props).toMatchObject({ memory: 128, memorySwap: 128, readOnly: true });
    const diff = await provider.diff?.(id, urn(CONTAINER, "svc"), read?.props, inputs);
    expect(diff).toMatchObject({ changes: true, replaces: ["memory", "memorySwap"] });
    await provider.delete?.(id, urn(CONTAINER, "svc"), created?.outs);
    await provider.delete?.(id, urn(CONTAINER, "svc"), created?.outs);
    expect(await provider.read?.(id, urn(CONTAINER, "svc"), created?.outs)).toEqual({});
  });

  it("never pulls: an image that is not present fails with how to build the offline image", async () => {
    await expect(
      provider.create?.(urn(CONTAINER, "x"), { image: "not-here.invalid/nothing:0", labels }),
    ).rejects.toThrow(missingImageMessage("not-here.invalid/nothing:0"));
  });

  it("creates a tmpfs-backed volume owned by the task user and deletes it idempotently", async () => {
    const created = await provider.create?.(urn(VOLUME, "vol"), {
      name: `${project}-vol`,
      driver: "local",
      driverOpts: { type: "tmpfs", device: "tmpfs", o: "size=8m,uid=1000,gid=1000,mode=0700" },
      labels,
    });
    expect(created?.id).toBe(`${project}-vol`);
    const read = await provider.read?.(created?.id ?? "", urn(VOLUME, "vol"), created?.outs);
    expect(read?.props).toMatchObject({ driverOpts: { type: "tmpfs", device: "tmpfs" } });
    await provider.delete?.(created?.id ?? "", urn(VOLUME, "vol"), created?.outs);
    await provider.delete?.(created?.id ?? "", urn(VOLUME, "vol"), created?.outs);
  });
});
