// The ledger's two stores, on real servers: SQLite (the embedded default, a file) and PostgreSQL (the shared store; a
// local server of this machine started here, as users start it: runtime/ledger/local-postgres.ts). One suite runs
// against both and the same history gives the same answers; then what only a shared store must do: launcher
// processes on separate connections hold one cap together, and a server that stops answering fails closed.
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AdmitRequest,
  BudgetRefused,
  Ledger,
  type LedgerStore,
  LedgerUnavailable,
  type Meter,
  SqliteLedgerStore,
} from "../../runtime/ledger";
import { type LocalPostgres, startLocalPostgres } from "../../runtime/ledger/local-postgres";
import { PG_MIGRATIONS, PostgresLedgerStore } from "../../runtime/ledger/postgres";

const TIMEOUT = 120_000;
const T0 = Date.UTC(2026, 11, 1, 12, 0, 0);
const scratch = mkdtempSync(join(tmpdir(), "sbx-pg-"));
let server: LocalPostgres | undefined;
let databases = 0;

beforeAll(async () => {
  // Run as root, the server runs as the postgres user, which must reach its folder.
  chmodSync(scratch, 0o755);
  server = await startLocalPostgres(join(scratch, "pg"), { fast: true });
}, TIMEOUT);

afterAll(async () => {
  await server?.stop();
  rmSync(scratch, { recursive: true, force: true });
}, TIMEOUT);

/** A URL of a database of its own on the local server. */
async function freshDatabase(): Promise<string> {
  if (server === undefined) throw new Error("the local PostgreSQL did not start");
  const name = `ledger_${process.pid}_${++databases}`;
  const pg = await import("pg");
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return server.url.replace("postgresql:///postgres?", `postgresql:///${name}?`);
}

function meter(over: Partial<Meter> = {}): Meter {
  return {
    project: "stores",
    enforce: "metered",
    capUsd: 1,
    fixedUsd: 0,
    rates: { usdPerVcpuHour: 3.6, usdPerGbHour: 0 },
    concurrency: 10,
    agents: { alice: { monthlyCapUsd: 0.3, templates: ["default"] }, bob: {} },
    templates: ["default", "big"],
    enabled: true,
    ...over,
  };
}

let seq = 0;
const req = (over: Partial<AdmitRequest> = {}): AdmitRequest => ({
  id: `r${++seq}`,
  template: "default",
  specHash: "abc",
  command: ["sh", "/job/run.sh"],
  container: `c${seq}`,
  size: { vcpu: 1, memoryMb: 1024 },
  maxSeconds: 100,
  ...over,
});

const STORES: [string, () => Promise<LedgerStore>][] = [
  ["SQLite", async () => SqliteLedgerStore.open(join(mkdtempSync(join(scratch, "l-")), "ledger.sqlite"))],
  ["PostgreSQL", async () => PostgresLedgerStore.connect(await freshDatabase())],
];

/** A ledger on a fresh store with a clock the test moves. */
async function ledgerOn(open: () => Promise<LedgerStore>, over: Partial<Meter> = {}) {
  let now = T0;
  const store = await open();
  const ledger = new Ledger(store, meter(over), { clock: () => now });
  return {
    ledger,
    store,
    advance: (s: number) => {
      now += s * 1000;
    },
  };
}

/** One history: admissions, refusals, charges, alerts, an agent at its cap; what the ledger answers after it. */
async function history(open: () => Promise<LedgerStore>): Promise<unknown> {
  seq = 0;
  const t = await ledgerOn(open, { capUsd: 0.5 });
  const refusals: string[] = [];
  const tryAdmit = async (r: AdmitRequest) => {
    try {
      return await t.ledger.admit(r);
    } catch (e) {
      if (!(e instanceof BudgetRefused)) throw e;
      refusals.push(e.message);
      return undefined;
    }
  };
  const a = await tryAdmit(req({ agent: "alice" }));
  const b = await tryAdmit(req({ agent: "bob", template: "big", size: { vcpu: 2, memoryMb: 512 } }));
  await tryAdmit(req({ agent: "mallory" }));
  await tryAdmit(req({ agent: "alice", template: "big" }));
  t.advance(60);
  const stop = await t.ledger.stopTime(b?.id ?? "");
  await t.ledger.complete(a?.id ?? "", { exitCode: 0, limits: ["timeout"] });
  t.advance(30);
  await t.ledger.complete(b?.id ?? "", { exitCode: 1, killedByLauncher: true });
  await tryAdmit(req({ agent: "alice" }));
  await tryAdmit(req({ agent: "alice" }));
  t.advance(200);
  await t.ledger.tick();
  for (const r of await t.ledger.openRuns()) await t.ledger.complete(r.run.id, { exitCode: 0 });
  await t.ledger.alert({ kind: "escape-check", message: "escape check metadata: blocked" }, false);
  const strip = <T extends object>(rows: readonly T[]) =>
    rows.map((r) => {
      const { id: _id, ...rest } = r as T & { id?: unknown };
      return rest;
    });
  const out = {
    refusals,
    stop,
    spend: await t.ledger.spend(),
    runs: (await t.ledger.runs()).map((r) => ({ ...r, id: undefined })),
    alice: (await t.ledger.runs({ agent: "alice" })).length,
    alerts: strip(await t.ledger.alerts()),
    limitHits: (await t.ledger.alerts({ kind: "limit-hit" })).length,
  };
  await t.ledger.close();
  return out;
}

describe.each(STORES)("the ledger on %s", (_name, open) => {
  it(
    "admits, refuses with the arithmetic, charges and reports as the meter says",
    async () => {
      const t = await ledgerOn(open, { capUsd: 0.25 });
      const run = await t.ledger.admit(req());
      expect(run).toMatchObject({ status: "open", month: "2026-12", admittedAt: T0 });
      expect(run.maxChargeUsd).toBeCloseTo(0.1, 12);
      t.advance(12.5);
      expect((await t.ledger.complete(run.id, { exitCode: 0 })).chargeUsd).toBeCloseTo(0.0125, 12);
      expect(await t.ledger.spend()).toMatchObject({ runs: 1, open: 0, blocked: false });
      // Two more runs at their full maximum: $0.2125 spent; a third's maximum would take it past the cap.
      for (let i = 0; i < 2; i++) {
        const r = await t.ledger.admit(req());
        t.advance(100);
        await t.ledger.complete(r.id, { exitCode: 0 });
      }
      const refused = await t.ledger.admit(req()).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(BudgetRefused);
      expect(String((refused as Error).message)).toMatch(
        /month-to-date spend \$0\.2125 \+ this run's maximum .* = \$0\.1 = \$0\.3125 > the cap for runs \$0\.25/,
      );
      expect((await t.ledger.alerts({ kind: "launch-refused" })).length).toBe(1);
      expect(await t.ledger.id()).toMatch(/^[0-9a-f]{32}$/);
      await t.ledger.close();
    },
    TIMEOUT,
  );

  it(
    "takes one process's concurrent admissions one at a time: 20 at once hold 3 slots",
    async () => {
      const t = await ledgerOn(open, { concurrency: 3 });
      const settled = await Promise.allSettled(Array.from({ length: 20 }, () => t.ledger.admit(req())));
      expect(settled.filter((s) => s.status === "fulfilled")).toHaveLength(3);
      for (const s of settled) if (s.status === "rejected") expect(s.reason).toBeInstanceOf(BudgetRefused);
      await t.ledger.close();
    },
    TIMEOUT,
  );

  it(
    "a meter's tick fails at once while another connection holds the write lock, and goes through after",
    async () => {
      const t = await ledgerOn(open);
      const release = await holdWriteLock(t.store);
      try {
        await expect(t.ledger.tick({ wait: false })).rejects.toThrow(/locked|busy/i);
      } finally {
        await release();
      }
      await t.ledger.tick({ wait: false });
      await t.ledger.close();
    },
    TIMEOUT,
  );
});

/** Takes the store's write lock from another connection; returns how to let it go. */
async function holdWriteLock(store: LedgerStore): Promise<() => Promise<void>> {
  if (store instanceof SqliteLedgerStore) {
    const other = new DatabaseSync(store.place);
    other.exec("BEGIN IMMEDIATE");
    return async () => {
      other.exec("ROLLBACK");
      other.close();
    };
  }
  const pg = await import("pg");
  const url = store.place.replace(/^PostgreSQL /, "");
  const other = new pg.Client({ connectionString: url });
  await other.connect();
  await other.query("BEGIN");
  await other.query("SELECT pg_advisory_xact_lock(7310442001)");
  return async () => {
    await other.query("ROLLBACK");
    await other.end();
  };
}

describe("the two stores", () => {
  it(
    "give the same answers for the same history",
    async () => {
      const [[, sqliteStore], [, postgresStore]] = STORES as [
        [string, () => Promise<LedgerStore>],
        [string, () => Promise<LedgerStore>],
      ];
      const [sqlite, postgres] = [await history(sqliteStore), await history(postgresStore)];
      expect((sqlite as { refusals: string[] }).refusals.length).toBeGreaterThan(0);
      expect(postgres).toEqual(sqlite);
    },
    TIMEOUT,
  );
});

describe("a shared ledger on PostgreSQL", () => {
  it(
    "two launcher processes on separate connections never cross one cap together: 20 launches, each at its maximum",
    async () => {
      const url = await freshDatabase();
      // Migrated once before they start, as a first launcher would.
      await (await Ledger.connect(url, meter())).close();
      const at = String(Date.now() + 8_000);
      const results = await Promise.all([
        worker([url, "launch", "10", "a", at]),
        worker([url, "launch", "10", "b", at]),
      ]);
      for (const r of results) expect(r, r.out).toMatchObject({ code: 0 });
      // The workers' project and cap ($1, runs of at most $0.10 each).
      const ledger = await Ledger.connect(url, meter({ project: "meter-test", agents: {} }));
      const all = await ledger.runs();
      const charged = all.reduce((s, r) => s + (r.chargeUsd ?? 0), 0);
      expect(charged).toBeLessThanOrEqual(1 + 1e-9);
      expect(charged).toBeCloseTo(1, 9);
      expect(new Set(all.map((r) => r.id.split("-")[0]))).toEqual(new Set(["a", "b"]));
      expect((await ledger.alerts({ kind: "launch-refused" })).length).toBe(20 - all.length);
      await ledger.close();
    },
    TIMEOUT,
  );

  it(
    "holds the project's concurrency across processes: two bursts of 20 admissions at once leave exactly 5 runs open",
    async () => {
      const url = await freshDatabase();
      await (await Ledger.connect(url, meter())).close();
      const at = String(Date.now() + 8_000);
      const results = await Promise.all([
        worker([url, "burst", "20", "a", at]),
        worker([url, "burst", "20", "b", at]),
      ]);
      for (const r of results) expect(r, r.out).toMatchObject({ code: 0 });
      const ledger = await Ledger.connect(url, meter({ project: "meter-test", agents: {}, concurrency: 5 }));
      expect((await ledger.openRuns()).length).toBe(5);
      expect((await ledger.runs()).length).toBe(5);
      await ledger.close();
    },
    TIMEOUT,
  );

  it(
    "fails closed when its server stops answering, naming where it is, and works again once it answers",
    async () => {
      if (server === undefined) throw new Error("the local PostgreSQL did not start");
      const ledger = await Ledger.connect(await freshDatabase(), meter());
      await ledger.admit(req());
      await server.stop();
      try {
        const refused = await ledger.admit(req()).catch((e: unknown) => e);
        expect(refused).toBeInstanceOf(LedgerUnavailable);
        expect(String((refused as Error).message)).toMatch(
          /^the ledger at PostgreSQL postgresql:\/\/\/ledger_\d+_\d+\?host=.* did not answer \(.*\); nothing is launched or recorded until it does$/,
        );
      } finally {
        server = await startLocalPostgres(server.dir, { fast: true });
      }
      expect((await ledger.admit(req())).status).toBe("open");
      expect((await ledger.runs()).length).toBe(2);
      await ledger.close();
    },
    TIMEOUT,
  );

  it(
    "migrates a new database on connect, and refuses one of a newer schema by name",
    async () => {
      const url = await freshDatabase();
      const store = await PostgresLedgerStore.connect(url);
      expect(await store.get("SELECT version FROM ledger_schema")).toEqual({ version: PG_MIGRATIONS.length });
      await store.run("UPDATE ledger_schema SET version = ?", [PG_MIGRATIONS.length + 1]);
      await store.close();
      await expect(PostgresLedgerStore.connect(url)).rejects.toThrow(
        new RegExp(
          `has schema version ${PG_MIGRATIONS.length + 1}, newer than this toolkit's ${PG_MIGRATIONS.length}`,
        ),
      );
    },
    TIMEOUT,
  );
});

/** A launcher process of its own (test/ledger/worker.ts) on the ledger at `url`. */
function worker(args: string[]): Promise<{ code: number | null; out: string }> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", join(__dirname, "..", "ledger", "worker.ts"), ...args],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let out = "";
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    out += d.toString();
  });
  return new Promise((resolve) => child.on("exit", (code) => resolve({ code, out })));
}
