import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import type Dockerode from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LaunchSpec, PROBE_TIMEOUT_SECONDS, resolveProject } from "../../components/model";
import { Launcher, LaunchRefused, type TaskResult } from "../../runtime/launcher";
import { offSwitch, projectLeftovers } from "../../runtime/offSwitch";
import { poolMemberName, WarmPool } from "../../runtime/pool";
import { policyPreflight } from "../../runtime/preflight";
import { ESCAPE_CHECKS, runEscape, runProbe } from "../../runtime/walls";

/** An escape's evidence less what names its own task (ids, counts of a fork bomb's processes, times). */
const scrub = (evidence: string) =>
  evidence
    .replace(/[0-9a-z]{8}-[0-9a-f]{6}/g, "<id>")
    // Whether the fork bomb's count could still be read depends on the machine's speed, pooled or cold alike.
    .replace(/processes at the end: [^;]*/g, "processes at the end: <n>")
    .replace(/\d+/g, "N");

import { requireDocker, specOf, TEST_IMAGE, testProject } from "../helpers/docker";
import { spawnPoolHolder } from "../helpers/pool-holder";

let docker: Dockerode;
const projects: { name: string; jobRoot: string }[] = [];
function track<T extends { spec: { name: string }; jobRoot: string }>(p: T): T {
  projects.push({ name: p.spec.name, jobRoot: p.jobRoot });
  return p;
}

const project = track(
  testProject(
    "pool",
    {
      default: { image: TEST_IMAGE },
      short: { image: TEST_IMAGE, timeoutSeconds: 2 },
    },
    { monthlyCapUsd: 100, maxConcurrentTasks: 4 },
  ),
);

beforeAll(async () => {
  docker = await requireDocker();
});
afterAll(async () => {
  if (!docker) return;
  for (const p of projects) await offSwitch(docker, p.name, { jobRoot: p.jobRoot });
});

/** The project's waiting members on the engine: started behind their gates, under their pool names. */
async function members(name: string): Promise<Dockerode.ContainerInfo[]> {
  const all = await docker.listContainers({ all: true, filters: { label: [`sandbox.project=${name}`] } });
  return all.filter((c) => (c.Names[0] ?? "").startsWith(`/${name}-pool-`));
}

/** The containers of `ids` the engine started since `since` (its events, up to now). */
async function started(since: number, ids: readonly string[]): Promise<string[]> {
  const stream = (await docker.getEvents({
    since,
    until: Math.ceil(Date.now() / 1000),
    filters: { type: ["container"], event: ["start"] },
  })) as NodeJS.ReadableStream;
  let text = "";
  for await (const chunk of stream) text += chunk.toString();
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => (JSON.parse(l) as { id: string }).id)
    .filter((id) => ids.includes(id));
}

/** Inspects each task's container as it starts, by task id. */
function inspector(project: string) {
  const seen = new Map<string, Promise<Dockerode.ContainerInspectInfo>>();
  return {
    seen,
    onEvent: (e: { type: string; id: string }) => {
      if (e.type === "start") seen.set(e.id, docker.getContainer(`${project}-task-${e.id}`).inspect());
    },
  };
}

/** One launcher per pool (none: a launcher without one), inspecting each task's container as it starts. */
const launchers = new Map<
  WarmPool | undefined,
  { launcher: Launcher; seen: ReturnType<typeof inspector>["seen"] }
>();
function launcherFor(pool: WarmPool | undefined, project: string) {
  const known = launchers.get(pool);
  if (known !== undefined) return known.launcher;
  const { seen, onEvent } = inspector(project);
  const launcher = new Launcher(docker, {
    ledger: false,
    preflight: policyPreflight(),
    onEvent,
    ...(pool ? { pool } : {}),
  });
  launchers.set(pool, { launcher, seen });
  return launcher;
}

/** Runs one task on the launcher of the given pool (or none) and inspects its container as it starts. */
async function runInspected(
  pool: WarmPool | undefined,
  spec: LaunchSpec,
  request: Parameters<Launcher["run"]>[1],
): Promise<{ result: TaskResult; inspected: Dockerode.ContainerInspectInfo }> {
  const result = await launcherFor(pool, spec.project).run(spec, request);
  const inspected = launchers.get(pool)?.seen.get(result.id);
  if (inspected === undefined) throw new Error("the task never started");
  return { result, inspected: await inspected };
}

/**
 * What a task's container is, less what names its own task (id, job folder path, engine ids and dates) and what
 * names the process it runs: a member's is its gate, whose shell execs the same command line as a cold launch's
 * (the task's own view of it is compared in the tests).
 */
function walls(i: Dockerode.ContainerInspectInfo) {
  const {
    Binds: _b,
    Mounts,
    ...host
  } = i.HostConfig as Dockerode.HostConfig & { Mounts?: { Target: string }[] };
  const { Hostname: _h, Labels, Cmd: _c, Entrypoint: _e, ...config } = i.Config;
  const { "sandbox.task": _t, "sandbox.pool-holder": _p, ...labels } = Labels ?? {};
  return {
    host,
    mounts: (Mounts ?? []).map((m) => ({ ...m, Source: "<job>" })),
    config: { ...config, Labels: labels },
  };
}

const TASK = [
  "id -u; id -g; pwd; ls -A /job; cat /job/in.txt",
  "grep -E '^(Cap|NoNewPrivs|Seccomp|Sig(Ign|Blk)|Umask)' /proc/self/status",
  // The task's command line as its own process sees it, its descriptors, and no gate's channel.
  // (ls writes to a file: in a pipeline the shell would hold the pipe's ends while ls lists them, depending on timing.)
  "tr '\\0' ' ' < /proc/$$/cmdline; echo; ls /proc/$$/fd > /tmp/fds; tr '\\n' ' ' < /tmp/fds; rm /tmp/fds; echo",
  "ls -a /job/.sandbox-gate 2>&1",
  "ls -A /tmp; df -k /job | tail -n 1 | awk '{print $2}'",
  "cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max",
  "env | grep -v '^HOSTNAME=' | sort",
  "touch /etc/x 2>&1; echo out > /job/out.txt; echo err >&2; exit 3",
].join("\n");

describe("a pooled launch is a cold launch made early", () => {
  it("runs with the same walls, command, environment, user and deadline, in a fresh job folder", async () => {
    const pool = new WarmPool(docker, { size: 2, preflight: policyPreflight() });
    const spec = specOf(project, "default");
    launcherFor(pool, spec.project);
    launcherFor(undefined, spec.project);
    await pool.warm(spec);
    const waiting = (await members(spec.project)).map((c) => c.Labels["sandbox.task"]);
    expect(waiting).toHaveLength(2);
    expect((await members(spec.project)).map((c) => c.State)).toEqual(["running", "running"]);
    const request = { files: { "run.sh": TASK, "in.txt": "input\n" } };
    try {
      const a = await runInspected(pool, spec, request);
      const b = await runInspected(undefined, spec, request);
      const c = await runInspected(pool, spec, request);
      expect(waiting).toContain(a.result.id);
      expect(waiting).toContain(c.result.id);
      expect(b.result.id).not.toBe(a.result.id);
      for (const r of [a, c]) {
        expect(r.inspected.Name).toBe(`/${spec.project}-task-${r.result.id}`);
        expect(walls(r.inspected)).toEqual(walls(b.inspected));
        const same = ({ exitCode, stdout, stderr, limits, killedByLauncher }: TaskResult) =>
          ({ exitCode, stdout, stderr, limits, killedByLauncher }) as const;
        expect(same(r.result)).toEqual(same(b.result));
        expect(readFileSync(join(r.result.jobDir, "out.txt"), "utf8")).toBe("out\n");
      }
      // Nothing left from another task, nor of the gate: each job folder held only its own inputs.
      expect(a.result.stdout).toContain("/job\nin.txt\nrun.sh\ninput\n");
      expect(a.result.stdout).toContain("\nsh /job/run.sh \n");
      expect(a.result.stdout).toContain("/job/.sandbox-gate: No such file or directory\n");
      expect(a.result.exitCode).toBe(3);
      expect(a.result.stdout).toContain("touch: /etc/x: Read-only file system\n");
      expect(a.result.stderr).toBe("err\n");
      expect(new Set([a.result.jobDir, b.result.jobDir, c.result.jobDir]).size).toBe(3);
    } finally {
      await pool.close();
    }
    expect(await projectLeftovers(docker, spec.project)).toEqual([]);
  });

  it("gives identical probe reports pooled and cold", async () => {
    const spec = specOf(project, "default");
    const t = project.spec.templates.default;
    if (t === undefined) throw new Error("no template");
    // The probe's own launch: its script as the command and its shorter deadline (runtime/walls.ts).
    const probeSpec = { ...spec, timeoutSeconds: Math.min(spec.timeoutSeconds, PROBE_TIMEOUT_SECONDS) };
    const pool = new WarmPool(docker, { size: 1, preflight: policyPreflight() });
    const launcher = new Launcher(docker, { ledger: false, preflight: policyPreflight(), pool });
    try {
      await pool.warm(probeSpec);
      const [waiting] = (await members(spec.project)).map((c) => c.Labels["sandbox.task"]);
      const pooled = await runProbe(launcher, spec, t);
      const cold = await runProbe(
        new Launcher(docker, { ledger: false, preflight: policyPreflight() }),
        spec,
        t,
      );
      expect(pooled.result.id).toBe(waiting);
      expect(pooled.report.passed).toBe(true);
      expect(pooled.report).toEqual(cold.report);
      // The four escape attempts, in pooled members and cold: the same walls stop them, the same way.
      const coldLauncher = new Launcher(docker, { ledger: false, preflight: policyPreflight() });
      for (const check of ESCAPE_CHECKS) {
        await pool.settled();
        const before = (await members(spec.project)).map((c) => c.Labels["sandbox.task"]);
        const inPool = await runEscape(launcher, docker, spec, check);
        const outside = await runEscape(coldLauncher, docker, spec, check);
        // The escape's own task id is not given back: its member is the one that was waiting.
        expect(before).toHaveLength(1);
        expect((await members(spec.project)).map((c) => c.Labels["sandbox.task"])).not.toContain(before[0]);
        expect({ ...inPool, evidence: scrub(inPool.evidence) }).toEqual({
          ...outside,
          evidence: scrub(outside.evidence),
        });
        expect(inPool.blocked).toBe(true);
        expect(inPool.leftovers).toEqual([]);
      }
    } finally {
      await pool.close();
    }
  });

  it("enforces the deadline the same way", async () => {
    const spec = specOf(project, "short");
    const pool = new WarmPool(docker, { size: 1, preflight: policyPreflight() });
    const launcher = new Launcher(docker, { ledger: false, preflight: policyPreflight(), pool });
    try {
      await pool.warm(spec);
      const [waiting] = (await members(spec.project)).map((c) => c.Labels["sandbox.task"]);
      const r = await launcher.run(spec, {
        files: { "run.sh": "sleep 30\n" },
      });
      expect(r.id).toBe(waiting);
      expect(r.limits).toEqual(["timeout"]);
      expect(r.killedByLauncher).toBe(false);
    } finally {
      await pool.close();
    }
  });

  it("serves any command from one pool, and launches cold an explicit id or standard input", async () => {
    const spec = specOf(project, "default");
    const pool = new WarmPool(docker, { size: 1, preflight: policyPreflight() });
    const l = new Launcher(docker, { ledger: false, preflight: policyPreflight(), pool });
    try {
      await pool.warm(spec);
      const [waiting] = (await members(spec.project)).map((c) => c.Labels["sandbox.task"]);
      // A command with words the shell would split or expand: the gate execs it word for word.
      const other = await l.run(spec, { command: ["echo", "it's $HOME", "`id`", "a  b"] });
      expect(other.id).toBe(waiting);
      expect(other.stdout).toBe("it's $HOME `id` a  b\n");
      await pool.settled();
      const [next] = (await members(spec.project)).map((c) => c.Labels["sandbox.task"]);
      const named = await l.run(spec, { id: "named-one", files: { "run.sh": "echo named\n" } });
      const input = await l.run(spec, { command: ["cat"], stdin: Readable.from(["from stdin\n"]) });
      expect(named.id).toBe("named-one");
      expect(named.stdout).toBe("named\n");
      expect(input.id).not.toBe(next);
      expect(input.stdout).toBe("from stdin\n");
      expect((await members(spec.project)).map((c) => c.Labels["sandbox.task"])).toEqual([next]);
    } finally {
      await pool.close();
    }
  });
});

describe("claims", () => {
  it("hands each member to one claim only, in the process and on the engine", async () => {
    const spec = specOf(project, "default");
    const pool = new WarmPool(docker, { size: 2, preflight: policyPreflight() });
    const claimed = [];
    try {
      await pool.warm(spec);
      const got = await Promise.all([1, 2, 3, 4].map(() => pool.claim(spec)));
      claimed.push(...got.filter((m) => m !== undefined));
      expect(claimed).toHaveLength(2);
      expect(new Set(claimed.map((m) => m.id)).size).toBe(2);
      for (const m of claimed) {
        expect((await m.container.inspect()).Name).toBe(`/${m.name}`);
        // Another process holding the old name cannot claim it again: the engine has no such container now.
        await expect(
          docker.getContainer(poolMemberName(spec.project, m.id)).rename({ name: `${m.name}-again` }),
        ).rejects.toMatchObject({ statusCode: 404 });
      }
    } finally {
      for (const m of claimed) await m.container.remove({ force: true });
      await pool.close();
    }
  });

  it("never reuses a member: every task of a long run gets its own", async () => {
    const spec = specOf(project, "default");
    const pool = new WarmPool(docker, { size: 2, preflight: policyPreflight() });
    const { seen, onEvent } = inspector(spec.project);
    const l = new Launcher(docker, { ledger: false, preflight: policyPreflight(), pool, onEvent });
    try {
      await pool.warm(spec);
      const run = () => l.run(spec, { files: { "run.sh": "ls -A /job\n" } });
      const results = [...(await Promise.all([run(), run(), run()]))];
      await pool.settled();
      results.push(await run(), await run());
      expect(new Set(results.map((r) => r.id)).size).toBe(5);
      const containerIds = await Promise.all(results.map(async (r) => (await seen.get(r.id))?.Id));
      expect(new Set(containerIds).size).toBe(5);
      expect(containerIds).not.toContain(undefined);
      expect(results.map((r) => r.stdout)).toEqual(Array(5).fill("run.sh\n"));
    } finally {
      await pool.close();
    }
  });

  it("drains the members of an older template version, never handing them a task", async () => {
    const name = `pool-v-${Math.random().toString(36).slice(2, 8)}`;
    const jobRoot = mkdtempSync(join(tmpdir(), `${name}-jobs-`));
    const version = (memoryMb: number) =>
      track(
        resolveProject({
          name,
          jobRoot,
          budget: { monthlyCapUsd: 100 },
          templates: { default: { image: TEST_IMAGE, resources: { memoryMb } } },
        }),
      );
    const v1 = specOf(version(256), "default");
    const v2 = specOf(version(128), "default");
    expect(v2.specHash).not.toBe(v1.specHash);
    const pool = new WarmPool(docker, { size: 2, preflight: policyPreflight() });
    launcherFor(pool, name);
    const since = Math.floor(Date.now() / 1000) - 1;
    try {
      await pool.warm(v1);
      const old = await members(name);
      expect(old.map((c) => c.Labels["sandbox.spec-hash"])).toEqual([v1.specHash, v1.specHash]);
      const oldIds = old.map((c) => c.Id);
      const { result: r, inspected } = await runInspected(pool, v2, {
        files: {
          "run.sh":
            "cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes\n",
        },
      });
      expect(old.map((c) => c.Labels["sandbox.task"])).not.toContain(r.id);
      expect(r.stdout).toBe(`${128 * 1024 * 1024}\n`);
      await pool.settled();
      const now = await members(name);
      expect(now.map((c) => c.Labels["sandbox.spec-hash"])).toEqual([v2.specHash, v2.specHash]);
      expect(now.map((c) => c.State)).toEqual(["running", "running"]);
      expect(now.filter((c) => oldIds.includes(c.Id))).toEqual([]);
      // Their job folders went with them.
      for (const c of old) expect(readdirSync(jobRoot)).not.toContain(c.Labels["sandbox.task"]);
      // The task ran in a new-version member, started once (behind its gate) before its claim.
      expect(await started(since, [inspected.Id])).toEqual([inspected.Id]);
      expect(inspected.Config.Labels["sandbox.spec-hash"]).toBe(v2.specHash);
    } finally {
      await pool.close();
    }
  });
});

describe("the budget and the preflight", () => {
  it("holds the concurrency limit with the pool on", async () => {
    const p = track(
      testProject(
        "pool-c",
        { default: { image: TEST_IMAGE } },
        { monthlyCapUsd: 100, maxConcurrentTasks: 2 },
      ),
    );
    const spec = specOf(p, "default");
    const pool = new WarmPool(docker, { size: 2, preflight: policyPreflight() });
    const l = new Launcher(docker, { ledger: false, preflight: policyPreflight(), pool });
    let maxRunning = 0;
    let maxWaiting = 0;
    let polling = true;
    const poll = (async () => {
      while (polling) {
        const all = await docker.listContainers({
          all: true,
          filters: { label: [`sandbox.project=${p.spec.name}`] },
        });
        maxRunning = Math.max(maxRunning, all.filter((c) => c.State === "running").length);
        maxWaiting = Math.max(maxWaiting, all.filter((c) => c.Names[0]?.includes("-pool-")).length);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    try {
      await pool.warm(spec);
      const results = await Promise.all(
        Array.from({ length: 6 }, () => l.run(spec, { files: { "run.sh": "sleep 1\n" } })),
      );
      expect(results.map((r) => r.exitCode)).toEqual(Array(6).fill(0));
    } finally {
      polling = false;
      await poll;
      await pool.close();
    }
    // A waiting member is started: it counts with the tasks against the concurrency, and never beyond it.
    expect(maxRunning).toBe(2);
    expect(maxWaiting).toBeLessThanOrEqual(2);
    expect(maxWaiting).toBeGreaterThan(0);
  });

  it("refuses a pool larger than the budget's concurrency", async () => {
    const p = track(
      testProject(
        "pool-k",
        { default: { image: TEST_IMAGE } },
        { monthlyCapUsd: 100, maxConcurrentTasks: 2 },
      ),
    );
    const pool = new WarmPool(docker, { size: 3, preflight: policyPreflight() });
    await expect(pool.warm(specOf(p, "default"))).rejects.toThrow(
      `WarmPool: size 3 is more than project "${p.spec.name}" allows at once (maxConcurrentTasks 2); a pool holds at most the budget's concurrency`,
    );
    expect(await members(p.spec.name)).toEqual([]);
  });

  it("passes every member through the preflight before creating it", async () => {
    const spec = specOf(project, "default");
    const tampered = { ...spec, capDrop: ["NET_RAW", "MKNOD"] };
    const pool = new WarmPool(docker, { size: 1, preflight: policyPreflight() });
    const before = readdirSync(project.jobRoot);
    await expect(pool.warm(tampered)).rejects.toThrow(LaunchRefused);
    await expect(pool.warm(tampered)).rejects.toThrow("sandbox-require-drop-net-admin");
    expect(await members(spec.project)).toEqual([]);
    expect(readdirSync(project.jobRoot)).toEqual(before);
    await pool.close();
  });

  it("refuses bad sizes and proxy-mode templates with what is allowed", async () => {
    for (const size of [0, 1.5, -1, Number.NaN, "2"]) {
      expect(() => new WarmPool(docker, { size: size as number, preflight: policyPreflight() })).toThrow(
        `WarmPool: size ${String(size)} must be a whole number from 1 to 10000`,
      );
    }
    const proxied = { ...specOf(project, "default"), network: "sandbox:per-task" };
    await expect(
      new WarmPool(docker, { size: 1, preflight: policyPreflight() }).warm(proxied),
    ).rejects.toThrow('template "default" gets a network of its own per task at launch');
  });
});

describe("the off switch after a crash", () => {
  it("removes everything a runtime killed mid-refill left", async () => {
    const p = track(
      testProject(
        "pool-x",
        { default: { image: TEST_IMAGE } },
        { monthlyCapUsd: 100, maxConcurrentTasks: 20 },
      ),
    );
    const spec = specOf(p, "default");
    // The refill runs in a process of its own, killed outright as a crash would.
    const child = spawnPoolHolder(spec, 20);
    try {
      const deadline = Date.now() + 60_000;
      while ((await members(p.spec.name)).length < 2) {
        if (Date.now() > deadline) throw new Error("the refill never created a member");
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      child.kill("SIGKILL");
      await new Promise((r) => child.once("exit", r));
    }
    expect((await members(p.spec.name)).length).toBeGreaterThanOrEqual(2);
    expect(readdirSync(p.jobRoot).length).toBeGreaterThan(0);
    await offSwitch(docker, p.spec.name, { jobRoot: p.jobRoot });
    expect(await projectLeftovers(docker, p.spec.name)).toEqual([]);
    expect(readdirSync(p.jobRoot)).toEqual([]);
  });
});
