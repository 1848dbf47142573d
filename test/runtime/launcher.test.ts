import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type Dockerode from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Launcher, LaunchRefused, Slots } from "../../runtime/launcher";
import { offSwitch, projectLeftovers } from "../../runtime/offSwitch";
import { policyPreflight } from "../../runtime/preflight";
import type { TaskResult } from "../../runtime/task";
import { ESCAPE_CHECKS, runEscape, runProbe } from "../../runtime/walls";
import { requireDocker, specOf, TEST_IMAGE, testProject } from "../helpers/docker";

let docker: Dockerode;
const project = testProject("rt", {
  default: { image: TEST_IMAGE },
  six: {
    image: TEST_IMAGE,
    capDrop: "seed-six",
    resources: { vcpu: 0.5, memoryMb: 256, pids: 64, tmpfsMb: 32 },
  },
  short: { image: TEST_IMAGE, timeoutSeconds: 2 },
  tiny: { image: TEST_IMAGE, resources: { memoryMb: 32, tmpfsMb: 8 } },
});
const launcher = () => new Launcher(docker, { ledger: false, preflight: policyPreflight() });

beforeAll(async () => {
  docker = await requireDocker();
});
afterAll(async () => {
  // With the job root: the folders tasks kept are removed too (unmounted where they had a disk of their own).
  if (docker) await offSwitch(docker, project.spec.name, { jobRoot: project.jobRoot });
});

describe("the probe on a real engine", () => {
  it.each(["default", "six"])("passes every wall of the %s template", async (template) => {
    const t = project.spec.templates[template];
    if (t === undefined) throw new Error("no template");
    const { report, result } = await runProbe(launcher(), specOf(project, template), t);
    expect(report.walls.filter((w) => w.ok !== true)).toEqual([]);
    expect(report.passed).toBe(true);
    expect(existsSync(result.jobDir)).toBe(false);
    expect(await projectLeftovers(docker, project.spec.name)).toEqual([]);
  });
});

describe("launching a task", () => {
  it("runs the task in its job folder as 1000:1000 and keeps its outputs there", async () => {
    const r = await launcher().run(specOf(project, "default"), {
      files: { "run.sh": "id -u; id -g; pwd; echo done > out.txt; echo oops >&2; exit 3\n" },
    });
    expect(r.exitCode).toBe(3);
    expect(r.stdout).toBe("1000\n1000\n/job\n");
    expect(r.stderr).toBe("oops\n");
    expect(r.limits).toEqual([]);
    expect(readFileSync(join(r.jobDir, "out.txt"), "utf8")).toBe("done\n");
    expect(await projectLeftovers(docker, project.spec.name)).toEqual([]);
  });

  it("creates the container with every declared wall plus the pids limit", async () => {
    let inspected: Dockerode.ContainerInspectInfo | undefined;
    const l = new Launcher(docker, {
      ledger: false,
      preflight: policyPreflight(),
      onEvent: (e) => {
        if (e.type === "start") {
          void docker
            .getContainer(`${project.spec.name}-task-${e.id}`)
            .inspect()
            .then((i) => {
              inspected = i;
            });
        }
      },
    });
    await l.run(specOf(project, "six"), { id: "walls", command: ["sleep", "1"] });
    const hc = inspected?.HostConfig;
    expect(hc?.CapDrop).toEqual(["NET_RAW", "MKNOD", "SYS_CHROOT", "SETFCAP", "SETPCAP", "NET_ADMIN"]);
    expect(hc?.CapAdd ?? []).toEqual([]);
    expect(hc?.SecurityOpt).toEqual(["no-new-privileges:true"]);
    expect(hc?.ReadonlyRootfs).toBe(true);
    expect(hc?.Tmpfs).toEqual({ "/tmp": "rw,noexec,nosuid,nodev,size=32m,mode=1777" });
    expect(hc?.Memory).toBe(256 * 1024 * 1024);
    expect(hc?.MemorySwap).toBe(256 * 1024 * 1024);
    expect(hc?.NanoCpus).toBe(500_000_000);
    expect(hc?.PidsLimit).toBe(64);
    expect(hc?.NetworkMode).toBe("none");
    expect(hc?.RestartPolicy?.Name).toBe("no");
    expect(hc?.Privileged).toBe(false);
    expect(hc?.Init).toBe(true);
    expect(hc?.PortBindings ?? {}).toEqual({});
    expect(inspected?.Config.User).toBe("1000:1000");
    expect(inspected?.Config.Cmd).toEqual(["timeout", "-s", "KILL", "600", "sleep", "1"]);
    expect(inspected?.Mounts.map((m) => [m.Type, m.Destination, m.RW])).toEqual([["bind", "/job", true]]);
    expect(inspected?.Config.Labels).toMatchObject({
      "sandbox.managed-by": "sandbox-projects",
      "sandbox.project": project.spec.name,
      "sandbox.role": "task",
      "sandbox.template": "six",
      "sandbox.task": "walls",
    });
  });

  it("hands the result over once, before the container is removed, and returns the same result", async () => {
    const seen: string[] = [];
    let handed: TaskResult | undefined;
    const l = new Launcher(docker, {
      ledger: false,
      preflight: policyPreflight(),
      onEvent: (e) => {
        if (e.type === "end") seen.push("end");
      },
    });
    const r = await l.run(specOf(project, "default"), {
      id: "handed",
      command: ["sh", "-c", "echo out; exit 4"],
      onResult: (result) => {
        handed = result;
        // Synchronous: the launcher cannot remove the container while this callback runs.
        const state = spawnSync("docker", ["inspect", "-f", "{{.State.Status}}", result.container], {
          encoding: "utf8",
        });
        seen.push(`result:${state.stdout.trim()}`);
      },
    });
    expect(seen).toEqual(["result:exited", "end"]);
    expect(handed).toEqual(r);
    expect(r.exitCode).toBe(4);
    expect(r.stdout).toBe("out\n");
    expect(await projectLeftovers(docker, project.spec.name)).toEqual([]);
  });

  it("returns the result and removes the task when the result's callback throws", async () => {
    const r = await launcher().run(specOf(project, "default"), {
      command: ["sh", "-c", "echo kept"],
      onResult: () => {
        throw new Error("the caller's own failure");
      },
    });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe("kept\n");
    expect(await projectLeftovers(docker, project.spec.name)).toEqual([]);
  });

  it("refuses a template that leaves NET_ADMIN off its drop list before creating anything", async () => {
    const tampered = { ...specOf(project, "default"), capDrop: ["NET_RAW", "MKNOD"] };
    const l = launcher();
    await expect(l.run(tampered, { id: "tampered" })).rejects.toThrow(LaunchRefused);
    await expect(l.run(tampered, { id: "tampered" })).rejects.toThrow(
      `launch of template "default" refused:\n  - sandbox-require-drop-net-admin: container "${project.spec.name}/default" drops only [NET_RAW, MKNOD]; its drop list must contain NET_ADMIN or ALL`,
    );
    const created = await docker.listContainers({ all: true, filters: { label: ["sandbox.task=tampered"] } });
    expect(created).toEqual([]);
  });

  it("refuses a launch when the project is disabled (zero concurrency)", async () => {
    const spec = { ...specOf(project, "default"), maxConcurrentTasks: 0 };
    await expect(launcher().run(spec)).rejects.toThrow("allows 0 tasks at once");
  });
});

describe("limits", () => {
  it("kills a task over its timeout and removes it", async () => {
    const r = await launcher().run(specOf(project, "short"), { command: ["sleep", "30"] });
    expect(r.limits).toEqual(["timeout"]);
    expect(r.exitCode).toBe(137);
    expect(r.killedByLauncher).toBe(false);
    expect(r.durationMs).toBeLessThan(10_000);
    expect(await projectLeftovers(docker, project.spec.name)).toEqual([]);
  });

  it("kills the container itself when the in-container deadline did not end the task", async () => {
    // A negative grace puts the launcher's deadline before the in-container one, as if `timeout` had failed.
    const l = new Launcher(docker, { ledger: false, preflight: policyPreflight(), graceSeconds: -1.5 });
    const r = await l.run(specOf(project, "short"), { command: ["sleep", "30"] });
    expect(r.killedByLauncher).toBe(true);
    expect(r.limits).toEqual(["timeout"]);
    expect(await projectLeftovers(docker, project.spec.name)).toEqual([]);
  });

  it("reports an out-of-memory kill", async () => {
    const r = await launcher().run(specOf(project, "tiny"), {
      command: ["sh", "-c", "head -c 200000000 /dev/zero | tail > /dev/null"],
    });
    expect(r.limits).toContain("oom");
    expect(r.exitCode).not.toBe(0);
  });

  it("stops a fork bomb at pids.max, and the host is unaffected", async () => {
    const r = await launcher().run(specOf(project, "default"), {
      command: ["sh", "-c", "bomb() { bomb | bomb & }; bomb; sleep 2"],
    });
    expect(r.limits).toContain("pids");
    expect(spawnSync("true").status).toBe(0);
    expect(await projectLeftovers(docker, project.spec.name)).toEqual([]);
  });
});

describe("the four escapes", () => {
  it.each(ESCAPE_CHECKS)("%s is blocked and leaves nothing running", async (check) => {
    const r = await runEscape(launcher(), docker, specOf(project, "default"), check);
    expect(r.blocked).toBe(true);
    expect(r.leftovers).toEqual([]);
    const wall = {
      "exfiltrate-env": "no network (networkMode none: no interface but loopback)",
      "write-outside-job": "read-only root filesystem",
      "fork-bomb": "pids limit (pids.max=128)",
      metadata: "no network (networkMode none: no interface but loopback)",
    }[check];
    expect(r.blockedBy).toBe(wall);
  });
});

describe("concurrency", () => {
  it("runs 20 tasks with a limit of 3 and never more than 3 at once", async () => {
    const l = new Launcher(docker, { ledger: false, preflight: policyPreflight(), maxConcurrent: 3 });
    let engineMax = 0;
    let polling = true;
    const poll = (async () => {
      while (polling) {
        const running = await docker.listContainers({
          filters: { label: [`sandbox.project=${project.spec.name}`], status: ["running", "created"] },
        });
        engineMax = Math.max(engineMax, running.length);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        l.run(specOf(project, "default"), { id: `c${i}`, command: ["sleep", "1"], removeJobDir: true }),
      ),
    );
    polling = false;
    await poll;
    expect(results.map((r) => r.exitCode)).toEqual(Array(20).fill(0));
    expect(engineMax).toBeLessThanOrEqual(3);
    expect(engineMax).toBeGreaterThanOrEqual(2);
    expect(l.running).toBe(0);
  });

  it("queues in order and never over the limit (semaphore)", async () => {
    const slots = new Slots(2);
    let active = 0;
    let max = 0;
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 7 }, async (_, i) => {
        await slots.acquire();
        active++;
        max = Math.max(max, active);
        order.push(i);
        await new Promise((r) => setTimeout(r, 5));
        active--;
        slots.release();
      }),
    );
    expect(max).toBe(2);
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(() => new Slots(0)).toThrow("concurrency 0 must be a whole number ≥ 1");
  });
});

describe("the off switch", () => {
  it("removes running tasks, networks and volumes of the project, and is safe to run twice", async () => {
    const name = project.spec.name;
    const l = launcher();
    const running = l
      .run(specOf(project, "default"), { id: "mid-run", command: ["sleep", "60"] })
      .catch((e) => e);
    const labels = { "sandbox.project": name, "sandbox.managed-by": "sandbox-projects" };
    await docker.createNetwork({ Name: `${name}-net`, Internal: true, Labels: labels });
    await docker.createVolume({ Name: `${name}-vol`, Labels: labels });
    for (let i = 0; i < 100; i++) {
      const c = await docker.listContainers({ filters: { label: ["sandbox.task=mid-run"] } });
      if (c.length > 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const report = await offSwitch(docker, name);
    expect(report).toEqual({
      project: name,
      containers: [`${name}-task-mid-run`],
      networks: [`${name}-net`],
      volumes: [`${name}-vol`],
    });
    await running;
    expect(await projectLeftovers(docker, name)).toEqual([]);
    expect(await offSwitch(docker, name)).toEqual({
      project: name,
      containers: [],
      networks: [],
      volumes: [],
    });
  });
});
