// Docker stacks through the real Pulumi engine and the real Docker engine: the stack program inline through the
// Automation API, the toolkit's local Docker provider as `pulumi-resource-docker`, the policy pack through its
// launcher. Each test uses its own temporary backend and work folder, so no tracked file is touched.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as docker from "@pulumi/docker";
import type { PulumiFn, Stack } from "@pulumi/pulumi/automation";
import type Dockerode from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recoverInterruptedRun } from "../../cli/recover";
import { projectLeftovers } from "../../runtime/offSwitch";
import { sandboxProgram } from "../../stacks/program";
import { requireDocker, TEST_IMAGE } from "../helpers/docker";
import { type DockerEngineWorkspace, dockerEngineWorkspace, POLICY } from "../helpers/dockerEngine";

const project = `eng-${Math.random().toString(36).slice(2, 7)}`;
let dockerApi: Dockerode;
let ws: DockerEngineWorkspace;
let dir = "";

beforeAll(async () => {
  dockerApi = await requireDocker();
  ws = await dockerEngineWorkspace();
  dir = ws.dir;
});

afterAll(() => ws?.cleanup());

const projectConfig = (name: string) => ({
  name,
  backend: "docker",
  jobRoot: join(dir, "jobs"),
  budget: { monthlyCapUsd: 10, maxConcurrentTasks: 2 },
  templates: { default: { image: TEST_IMAGE, timeoutSeconds: 120 } },
});

describe("a sandbox project through the real engine", () => {
  let stack: Stack;
  // The engine's progress goes to the test's log, which is where a failure is read.
  const onOutput = (s: string) => process.stdout.write(s);

  it("goes up with the policy pack, and docker inspect shows every declared wall", async () => {
    stack = await ws.newStack("dev", sandboxProgram, projectConfig(project));
    const up = await stack.up({ onOutput, policyPacks: POLICY });
    expect(up.summary.result).toBe("succeeded");
    const [probe] = await dockerApi.listContainers({
      all: true,
      filters: { label: [`sandbox.project=${project}`, "sandbox.role=probe"] },
    });
    const info = await dockerApi.getContainer(probe?.Id ?? "").inspect();
    const hc = info.HostConfig;
    expect(hc.CapDrop).toEqual(["ALL"]);
    expect(hc.CapAdd ?? []).toEqual([]);
    expect(hc.SecurityOpt).toEqual(["no-new-privileges:true"]);
    expect(hc.ReadonlyRootfs).toBe(true);
    expect(hc.Tmpfs).toEqual({ "/tmp": "rw,noexec,nosuid,nodev,size=64m,mode=1777" });
    expect(hc.Memory).toBe(512 * 1024 * 1024);
    expect(hc.MemorySwap).toBe(512 * 1024 * 1024);
    expect(hc.NanoCpus).toBe(1e9);
    expect(hc.RestartPolicy?.Name).toBe("no");
    expect(hc.NetworkMode).toBe("none");
    expect(hc.PortBindings ?? {}).toEqual({});
    expect(info.Config.User).toBe("1000:1000");
    expect(info.Mounts.map((m) => [m.Type, m.Name, m.Destination, m.RW])).toEqual([
      ["volume", `${project}-probe-default-job`, "/job", true],
    ]);
    expect(info.Config.Labels).toMatchObject({ "sandbox.project": project, "sandbox.role": "probe" });
    const net = (await dockerApi.getNetwork(`${project}-net`).inspect()) as {
      Internal: boolean;
      Options: Record<string, string>;
    };
    expect(net.Internal).toBe(true);
    expect(net.Options["com.docker.network.bridge.enable_icc"]).toBe("false");
  });

  it("exports the probe's walls report as a stack output", async () => {
    const outputs = await stack.outputs();
    const probes = outputs.probes?.value as Record<
      string,
      { passed: boolean; walls: { wall: string; ok: boolean | null }[] }
    >;
    expect(probes.default?.passed).toBe(true);
    expect(probes.default?.walls.filter((w) => w.ok === false)).toEqual([]);
    expect((outputs.budget?.value as { arithmetic: string } | undefined)?.arithmetic).toBe(
      "2 tasks × (1 vCPU × $0.004 + 0.5 GB × $0.002) × 730 h = $7.30",
    );
  });

  it("previews no changes a second time", async () => {
    const preview = await stack.preview({ onOutput, policyPacks: POLICY });
    expect(Object.keys(preview.changeSummary)).toEqual(["same"]);
  });

  it("destroys everything with the project's label, and destroying twice is fine", async () => {
    await stack.destroy({ onOutput });
    expect(await projectLeftovers(dockerApi, project)).toEqual([]);
    const again = await stack.destroy({ onOutput });
    expect(again.summary.result).toBe("succeeded");
    await stack.workspace.removeStack(stack.name);
  });
});

/** Kills the Pulumi CLI process running an operation on `stack` (the engine itself, mid-run). */
function killEngine(stack: string): number {
  const pids = (spawnSync("pgrep", ["-f", `stack ${stack}`], { encoding: "utf8" }).stdout ?? "")
    .split("\n")
    .filter((p) => p !== "")
    .map(Number)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "pulumi";
      } catch {
        return false;
      }
    });
  for (const pid of pids) process.kill(pid, "SIGKILL");
  return pids.length;
}

describe("an up killed part-way", () => {
  it("converges on the next up, with no duplicate objects", async () => {
    const name = `kill-${Math.random().toString(36).slice(2, 7)}`;
    const config = {
      ...projectConfig(name),
      templates: { a: { image: TEST_IMAGE }, b: { image: TEST_IMAGE }, c: { image: TEST_IMAGE } },
    };
    const stack = await ws.newStack("kill", sandboxProgram, config);
    const first = stack.up({ policyPacks: POLICY }).catch((e: unknown) => e);
    let seen = 0;
    for (let i = 0; i < 300 && seen === 0; i++) {
      seen = (await dockerApi.listContainers({ all: true, filters: { label: [`sandbox.project=${name}`] } }))
        .length;
      if (seen === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(killEngine(stack.name)).toBeGreaterThan(0);
    expect(await first).toBeInstanceOf(Error);

    const notes: string[] = [];
    const recovery = await recoverInterruptedRun(stack, join(dir, "state"), "sandbox", (s) => notes.push(s));
    expect(recovery.staleLocks.length).toBe(1);
    const up = await stack.up({ policyPacks: POLICY });
    expect(up.summary.result).toBe("succeeded");
    const containers = await dockerApi.listContainers({
      all: true,
      filters: { label: [`sandbox.project=${name}`] },
    });
    expect(containers.map((c) => c.Labels["sandbox.template"]).sort()).toEqual(["a", "b", "c"]);
    const networks = await dockerApi.listNetworks({ filters: { label: [`sandbox.project=${name}`] } });
    expect(networks.map((n) => n.Name)).toEqual([`${name}-net`]);
    const volumes =
      (await dockerApi.listVolumes({ filters: { label: [`sandbox.project=${name}`] } })).Volumes ?? [];
    expect(volumes.map((v) => v.Name).sort()).toEqual([
      `${name}-probe-a-job`,
      `${name}-probe-b-job`,
      `${name}-probe-c-job`,
    ]);
    const again = await stack.preview({ policyPacks: POLICY });
    expect(Object.keys(again.changeSummary)).toEqual(["same"]);
    await stack.destroy();
    expect(await projectLeftovers(dockerApi, name)).toEqual([]);
    await stack.workspace.removeStack(stack.name);
  }, 180_000);
});

describe("a violating stack", () => {
  const bad = `bad-${Math.random().toString(36).slice(2, 7)}`;
  const program: PulumiFn = async () => {
    new docker.Container("bad", {
      image: TEST_IMAGE,
      command: ["sleep", "60"],
      ports: [{ internal: 8080, external: 18080 }],
      mounts: [{ type: "bind", source: "/var/run/docker.sock", target: "/var/run/docker.sock" }],
      envs: ["GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789"],
      capabilities: { drops: ["NET_RAW"] },
      labels: [{ label: "sandbox.project", value: bad }],
    });
  };

  it("fails preview with the policy pack, naming each rule, and up creates nothing", async () => {
    const stack = await ws.newStack("bad", program);
    let message = "";
    try {
      await stack.preview({ policyPacks: POLICY, onOutput: (s) => (message += s) });
    } catch (e) {
      message += (e as Error).message;
    }
    for (const rule of [
      "sandbox-disallow-exposed-ports",
      "sandbox-disallow-runtime-socket",
      "sandbox-disallow-secret-env",
      "sandbox-require-drop-net-admin",
    ]) {
      expect(message).toContain(rule);
    }
    expect(message).not.toContain("ghp_abcdefghijklmnopqrstuvwxyz0123456789");
    await expect(stack.up({ policyPacks: POLICY })).rejects.toThrow();
    expect(await projectLeftovers(dockerApi, bad)).toEqual([]);
    await stack.workspace.removeStack(stack.name, { force: true });
  });
});
