import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { taskUsd } from "../../components/model";
import {
  type AdmitRequest,
  type AlertRecord,
  BudgetRefused,
  LEDGER_SCHEMA_VERSION,
  Ledger,
  type Meter,
} from "../../runtime/ledger";
import { AlertOutbox, alertSinks, postAlert } from "../../runtime/ledger/alerts";

/** 1 vCPU at $3.60 an hour: a tenth of a cent a second; memory free. A run of at most 100 s costs at most $0.10. */
const RATES = { usdPerVcpuHour: 3.6, usdPerGbHour: 0 };
const SIZE = { vcpu: 1, memoryMb: 1024 };
const T0 = Date.UTC(2026, 11, 1, 12, 0, 0);

function meter(over: Partial<Meter> = {}): Meter {
  return {
    project: "meter-test",
    enforce: "metered",
    capUsd: 1,
    fixedUsd: 0,
    rates: RATES,
    concurrency: 10,
    agents: {},
    templates: ["default", "big"],
    enabled: true,
    ...over,
  };
}

function freshFile(): string {
  return join(mkdtempSync(join(tmpdir(), "ledger-")), "p.sqlite");
}

/** A ledger on a fresh file with a clock the test moves. */
function ledgerAt(over: Partial<Meter> = {}, file = freshFile()) {
  let now = T0;
  const alerts: AlertRecord[] = [];
  const ledger = Ledger.open(file, meter(over), { clock: () => now, sinks: [(a) => alerts.push(a)] });
  return {
    ledger,
    alerts,
    file,
    at: (ms: number) => {
      now = ms;
    },
    advance: (s: number) => {
      now += s * 1000;
    },
    get now() {
      return now;
    },
  };
}

let seq = 0;
const req = (over: Partial<AdmitRequest> = {}): AdmitRequest => ({
  id: `r${++seq}`,
  template: "default",
  specHash: "abc",
  command: ["sh", "/job/run.sh"],
  container: `c${seq}`,
  size: SIZE,
  maxSeconds: 100,
  ...over,
});

const refusalOf = async (f: () => Promise<unknown>): Promise<string> => {
  try {
    await f();
  } catch (e) {
    if (e instanceof BudgetRefused) return e.message;
    throw e;
  }
  throw new Error("not refused");
};

describe("the ledger's charge", () => {
  it("charges a run for the time it took, by the budget's own pricing formula", async () => {
    const t = ledgerAt();
    const run = await t.ledger.admit(req());
    expect(run).toMatchObject({ status: "open", month: "2026-12", admittedAt: T0 });
    expect(run.maxChargeUsd).toBeCloseTo(0.1, 12);
    t.advance(12.5);
    const done = await t.ledger.complete(run.id, { exitCode: 0, limits: [] });
    expect(done.chargeUsd).toBeCloseTo(taskUsd(SIZE, RATES, 12.5), 12);
    expect(done.chargeUsd).toBeCloseTo(0.0125, 12);
    expect(await t.ledger.spend()).toMatchObject({ runs: 1, open: 0, blocked: false });
    expect((await t.ledger.spend()).spentUsd).toBeCloseTo(0.0125, 12);
  });

  it("never charges more than the run's maximum, however late it is closed", async () => {
    const t = ledgerAt();
    const run = await t.ledger.admit(req({ maxSeconds: 10 }));
    t.advance(500);
    expect((await t.ledger.complete(run.id, { exitCode: 137 })).chargeUsd).toBeCloseTo(0.01, 12);
  });

  it("counts what open runs have used so far in the month's spend", async () => {
    const t = ledgerAt();
    await t.ledger.admit(req());
    t.advance(30);
    expect(await t.ledger.spend()).toMatchObject({ open: 1 });
    expect((await t.ledger.spend()).spentUsd).toBeCloseTo(0.03, 12);
  });

  it("pays the always-on part first: the cap for runs is the cap less it", async () => {
    const t = ledgerAt({ capUsd: 1, fixedUsd: 0.95 });
    const message = await refusalOf(() => t.ledger.admit(req()));
    expect(message).toBe(
      'launch of template "default" refused: month-to-date spend $0 + this run\'s maximum (1 vCPU × $3.6/h + 1 GB × $0/h) × 100 s = $0.1 = $0.1 > the cap for runs $0.05 (cap $1.00 less $0.95 for what runs all month)',
    );
  });
});

describe("admission under the cap", () => {
  it("refuses a launch whose maximum charge does not fit, with the arithmetic, and records the refusal as an alert", async () => {
    const t = ledgerAt({ capUsd: 0.15 });
    const a = await t.ledger.admit(req());
    t.advance(100);
    await t.ledger.complete(a.id, { exitCode: 0 });
    const message = await refusalOf(() => t.ledger.admit(req()));
    expect(message).toBe(
      'launch of template "default" refused: month-to-date spend $0.1 + this run\'s maximum (1 vCPU × $3.6/h + 1 GB × $0/h) × 100 s = $0.1 = $0.2 > the cap for runs $0.15',
    );
    expect(t.alerts.map((x) => [x.kind, x.message])).toEqual([["launch-refused", message]]);
    // Nothing was written for the refused run.
    expect((await t.ledger.runs()).length).toBe(1);
  });

  it("refuses everything in a disabled project", async () => {
    const t = ledgerAt({ enabled: false });
    expect(await refusalOf(() => t.ledger.admit(req()))).toBe(
      'launch of template "default" refused: project "meter-test" is disabled (the hard stop)',
    );
  });

  it("holds the project's concurrency across every process's open runs; a full house is no alert", async () => {
    const t = ledgerAt({ concurrency: 2 });
    await t.ledger.admit(req());
    await t.ledger.admit(req());
    expect(await refusalOf(() => t.ledger.admit(req()))).toBe(
      'launch of template "default" refused: 2 tasks of project "meter-test" are running, its limit is 2',
    );
    expect(t.alerts).toEqual([]);
    expect(await t.ledger.alerts({ kind: "launch-refused" })).toEqual([]);
  });
});

describe("alerts at 80 and 90 %, the stop at the cap, and what lifts it", () => {
  it("fires each threshold once, stops running work at the cap, refuses launches and up, and lifts on a raised cap or a new month", async () => {
    const t = ledgerAt({ capUsd: 0.25 });
    // $0.2125 spent in finished runs (85 %): the 80 % alert once, at $0.20.
    for (const [s, max] of [
      [100, 100],
      [100, 100],
      [12.5, 20],
    ] as const) {
      const r = await t.ledger.admit(req({ maxSeconds: max }));
      t.advance(s);
      await t.ledger.complete(r.id, { exitCode: 0 });
    }
    expect(t.alerts.map((a) => a.kind)).toEqual(["budget-80"]);
    expect(t.alerts[0]?.message).toBe('project "meter-test" spent $0.2 of $0.25 for runs this month (80 %)');
    // Two runs at once, each fitting alone ($0.2125 + at most $0.03): together they would cross the cap.
    const a = await t.ledger.admit(req({ maxSeconds: 30 }));
    const b = await t.ledger.admit(req({ maxSeconds: 30, agent: "x" }));
    // Both burn $0.002 a second: the $0.0375 left lasts 18.75 s.
    const start = t.now;
    expect(await t.ledger.stopTime(a.id)).toBe(start + 18_750);
    expect(await t.ledger.stopTime(b.id)).toBe(start + 18_750);
    t.advance(10); // $0.2325: 93 %
    await t.ledger.tick();
    expect(t.alerts.map((x) => x.kind)).toEqual(["budget-80", "budget-90"]);
    await t.ledger.tick();
    expect(t.alerts.filter((x) => x.kind === "budget-90").length).toBe(1);
    t.advance(8.95); // the launcher saw the stop time 200 ms late
    const ca = await t.ledger.complete(a.id, { exitCode: 137, stoppedBy: "cap", killedByLauncher: true });
    const cb = await t.ledger.complete(b.id, { exitCode: 137, stoppedBy: "cap", killedByLauncher: true });
    expect((ca.chargeUsd ?? 0) + (cb.chargeUsd ?? 0)).toBeCloseTo(0.0375, 9);
    const spend = await t.ledger.spend();
    expect(spend.spentUsd).toBeCloseTo(0.25, 9);
    expect(spend.blocked).toBe(true);
    expect(t.alerts.map((x) => x.kind)).toEqual([
      "budget-80",
      "budget-90",
      "stopped-by-cap",
      "budget-100",
      "stopped-by-cap",
    ]);
    expect(await refusalOf(() => t.ledger.admit(req({ maxSeconds: 1 })))).toBe(
      'launch of template "default" refused: the month\'s spend $0.25 has reached the cap for runs $0.25; new launches and `up` are refused until the cap is raised or the month turns (2027-01-01T00:00:00.000Z)',
    );
    expect(await t.ledger.upRefusal()).toBe(
      'project "meter-test" has reached its monthly cap: $0.25 spent of $0.25 for runs in 2026-12; `up` is refused until budget.monthlyCapUsd is raised or the month turns (2027-01-01T00:00:00.000Z)',
    );
    // Nothing restarts by itself: the stopped runs stay closed.
    expect((await t.ledger.runs()).filter((r) => r.status === "open")).toEqual([]);
    // A raised cap lifts the block.
    t.ledger.reconfigure(meter({ capUsd: 2 }));
    expect(await t.ledger.upRefusal()).toBeUndefined();
    expect((await t.ledger.admit(req())).status).toBe("open");
    // Back at the old cap, a new month (UTC) lifts it too.
    const u = ledgerAt({ capUsd: 0.25 }, t.file);
    u.at(t.now);
    expect(await u.ledger.upRefusal()).toBeDefined();
    u.at(Date.UTC(2027, 0, 1, 0, 0, 1));
    expect(await u.ledger.upRefusal()).toBeUndefined();
    expect(await u.ledger.spend()).toMatchObject({ month: "2027-01", runs: 0, blocked: false });
    expect((await u.ledger.admit(req())).month).toBe("2027-01");
  });

  it("never lets the month's charges cross the cap, whatever runs at once and however late each is closed", async () => {
    const op = fc.record({
      gap: fc.integer({ min: 0, max: 60_000 }),
      vcpu: fc.constantFrom(0.25, 0.5, 1, 2),
      maxSeconds: fc.integer({ min: 1, max: 200 }),
      close: fc.nat(5),
      lateMs: fc.integer({ min: 0, max: 120_000 }),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(op, { minLength: 1, maxLength: 40 }),
        fc.constantFrom(0.05, 0.3, 1),
        async (ops, cap) => {
          const t = ledgerAt({ capUsd: cap, concurrency: 1000 });
          const open: string[] = [];
          for (const o of ops) {
            t.advance(o.gap / 1000);
            try {
              open.push(
                (
                  await t.ledger.admit(
                    req({ size: { vcpu: o.vcpu, memoryMb: 512 }, maxSeconds: o.maxSeconds }),
                  )
                ).id,
              );
            } catch (e) {
              if (!(e instanceof BudgetRefused)) throw e;
            }
            for (let i = 0; i < o.close && open.length > 0; i++) {
              const id = open.shift() as string;
              const stop = await t.ledger.stopTime(id);
              const save = t.now;
              // Closed at the stop (plus the launcher's lateness) when the cap comes first, else now.
              if (stop !== undefined && stop < t.now) t.at(stop + o.lateMs);
              await t.ledger.complete(id, { exitCode: 0 });
              t.at(Math.max(save, t.now));
            }
          }
          for (const id of open) {
            t.advance(1000);
            await t.ledger.complete(id, { exitCode: 0 });
          }
          const runs = await t.ledger.runs();
          const charged = runs.reduce((s, r) => s + (r.chargeUsd ?? 0), 0);
          expect(charged).toBeLessThanOrEqual(cap + 1e-9);
          for (const r of runs) expect(r.chargeUsd ?? 0).toBeLessThanOrEqual(r.maxChargeUsd + 1e-12);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe("agents and their profiles", () => {
  const agents = {
    alice: { templates: ["default"], monthlyCapUsd: 0.15, maxConcurrentTasks: 1 },
    bob: {},
  };

  it("admits the operator's own run (no agent) under the project's cap, refuses an unknown agent and a template outside the agent's profile", async () => {
    const t = ledgerAt({ agents });
    // The operator's run: no agent's profile applies, and it is recorded as no agent's.
    expect((await t.ledger.admit(req({ template: "big" }))).agent).toBeNull();
    expect(await refusalOf(() => t.ledger.admit(req({ agent: "mallory" })))).toBe(
      'launch of template "default" refused: agent "mallory" is not one of the project\'s agents (alice, bob)',
    );
    expect(await refusalOf(() => t.ledger.admit(req({ agent: "alice", template: "big" })))).toBe(
      'launch of template "big" refused: agent "alice" may use only the templates default',
    );
    expect((await t.ledger.admit(req({ agent: "bob", template: "big" }))).agent).toBe("bob");
  });

  it("holds an agent's concurrency and monthly cap, and stops its runs at its cap", async () => {
    const t = ledgerAt({ agents });
    const a = await t.ledger.admit(req({ agent: "alice" }));
    expect(await refusalOf(() => t.ledger.admit(req({ agent: "alice" })))).toBe(
      'launch of template "default" refused: agent "alice" has 1 tasks running, its limit is 1',
    );
    t.advance(60);
    await t.ledger.complete(a.id, { exitCode: 0 });
    expect(await refusalOf(() => t.ledger.admit(req({ agent: "alice" })))).toBe(
      'launch of template "default" refused: agent "alice": month-to-date spend $0.06 + this run\'s maximum (1 vCPU × $3.6/h + 1 GB × $0/h) × 100 s = $0.1 = $0.16 > its cap $0.15',
    );
    const b = await t.ledger.admit(req({ agent: "alice", maxSeconds: 80 }));
    // Alice's $0.09 left lasts 90 s, before the project's cap and after the run's own end: no stop.
    expect(await t.ledger.stopTime(b.id)).toBeUndefined();
    // Bob is held only by the project.
    expect((await t.ledger.admit(req({ agent: "bob" }))).status).toBe("open");
  });
});

describe("the ledger file", () => {
  it("is SQLite in WAL mode with its schema version recorded", async () => {
    const t = ledgerAt();
    await t.ledger.close();
    const db = new DatabaseSync(t.file);
    expect(db.prepare("PRAGMA journal_mode").get()).toEqual({ journal_mode: "wal" });
    expect(db.prepare("PRAGMA user_version").get()).toEqual({ user_version: LEDGER_SCHEMA_VERSION });
    db.close();
    // Opening again migrates nothing and keeps every row.
    const again = Ledger.open(t.file, meter());
    expect(await again.runs()).toEqual([]);
    await again.close();
  });

  it("refuses a ledger written by a newer toolkit, naming the versions", async () => {
    const file = freshFile();
    const db = new DatabaseSync(file);
    db.exec("PRAGMA user_version = 99");
    db.close();
    expect(() => Ledger.open(file, meter())).toThrow(
      `the ledger ${file} has schema version 99, newer than this toolkit's ${LEDGER_SCHEMA_VERSION}; use the newer toolkit`,
    );
  });
});

/** Runs test/ledger/worker.ts in its own Node process. */
function worker(args: string[]): {
  done: Promise<{ code: number | null; out: string }>;
  pid: number | undefined;
  kill: () => void;
} {
  const child = spawn(process.execPath, ["--import", "tsx", join(__dirname, "worker.ts"), ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    out += d.toString();
  });
  return {
    pid: child.pid,
    kill: () => child.kill("SIGKILL"),
    done: new Promise((resolve) => child.on("exit", (code) => resolve({ code, out }))),
  };
}

describe("one process, many launches at once", () => {
  it("admits one at a time through its store: 20 admissions at once hold the concurrency and never cross the cap", async () => {
    // Three slots; $0.25 for runs, each run's maximum $0.10.
    const t = ledgerAt({ capUsd: 0.25, concurrency: 3 });
    const settled = await Promise.allSettled(Array.from({ length: 20 }, () => t.ledger.admit(req())));
    const admitted = settled.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
    const refused = settled.flatMap((s) => (s.status === "rejected" ? [s.reason] : []));
    expect(admitted).toHaveLength(3);
    for (const r of refused) expect(r).toBeInstanceOf(BudgetRefused);
    expect((await t.ledger.runs()).filter((r) => r.status === "open")).toHaveLength(3);
    // Closed all together, long after their deadlines: each is charged at most its maximum, the three together no
    // more than the cap ($0.30 of maxima, $0.25 charged).
    t.advance(1000);
    const closed = await Promise.all(admitted.map((a) => t.ledger.complete(a.id, { exitCode: 0 })));
    expect(closed.map((c) => c.status)).toEqual(["done", "done", "done"]);
    expect((await t.ledger.spend()).spentUsd).toBeCloseTo(0.25, 12);
    await t.ledger.close();
  });

  it("a meter's tick does not wait for another process's lock: it fails at once, and waits when asked to", async () => {
    const t = ledgerAt();
    const other = new DatabaseSync(t.file);
    other.exec("BEGIN IMMEDIATE");
    try {
      await expect(t.ledger.tick({ wait: false })).rejects.toThrow(/locked|busy/i);
      // The ledger is usable afterwards (no transaction was left open on its connection).
      other.exec("COMMIT");
      await t.ledger.tick({ wait: false });
      expect((await t.ledger.admit(req())).status).toBe("open");
    } finally {
      if (other.isTransaction) other.exec("ROLLBACK");
      other.close();
      await t.ledger.close();
    }
  });
});

describe("two launcher processes on one ledger", () => {
  it("never exceed the cap together: 20 launches at once, each charged its full maximum", async () => {
    const file = freshFile();
    Ledger.open(file, meter()).close();
    // Both start at the same instant, after their start-up.
    const at = String(Date.now() + 8_000);
    const runs = [worker([file, "launch", "10", "a", at]), worker([file, "launch", "10", "b", at])];
    const results = await Promise.all(runs.map((r) => r.done));
    for (const r of results) expect(r).toMatchObject({ code: 0 });
    const ledger = Ledger.open(file, meter());
    const all = await ledger.runs();
    const charged = all.reduce((s, r) => s + (r.chargeUsd ?? 0), 0);
    expect(charged).toBeLessThanOrEqual(1.5 + 1e-9);
    expect(charged).toBeCloseTo(1.5, 9);
    // Both processes launched; the rest were refused with the arithmetic.
    expect(new Set(all.map((r) => r.id.split("-")[0]))).toEqual(new Set(["a", "b"]));
    expect((await ledger.alerts({ kind: "launch-refused" })).length).toBe(20 - all.length);
    await ledger.close();
  }, 60_000);

  it("reconciles a run a killed launcher left open: its container removed, charged at most to its deadline", async () => {
    const file = freshFile();
    Ledger.open(file, meter()).close();
    const w = worker([file, "hold"]);
    const ledger = Ledger.open(file, meter());
    const deadline = Date.now() + 30_000;
    while ((await ledger.runs()).length === 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    expect((await ledger.runs()).map((r) => r.status)).toEqual(["open"]);
    // A live launcher's run is left alone.
    expect(await ledger.reconcile(async () => undefined)).toEqual([]);
    w.kill();
    await w.done;
    const removed: string[] = [];
    const closed = await ledger.reconcile(async (c) => {
      removed.push(c);
    });
    expect(removed).toEqual(["held-container"]);
    expect(closed.map((r) => [r.id, r.status])).toEqual([["held", "reconciled"]]);
    expect(closed[0]?.chargeUsd).toBeLessThanOrEqual(closed[0]?.maxChargeUsd ?? 0);
    expect((await ledger.alerts({ kind: "reconciled" })).length).toBe(1);
    // Twice reconciles nothing more.
    expect(await ledger.reconcile(async () => undefined)).toEqual([]);
    await ledger.close();
  }, 60_000);
});

describe("alert sinks", () => {
  it("posts each alert to the webhook, retrying a failed try, without blocking the caller", async () => {
    const bodies: string[] = [];
    let calls = 0;
    const server = createServer((rq, rs) => {
      let b = "";
      rq.on("data", (d: Buffer) => {
        b += d.toString();
      });
      rq.on("end", () => {
        calls++;
        if (calls === 1) {
          rs.writeHead(503).end();
          return;
        }
        bodies.push(b);
        rs.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    const outbox = new AlertOutbox();
    const lines: string[] = [];
    const file = join(mkdtempSync(join(tmpdir(), "alerts-")), "alerts.jsonl");
    const sinks = alertSinks({ stderr: true, webhook: url, file }, outbox, (l) => lines.push(l));
    const t = ledgerAt({ capUsd: 0.05 });
    const ledger = Ledger.open(t.file, meter({ capUsd: 0.05 }), { sinks, clock: () => T0 });
    await expect(ledger.admit(req())).rejects.toThrow(BudgetRefused);
    await outbox.flush();
    server.close();
    expect(calls).toBe(2);
    expect(JSON.parse(bodies[0] ?? "{}")).toMatchObject({ kind: "launch-refused", project: "meter-test" });
    expect(lines[0]).toMatch(/^alert launch-refused: launch of template "default" refused: /);
    const { readFileSync } = await import("node:fs");
    expect(JSON.parse(readFileSync(file, "utf8").trim())).toMatchObject({ kind: "launch-refused" });
  });

  it("says once that a webhook could not be reached after three tries", async () => {
    const lines: string[] = [];
    await postAlert(
      "http://127.0.0.1:9/none",
      {
        id: 7,
        at: T0,
        month: "2026-12",
        kind: "budget-80",
        project: "p",
        agent: null,
        runId: null,
        message: "m",
      },
      (l) => lines.push(l),
      3,
      10,
    );
    expect(lines.length).toBe(1);
    expect(lines[0]).toMatch(/^alert budget-80 \(id 7\) could not be sent to the webhook after 3 tries: /);
  });
});
