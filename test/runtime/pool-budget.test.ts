import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Dockerode from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProjectInput, resolveProject } from "../../components/model";
import { Launcher } from "../../runtime/launcher";
import { Ledger, meterOf } from "../../runtime/ledger";
import { offSwitch, projectLeftovers } from "../../runtime/offSwitch";
import { idleRunId, POOL_HOLDER_LABEL, WarmPool } from "../../runtime/pool";
import { policyPreflight } from "../../runtime/preflight";
import { requireDocker, specOf, TEST_IMAGE, testProject } from "../helpers/docker";
import { spawnPoolHolder } from "../helpers/pool-holder";

/**
 * Pre-started pool members cost what running tasks cost: each holds a slot of the project's concurrency and, under
 * a ledger, its wait is a run of the project's (no agent), charged until a task claims it. Members waiting past the
 * template's idle limit are replaced; a holder killed outright leaves members that the next pool removes.
 */

let docker: Dockerode;
const projects: { name: string; jobRoot: string }[] = [];
function track<T extends { spec: { name: string }; jobRoot: string }>(p: T): T {
  projects.push({ name: p.spec.name, jobRoot: p.jobRoot });
  return p;
}

beforeAll(async () => {
  docker = await requireDocker();
});
afterAll(async () => {
  if (!docker) return;
  for (const p of projects) await offSwitch(docker, p.name, { jobRoot: p.jobRoot });
});

/** The project's members waiting on the engine, by task id. */
async function waiting(name: string): Promise<string[]> {
  const all = await docker.listContainers({ all: true, filters: { label: [`sandbox.project=${name}`] } });
  return all
    .filter((c) => (c.Names[0] ?? "").startsWith(`/${name}-pool-`))
    .map((c) => c.Labels["sandbox.task"] ?? "")
    .sort();
}

/** Waits until `check` holds, polling; fails with `what` after a minute (never a timed assertion). */
async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * A project of one pooled template (1 vCPU, a member of its own) under a metered cap of `capUsd`, at `usdPerVcpuHour`,
 * two tasks at once, with its ledger, pool and launcher.
 */
function meteredPool(
  prefix: string,
  capUsd: number,
  usdPerVcpuHour: number,
  agents?: ProjectInput["agents"],
) {
  const name = `${prefix}-${Math.random().toString(36).slice(2, 8)}`;
  const jobRoot = mkdtempSync(join(tmpdir(), `${name}-jobs-`));
  const budget: ProjectInput["budget"] = {
    monthlyCapUsd: capUsd,
    usdPerVcpuHour,
    usdPerGbHour: 0,
    enforce: "metered",
    maxConcurrentTasks: 2,
  };
  const templates: ProjectInput["templates"] = {
    pooled: { image: TEST_IMAGE, pool: { size: 1 }, resources: { vcpu: 1, memoryMb: 64, tmpfsMb: 8 } },
  };
  const p = track(resolveProject({ name, jobRoot, budget, templates, ...(agents ? { agents } : {}) }));
  const ledger = Ledger.open(join(jobRoot, "..", `${name}.ledger.sqlite`), meterOf(p));
  const pool = new WarmPool(docker, { preflight: policyPreflight() });
  const launcher = new Launcher(docker, { ledger, preflight: policyPreflight(), pool });
  return { name, jobRoot, spec: specOf(p, "pooled"), ledger, pool, launcher };
}

describe("a waiting member is charged and counted like a running task", () => {
  it("charges a member's wait to the project and hands its slot to the claiming agent's run", async () => {
    const { name, spec, ledger, pool, launcher } = meteredPool("pool-l", 100, 36, {
      alice: { maxConcurrentTasks: 1 },
    });
    try {
      await pool.warm(spec);
      const [member] = await waiting(name);
      if (member === undefined) throw new Error("no member");
      const wait = await ledger.run(idleRunId(member));
      expect(wait).toMatchObject({ status: "open", agent: null, template: "pooled" });
      // The wait holds a slot of the project's concurrency in the ledger too: one more run fits, not two.
      expect((await ledger.spend()).open).toBe(1);
      await new Promise((r) => setTimeout(r, 1100));
      const r = await launcher.run(spec, { agent: "alice", files: { "run.sh": "echo hi\n" } });
      expect(r.id).toBe(member);
      expect(r.stdout).toBe("hi\n");
      const closed = await ledger.run(idleRunId(member));
      expect(closed?.status).toBe("done");
      // At least the second it waited, at $0.01 a vCPU-second.
      expect(closed?.chargeUsd ?? 0).toBeGreaterThanOrEqual(0.01);
      const task = await ledger.run(member);
      expect(task).toMatchObject({ status: "done", agent: "alice", exitCode: 0 });
      const spend = await ledger.spend();
      expect(spend.byAgent.alice).toBe(task?.chargeUsd);
      expect(spend.byAgent.alice ?? 0).toBeLessThan((closed?.chargeUsd ?? 0) + (task?.chargeUsd ?? 0));
      await pool.settled();
      // The refilled member waits as a run of the project's again.
      const [next] = await waiting(name);
      expect(next).not.toBe(member);
      expect(await ledger.run(idleRunId(next ?? ""))).toMatchObject({ status: "open", agent: null });
    } finally {
      await pool.close();
    }
    // Closing the pool charged every wait: nothing is left open.
    expect((await ledger.spend()).open).toBe(0);
    expect(await projectLeftovers(docker, name)).toEqual([]);
    await ledger.close();
  });

  it("removes waiting members when the month's spend reaches the cap, as the meter stops running tasks", async () => {
    // $1 a second for the member: its wait (at most 660 s, the idle limit and a minute) fits the $1,000 cap alone.
    const { name, jobRoot, spec, ledger, pool, launcher } = meteredPool("pool-c", 1000, 3600);
    try {
      await pool.warm(spec);
      const [member] = await waiting(name);
      if (member === undefined) throw new Error("no member");
      // Below the cap the member waits on, pass after pass of the pool's meter.
      await new Promise((r) => setTimeout(r, 2500));
      expect(await waiting(name)).toEqual([member]);
      // Another launcher of the project spends almost all the rest (a run of 990 s, charged in full).
      await ledger.admit({
        id: "elsewhere",
        template: "pooled",
        specHash: spec.specHash,
        command: ["elsewhere"],
        container: "elsewhere",
        size: { vcpu: 1, memoryMb: 64 },
        maxSeconds: 990,
      });
      await ledger.complete("elsewhere", { exitCode: 0, usedSeconds: 990 });
      // The member's own wait then reaches the cap within seconds: it is removed, and none replaces it.
      await until("the member is removed at the cap", async () => (await waiting(name)).length === 0);
      await pool.settled();
      expect(await waiting(name)).toEqual([]);
      expect(await ledger.run(idleRunId(member))).toMatchObject({ status: "done", stoppedBy: "cap" });
      const spend = await ledger.spend();
      expect(spend.open).toBe(0);
      expect(spend.spentUsd).toBeLessThanOrEqual(1000 + 1e-6);
      expect(spend.blocked).toBe(true);
      expect(readdirSync(jobRoot)).not.toContain(member);
      // And a launch is refused by the cap, not served by a member.
      await expect(launcher.run(spec, { files: { "run.sh": "echo hi\n" } })).rejects.toThrow(/cap/);
    } finally {
      await pool.close();
    }
    expect(await projectLeftovers(docker, name)).toEqual([]);
    await ledger.close();
  });

  it("gives a waiting member's slot up to a launch it cannot serve, instead of making it wait", async () => {
    const p = track(
      testProject(
        "pool-e",
        { pooled: { image: TEST_IMAGE, pool: { size: 1 } }, other: { image: TEST_IMAGE } },
        { monthlyCapUsd: 100, maxConcurrentTasks: 1 },
      ),
    );
    const pool = new WarmPool(docker, { preflight: policyPreflight() });
    const launcher = new Launcher(docker, { ledger: false, preflight: policyPreflight(), pool });
    try {
      await pool.warm(specOf(p, "pooled"));
      const [member] = await waiting(p.spec.name);
      expect(member).toBeDefined();
      // The one slot is the member's: the other template's launch takes it, the member is removed unclaimed.
      const r = await launcher.run(specOf(p, "other"), { files: { "run.sh": "echo other\n" } });
      expect(r.stdout).toBe("other\n");
      expect(r.id).not.toBe(member);
      expect(readdirSync(p.jobRoot)).not.toContain(member);
      await pool.settled();
      expect(await waiting(p.spec.name)).toHaveLength(1);
      expect(await waiting(p.spec.name)).not.toContain(member);
    } finally {
      await pool.close();
    }
  });
});

describe("members are fresh", () => {
  it("replaces a member that waited past the idle limit", async () => {
    const p = track(testProject("pool-i", { pooled: { image: TEST_IMAGE } }, { monthlyCapUsd: 100 }));
    const spec = specOf(p, "pooled");
    const pool = new WarmPool(docker, { size: 1, maxIdleSeconds: 1, preflight: policyPreflight() });
    try {
      await pool.warm(spec);
      const first = await waiting(p.spec.name);
      expect(first).toHaveLength(1);
      await until("the member is replaced", async () => {
        const now = await waiting(p.spec.name);
        return now.length === 1 && now[0] !== first[0];
      });
      expect(readdirSync(p.jobRoot)).not.toContain(first[0]);
    } finally {
      await pool.close();
    }
  });

  it("removes the members a holder killed outright left, at the next pool's start", async () => {
    const p = track(
      testProject("pool-k", { pooled: { image: TEST_IMAGE } }, { monthlyCapUsd: 100, maxConcurrentTasks: 4 }),
    );
    const spec = specOf(p, "pooled");
    const child = spawnPoolHolder(spec, 2);
    let left: string[] = [];
    try {
      await until("the holder's members wait", async () => (await waiting(p.spec.name)).length === 2);
      left = await waiting(p.spec.name);
    } finally {
      child.kill("SIGKILL");
      await new Promise((r) => child.once("exit", r));
    }
    // A live holder's members are never touched: this process's own pool, started first, keeps them.
    const pool = new WarmPool(docker, { size: 1, preflight: policyPreflight() });
    try {
      await pool.warm(spec);
      const now = await waiting(p.spec.name);
      expect(now).toHaveLength(1);
      for (const id of left) {
        expect(now).not.toContain(id);
        expect(readdirSync(p.jobRoot)).not.toContain(id);
      }
      const [mine] = await docker.listContainers({
        all: true,
        filters: { label: [`sandbox.project=${p.spec.name}`, POOL_HOLDER_LABEL] },
      });
      expect(JSON.parse(mine?.Labels[POOL_HOLDER_LABEL] ?? "{}")).toMatchObject({ pid: process.pid });
    } finally {
      await pool.close();
    }
  });

  it("launches cold a template whose image has no shell for the gate", async () => {
    // The offline image less its shell: the gate cannot start, the task (no shell needed) still runs, cold.
    const image = "sandbox-pool-noshell:1";
    const made = docker.listImages({ filters: { reference: [image] } });
    if ((await made).length === 0) {
      const c = spawnSync("docker", ["create", TEST_IMAGE, "true"], { encoding: "utf8" });
      const id = c.stdout.trim();
      const sh = spawnSync(
        "sh",
        ["-c", `docker export ${id} | tar --delete bin/sh | docker import - ${image}`],
        { encoding: "utf8" },
      );
      spawnSync("docker", ["rm", id]);
      expect(sh.status, sh.stderr).toBe(0);
    }
    const p = track(testProject("pool-n", { bare: { image, pool: { size: 1 } } }, { monthlyCapUsd: 100 }));
    const spec = specOf(p, "bare");
    const errors: unknown[] = [];
    const pool = new WarmPool(docker, { preflight: policyPreflight(), onError: (e) => errors.push(e) });
    const launcher = new Launcher(docker, { ledger: false, preflight: policyPreflight(), pool });
    try {
      await pool.warm(spec);
      const r = await launcher.run(spec, { command: ["echo", "cold"] });
      expect(r.stdout).toBe("cold\n");
      expect(r.exitCode).toBe(0);
      await pool.settled();
      expect(await waiting(p.spec.name)).toEqual([]);
      expect(String(errors[0])).toContain(
        `image ${image} has no sh for the pool's gate; its launches run cold`,
      );
      const again = await launcher.run(spec, { command: ["echo", "again"] });
      expect(again.stdout).toBe("again\n");
    } finally {
      await pool.close();
    }
    expect(await projectLeftovers(docker, p.spec.name)).toEqual([]);
  });
});
