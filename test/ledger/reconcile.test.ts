// Reconciliation's arithmetic and the watchdog's decisions, without an engine: what a run a dead launcher left is
// charged (the engine's times, not its admission plus its maximum), how a dead launcher is told from a live one whose
// process id was reused, and when the watchdog kills (never before a deadline; later while the launcher lives).
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { taskUsd } from "../../components/model";
import { type AdmitRequest, Ledger, type Meter, type RunRecord } from "../../runtime/ledger";
import { type EngineTimes, type OrphanEngine, reconciledUse } from "../../runtime/ledger/reconcile";
import {
  killTime,
  LIVE_LAUNCHER_MARGIN_MS,
  ownerAlive,
  processStart,
  thisProcess,
  type WatchEntry,
  watchDir,
  watchOnce,
} from "../../runtime/orphan-watch";

/** 1 vCPU at $3.60 an hour: a tenth of a cent a second. A run of at most 100 s costs at most $0.10. */
const RATES = { usdPerVcpuHour: 3.6, usdPerGbHour: 0 };
const SIZE = { vcpu: 1, memoryMb: 1024 };
const T0 = Date.UTC(2026, 11, 1, 12, 0, 0);

const meter = (over: Partial<Meter> = {}): Meter => ({
  project: "rec-test",
  enforce: "metered",
  capUsd: 1,
  fixedUsd: 0,
  rates: RATES,
  concurrency: 10,
  agents: {},
  templates: ["default"],
  enabled: true,
  ...over,
});

let seq = 0;
const req = (over: Partial<AdmitRequest> = {}): AdmitRequest => ({
  id: `r${++seq}`,
  template: "default",
  specHash: "abc",
  command: ["sleep", "600"],
  container: `c${seq}`,
  size: SIZE,
  maxSeconds: 100,
  ...over,
});

const run = (over: Partial<RunRecord> = {}): RunRecord =>
  ({ admittedAt: T0, maxSeconds: 100, ...over }) as RunRecord;

const times = (over: Partial<EngineTimes> = {}): EngineTimes => ({
  startedAt: T0 + 500,
  finishedAt: T0 + 60_500,
  exitCode: 137,
  stoppedNow: false,
  ...over,
});

/** A process id that no process has now: one that just ended. */
function deadPid(): number {
  const p = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
    encoding: "utf8",
  });
  return Number(p.stdout);
}

/** A ledger on a fresh file with a clock the test moves, and a way to say who admitted a run. */
function ledgerAt(over: Partial<Meter> = {}) {
  const file = join(mkdtempSync(join(tmpdir(), "rec-")), "p.sqlite");
  let now = T0;
  const ledger = Ledger.open(file, meter(over), { clock: () => now });
  return {
    ledger,
    at: (ms: number) => {
      now = ms;
    },
    /** Rewrites the launcher recorded for run `id` (as if another process had admitted it). */
    owner: (id: string, pid: number, start: string | null) => {
      const db = new DatabaseSync(file);
      db.prepare("UPDATE runs SET owner_pid = ?, owner_start = ? WHERE id = ?").run(pid, start, id);
      db.close();
    },
  };
}

/** An engine that answers with `t` for every container and records what was asked of it. */
function fakeEngine(t: EngineTimes | undefined, fail?: string) {
  const calls: string[] = [];
  const engine: OrphanEngine = {
    stop: async (c) => {
      calls.push(`stop ${c}`);
      return t;
    },
    remove: async (c) => {
      calls.push(`remove ${c}`);
      if (fail !== undefined) throw new Error(fail);
    },
    cleanup: async (r) => {
      calls.push(`cleanup ${r.id}`);
    },
  };
  return { engine, calls };
}

describe("what a run a dead launcher left is charged for", () => {
  it("is what its container ran by the engine's clock, from its start to its end", async () => {
    expect(reconciledUse(run(), times(), T0 + 999_000)).toEqual({
      endedAt: T0 + 60_500,
      usedSeconds: 60,
      basis: "engine",
    });
  });

  it("is not limited to the run's maximum: a task that outran its deadline is charged all it ran", async () => {
    const u = reconciledUse(run(), times({ finishedAt: T0 + 500 + 3_600_000 }), T0 + 4_000_000);
    expect(u.usedSeconds).toBe(3600);
    expect(u.endedAt).toBe(T0 + 3_600_500);
  });

  it("runs to now when the container has not ended (it was stopped as it was reconciled)", async () => {
    expect(reconciledUse(run(), times({ finishedAt: undefined }), T0 + 10_500)).toMatchObject({
      endedAt: T0 + 10_500,
      usedSeconds: 10,
    });
    // An end before the start (a container started again) is not its end.
    expect(reconciledUse(run(), times({ finishedAt: T0 }), T0 + 2_500).usedSeconds).toBe(2);
  });

  it("starts at the run's admission for a pool member's container, started before its claim", async () => {
    // The member waited 100 s behind its gate (charged as the project's wait); the task was admitted at its claim.
    const claimed = run({ admittedAt: T0 + 100_000 });
    expect(reconciledUse(claimed, times({ startedAt: T0, finishedAt: T0 + 130_000 }), T0 + 999_000)).toEqual({
      endedAt: T0 + 130_000,
      usedSeconds: 30,
      basis: "engine",
    });
    // Still running at the reconciliation: from the claim to now.
    expect(
      reconciledUse(claimed, times({ startedAt: T0, finishedAt: undefined }), T0 + 110_000).usedSeconds,
    ).toBe(10);
    // Ended before the claim was recorded (a member that died waiting): nothing for the task.
    expect(
      reconciledUse(claimed, times({ startedAt: T0, finishedAt: T0 + 50_000 }), T0 + 999_000),
    ).toMatchObject({
      usedSeconds: 0,
    });
  });

  it("is nothing when the container never started", async () => {
    expect(reconciledUse(run(), times({ startedAt: undefined }), T0 + 5_000)).toEqual({
      endedAt: T0 + 5_000,
      usedSeconds: 0,
      basis: "never-started",
    });
  });

  it("is up to its deadline, its maximum, when the engine no longer knows the container", async () => {
    expect(reconciledUse(run(), undefined, T0 + 999_000)).toEqual({
      endedAt: T0 + 100_000,
      usedSeconds: undefined,
      basis: "deadline",
    });
    // Before its deadline: up to now.
    expect(reconciledUse(run(), undefined, T0 + 30_000).endedAt).toBe(T0 + 30_000);
  });
});

describe("reconciling a ledger", () => {
  it("charges the engine's duration beyond the maximum, stops and removes what was left, and says so", async () => {
    const t = ledgerAt();
    const r = await t.ledger.admit(req());
    t.owner(r.id, deadPid(), null);
    t.at(T0 + 900_000);
    const { engine, calls } = fakeEngine(times({ finishedAt: T0 + 500 + 300_000, stoppedNow: true }));
    const [closed] = await t.ledger.reconcile(engine);
    expect(calls).toEqual([`stop ${r.container}`, `remove ${r.container}`, `cleanup ${r.id}`]);
    expect(closed).toMatchObject({ id: r.id, status: "reconciled", exitCode: 137, endedAt: T0 + 300_500 });
    // 300 s at $0.001 a second: three times its $0.10 maximum, what it really used.
    expect(closed?.chargeUsd).toBeCloseTo(taskUsd(SIZE, RATES, 300), 12);
    expect(closed?.chargeUsd).toBeGreaterThan(r.maxChargeUsd);
    const [alert] = await t.ledger.alerts({ kind: "reconciled" });
    expect(
      alert?.message.startsWith(`run ${r.id} (template default) was left open by a launcher that died (pid `),
    ).toBe(true);
    expect(alert?.message).toMatch(
      /; the engine says it ran 300\.0 s \(it was still running and was stopped now\); it was charged \$0\.3; its container, job folder and task network were removed$/,
    );
  });

  it("clips the charge to what the cap leaves, and says what was used", async () => {
    const t = ledgerAt({ capUsd: 0.5 });
    const r = await t.ledger.admit(req());
    t.owner(r.id, deadPid(), null);
    t.at(T0 + 3_600_000);
    const { engine } = fakeEngine(times({ finishedAt: T0 + 500 + 2_000_000 }));
    const [closed] = await t.ledger.reconcile(engine);
    expect(closed?.chargeUsd).toBeCloseTo(0.5, 12);
    expect((await t.ledger.alerts({ kind: "reconciled" }))[0]?.message).toMatch(
      /it was charged \$0\.5 \(it used \$2\.00; the charge is clipped to what the caps leave\)/,
    );
  });

  it("charges up to the deadline when the engine no longer knows the container, and says so", async () => {
    const t = ledgerAt();
    const r = await t.ledger.admit(req());
    t.owner(r.id, deadPid(), null);
    t.at(T0 + 900_000);
    const { engine } = fakeEngine(undefined);
    const [closed] = await t.ledger.reconcile(engine);
    expect(closed?.chargeUsd).toBeCloseTo(r.maxChargeUsd, 12);
    expect(closed?.endedAt).toBe(T0 + 100_000);
    expect((await t.ledger.alerts({ kind: "reconciled" }))[0]?.message).toMatch(
      /the engine no longer knows its container, so it was charged up to its deadline, its maximum, as no more is known; it was charged \$0\.1;/,
    );
  });

  it("closes the books even when what was left cannot be removed, and names what is left", async () => {
    const t = ledgerAt();
    const r = await t.ledger.admit(req());
    t.owner(r.id, deadPid(), null);
    const { engine } = fakeEngine(times({ startedAt: undefined, finishedAt: undefined }), "engine busy");
    const [closed] = await t.ledger.reconcile(engine);
    expect(closed).toMatchObject({ status: "reconciled", chargeUsd: 0 });
    expect((await t.ledger.alerts({ kind: "reconciled" }))[0]?.message).toMatch(
      /its container never started; it was charged \$0; could not remove its container \(Error: engine busy\); `sandbox off` removes them$/,
    );
    expect(await t.ledger.reconcile(engine)).toEqual([]);
  });

  it("knows a dead launcher by more than its process id: an id given again to another process is not the launcher", async () => {
    const t = ledgerAt();
    const me = thisProcess();
    expect(me.start).toMatch(/^[0-9a-f-]+:\d+$/);
    const live = await t.ledger.admit(req());
    const legacy = await t.ledger.admit(req());
    const reused = await t.ledger.admit(req());
    const gone = await t.ledger.admit(req());
    // This process, recorded with its start: it lives. A row from before the start was recorded: by its id only.
    t.owner(legacy.id, process.pid, null);
    // This process's id, recorded with another start: the launcher was another process that had the same id.
    t.owner(reused.id, process.pid, `${me.start ?? ""}0`);
    t.owner(gone.id, deadPid(), me.start);
    expect((await t.ledger.openRuns()).find((o) => o.run.id === live.id)).toMatchObject({
      host: hostname(),
      pid: process.pid,
      start: me.start,
    });
    const { engine } = fakeEngine(times());
    const closed = await t.ledger.reconcile(engine);
    expect(closed.map((c) => c.id).sort()).toEqual([gone.id, reused.id].sort());
    expect((await t.ledger.openRuns()).map((o) => o.run.id).sort()).toEqual([live.id, legacy.id].sort());
  });
});

describe("the launcher's identity", () => {
  it("is its process's start as the kernel knows it, and another process's differs", async () => {
    const me = processStart(process.pid);
    expect(me).toBeDefined();
    expect(processStart(process.pid)).toBe(me);
    expect(processStart(deadPid())).toBeUndefined();
    expect(ownerAlive({ host: hostname(), pid: process.pid, start: me ?? null })).toBe(true);
    expect(ownerAlive({ host: hostname(), pid: process.pid, start: "another-boot:1" })).toBe(false);
    expect(ownerAlive({ host: hostname(), pid: deadPid(), start: null })).toBe(false);
    expect(ownerAlive({ host: hostname(), pid: 0, start: null })).toBe(false);
    // Another machine's launcher cannot be told: it is never taken for dead.
    expect(ownerAlive({ host: `${hostname()}-other`, pid: deadPid(), start: null })).toBe(true);
  });
});

const entry = (over: Partial<WatchEntry> = {}): WatchEntry => ({
  runId: "t1",
  container: "abc",
  deadline: T0 + 10_000,
  timeoutMs: 8_000,
  maxMs: 9_000,
  jobDir: "/nowhere/t1",
  socket: "/nowhere.sock",
  owner: { host: hostname(), pid: 1, start: null },
  ...over,
});

describe("when the watchdog kills", () => {
  it("never before the entry's deadline, nor before the template's deadline from the container's start", async () => {
    expect(killTime(entry(), undefined, false)).toBe(T0 + 10_000);
    expect(killTime(entry(), T0 + 1_000, false)).toBe(T0 + 10_000);
    // A start that came late: the template's deadline from the start.
    expect(killTime(entry(), T0 + 5_000, false)).toBe(T0 + 13_000);
  });

  it("only after the launcher's own kill and a margin while the launcher lives: its own deadline acts first", async () => {
    expect(killTime(entry(), T0 + 1_000, true)).toBe(T0 + 10_000 + LIVE_LAUNCHER_MARGIN_MS);
    expect(killTime(entry(), T0 + 5_000, true)).toBe(T0 + 14_000 + LIVE_LAUNCHER_MARGIN_MS);
    expect(killTime(entry(), undefined, true)).toBe(T0 + 10_000 + LIVE_LAUNCHER_MARGIN_MS);
  });
});

describe("the watchdog's pass over its folder", () => {
  it("kills a dead launcher's container once its deadline passed, and leaves one whose deadline has not", async () => {
    const root = mkdtempSync(join(tmpdir(), "watch-"));
    const socket = join(root, "engine.sock");
    const asked: string[] = [];
    const started = new Date(Date.now() - 60_000).toISOString();
    const server = createServer((rq, rs) => {
      asked.push(`${rq.method} ${rq.url}`);
      if (rq.method === "GET" && rq.url?.startsWith("/containers/gone/")) {
        rs.writeHead(404).end("{}");
        return;
      }
      if (rq.method === "GET") {
        rs.writeHead(200, { "content-type": "application/json" });
        rs.end(JSON.stringify({ State: { Running: true, StartedAt: started } }));
        return;
      }
      rs.writeHead(204).end();
    });
    await new Promise<void>((r) => server.listen(socket, r));
    try {
      const dir = watchDir(root);
      mkdirSync(dir);
      const dead = { host: hostname(), pid: deadPid(), start: null };
      const write = (id: string, e: Partial<WatchEntry>) =>
        writeFileSync(join(dir, `${id}.json`), JSON.stringify(entry({ socket, owner: dead, ...e })));
      write("due", { container: "due", deadline: Date.now() - 1_000, timeoutMs: 1_000, maxMs: 2_000 });
      write("later", { container: "later", deadline: Date.now() + 60_000, timeoutMs: 1_000, maxMs: 2_000 });
      // Past its entry's deadline, but the template's deadline from the start (60 s ago + 600 s) is not.
      write("slow", { container: "slow", deadline: Date.now() - 1_000, timeoutMs: 600_000, maxMs: 601_000 });
      // A live launcher's task just past its deadline: the launcher acts first.
      write("live", {
        container: "live",
        deadline: Date.now() - 1_000,
        timeoutMs: 1_000,
        owner: thisProcess(),
      });
      write("gone", { container: "gone", deadline: Date.now() - 1_000, timeoutMs: 1_000, maxMs: 2_000 });
      writeFileSync(join(dir, "torn.json"), "{");
      const pass = await watchOnce(dir);
      expect(asked.filter((a) => a.startsWith("POST"))).toEqual(["POST /containers/due/kill?signal=SIGKILL"]);
      expect(readdirSync(dir).sort()).toEqual(["later.json", "live.json", "slow.json"]);
      expect(pass.left).toBe(3);
      expect(pass.next).toBeLessThanOrEqual(Date.now() + 1_000);
    } finally {
      server.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});
