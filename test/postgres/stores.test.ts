// The ledger's two stores, on real servers: SQLite (the embedded default, a file) and PostgreSQL (the shared store; a
// local server of this machine started here, as users start it: runtime/ledger/local-postgres.ts). One suite runs
// against both and the same history gives the same answers; then what only a shared store must do: launcher
// processes on separate connections hold one cap together, and a server that stops answering fails closed.
import { spawn } from "node:child_process";
import { appendFileSync, chmodSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openProjectLedger, recordUp, runLedgerCommand, runLedgerVerb, upRefusal } from "../../cli/ledger";
import { ledgerFile } from "../../cli/ledger-file";
import { resolveProject } from "../../components/model";
import { AgentKeys, identifyAgent } from "../../runtime/agent-keys";
import { deployedShape } from "../../runtime/deployed-shape";
import {
  type AdmitRequest,
  BudgetRefused,
  Ledger,
  LedgerStatementFailed,
  type LedgerStore,
  LedgerUnavailable,
  type Meter,
  SqliteLedgerStore,
} from "../../runtime/ledger";
import {
  type LocalPostgres,
  localPostgresRunning,
  startLocalPostgres,
  stopLocalPostgres,
} from "../../runtime/ledger/local-postgres";
import { PG_MIGRATIONS, PostgresLedgerStore } from "../../runtime/ledger/postgres";
import { LedgerGone } from "../../runtime/ledger/witness";
import { requireDocker } from "../helpers/docker";
import { frontStack, oneTemplate } from "../helpers/front-stack";

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
      // The workers' project and cap ($1.50, runs of at most $0.10 each).
      const ledger = await Ledger.connect(url, meter({ project: "meter-test", agents: {} }));
      const all = await ledger.runs();
      const charged = all.reduce((s, r) => s + (r.chargeUsd ?? 0), 0);
      expect(charged).toBeLessThanOrEqual(1.5 + 1e-9);
      expect(charged).toBeCloseTo(1.5, 9);
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
      // A statement the server refuses is not a server that does not answer: the write is rolled back, the pool kept.
      const dup = await store
        .write((q) => q.run("INSERT INTO meta (key, value) VALUES ('ledger_id', 'again')"))
        .catch((e: unknown) => e);
      expect(dup).toBeInstanceOf(LedgerStatementFailed);
      expect(dup).not.toBeInstanceOf(LedgerUnavailable);
      expect(String((dup as Error).message)).toMatch(/refused a statement: duplicate key value/);
      expect((await store.get("SELECT COUNT(*) AS n FROM meta"))?.n).toBe(1);
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

describe("a project metered on a shared ledger (sandbox:ledger: { url })", () => {
  it(
    "is the place every verb uses: runs, audit, spend, agent keys, the deployed shape and the stop at the cap",
    async () => {
      const url = await freshDatabase();
      const jobRoot = mkdtempSync(join(scratch, "jobs-"));
      const project = resolveProject({
        name: "shared",
        budget: { monthlyCapUsd: 0.3, enforce: "metered", usdPerVcpuHour: 3.6, usdPerGbHour: 0 },
        jobRoot,
        agents: { ci: {} },
        templates: { default: { image: "runner:1", timeoutSeconds: 60, resources: { vcpu: 1 } } },
      });
      const place = ledgerFile({ jobRoot, url }, {});
      expect(place).toBe(url);
      // The front's own opening: witnessed by the ledger's identity, beside the job root.
      const ledger = await openProjectLedger(place, project);
      const key = await new AgentKeys(ledger.store, "shared").mint("ci");
      expect(await identifyAgent(ledger, "shared", undefined, { SANDBOX_AGENT_KEY: key })).toBe("ci");
      const run = await ledger.admit({ ...req({ agent: "ci" }), maxSeconds: 300 });
      await ledger.complete(run.id, { exitCode: 0 }, "done", run.admittedAt + 300_000);
      await ledger.close();
      // `up` recorded what it deployed there; at the cap, an `up` that raises nothing is refused, by the same ledger.
      const notes: string[] = [];
      await recordUp(place, project, (t) => notes.push(t));
      const again = await Ledger.at(place, meter({ project: "shared" }));
      expect((await deployedShape(again, "shared"))?.capUsd).toBe(0.3);
      await again.close();
      expect(await upRefusal(place, project, (t) => notes.push(t))).toMatch(
        /has reached its monthly cap: \$0\.3 spent/,
      );
      // The report verbs read it.
      const out: string[] = [];
      const io = { out: (t: string) => out.push(t), err: (t: string) => out.push(t) };
      expect(await runLedgerVerb("audit", "dev", project, [], place, io, true)).toBe(0);
      const audit = JSON.parse(out.join("")) as { runs: { agent: string; chargeUsd: number }[] };
      expect(audit.runs.map((r) => [r.agent, r.chargeUsd])).toEqual([["ci", 0.3]]);
      // The witness names the URL; a database made anew at the same URL is another ledger, refused.
      const pg = await import("pg");
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      await admin.query("DROP TABLE runs, alerts, meta, agent_keys, ledger_schema");
      await admin.end();
      await expect(openProjectLedger(place, project)).rejects.toThrow(LedgerGone);
      await expect(openProjectLedger(place, project)).rejects.toThrow(
        /was replaced: .* holds another ledger, made anew/,
      );
    },
    TIMEOUT,
  );
});

describe("sandbox ledger copy: a project's SQLite history moved into the shared ledger", () => {
  /** What a ledger answers about project "stores" (ids of alerts aside: the target numbers them anew). */
  async function answers(store: LedgerStore) {
    const ledger = new Ledger(store, meter({ capUsd: 0.5 }), { clock: () => T0 + 3_600_000 });
    return {
      spend: await ledger.spend(),
      runs: await ledger.runs(),
      alerts: (await ledger.alerts()).map(({ id: _id, ...rest }) => rest),
      ci: await new AgentKeys(store, "stores").counts(),
      deployed: await deployedShape(ledger, "stores"),
    };
  }

  it(
    "gives the same answers from both stores, moves the witness, and a second copy is refused with nothing written",
    async () => {
      const dir = mkdtempSync(join(scratch, "copy-"));
      const file = join(dir, "ledger.sqlite");
      await history(async () => SqliteLedgerStore.open(file));
      const source = SqliteLedgerStore.open(file);
      await new AgentKeys(source, "stores").mint("bob");
      await source.run("INSERT INTO meta (key, value) VALUES ('deployed:stores', ?)", [
        JSON.stringify({ capUsd: 0.5 }),
      ]);
      // Another project's rows in the same file stay behind.
      await source.run(
        "INSERT INTO alerts (at, month, kind, project, message) VALUES (1, '2026-12', 'budget-80', 'other', 'x')",
      );
      const want = await answers(source);
      expect(want.runs.length).toBeGreaterThan(2);
      expect(want.alerts.length).toBeGreaterThan(2);
      await source.close();

      const url = await freshDatabase();
      const jobRoot = mkdtempSync(join(scratch, "jobs-"));
      const project = resolveProject({
        name: "stores",
        budget: { monthlyCapUsd: 0.5, enforce: "metered", usdPerVcpuHour: 3.6, usdPerGbHour: 0 },
        jobRoot,
        agents: { alice: { monthlyCapUsd: 0.3, templates: ["default"] }, bob: {} },
        templates: {
          default: { image: "runner:1", timeoutSeconds: 60, resources: { vcpu: 1 } },
          big: { image: "runner:1", timeoutSeconds: 60, resources: { vcpu: 2 } },
        },
      });
      // The file was the project's ledger until now.
      await (await openProjectLedger(file, project)).close();
      const out: string[] = [];
      const err: string[] = [];
      const io = { out: (t: string) => out.push(t), err: (t: string) => err.push(t) };
      const verb = (args: string[], configured = file) =>
        runLedgerCommand("copy", args, {
          io,
          json: true,
          yes: false,
          load: () => project,
          file: () => configured,
          localFile: () => file,
          root: scratch,
        });
      expect(await verb(["dev", "--to", url])).toBe(0);
      const done = JSON.parse(out.join("")) as {
        copied: { runs: number; alerts: number; agentKeys: number };
      };
      expect(done.copied).toEqual({
        runs: want.runs.length,
        alerts: want.alerts.length,
        agentKeys: 1,
        deployed: 1,
      });
      const target = await PostgresLedgerStore.connect(url);
      expect(await answers(target)).toEqual(want);
      await target.close();

      // The shared ledger is the project's now: opening it says nothing; the old file is a second ledger, noticed.
      const warnings: string[] = [];
      await (await openProjectLedger(url, project, {}, (t) => warnings.push(t))).close();
      expect(warnings).toEqual([]);
      await (await openProjectLedger(file, project, {}, (t) => warnings.push(t))).close();
      expect(warnings.join("")).toMatch(/also metered by the ledger at postgresql:/);

      // Again, from the configured URL: refused, the target unchanged.
      out.length = 0;
      expect(await verb(["dev"], url)).toBe(1);
      expect(out.join("")).toMatch(/already holds history of project stores .*nothing was copied/);
      const after = await PostgresLedgerStore.connect(url);
      expect((await after.get("SELECT COUNT(*) AS n FROM runs"))?.n).toBe(want.runs.length);
      await after.close();
    },
    TIMEOUT,
  );

  it("is refused while a run is open in the file, and for a URL that holds a password (never shown)", async () => {
    const file = join(mkdtempSync(join(scratch, "copy-")), "ledger.sqlite");
    const ledger = new Ledger(SqliteLedgerStore.open(file), meter(), { clock: () => T0 });
    await ledger.admit(req());
    await ledger.close();
    const project = resolveProject({
      name: "stores",
      budget: { monthlyCapUsd: 1, enforce: "metered" },
      jobRoot: mkdtempSync(join(scratch, "jobs-")),
      templates: { default: { image: "runner:1", timeoutSeconds: 60 } },
    });
    const out: string[] = [];
    const io = { out: (t: string) => out.push(t), err: (t: string) => out.push(t) };
    const c = {
      io,
      json: false,
      yes: false,
      load: () => project,
      file: () => file,
      localFile: () => file,
      root: scratch,
    };
    const url = await freshDatabase();
    expect(await runLedgerCommand("copy", ["dev", `--to=${url}`], c)).toBe(1);
    expect(out.join("")).toMatch(/1 run\(s\) of project stores are still open in .*ledger\.sqlite/);
    const target = await PostgresLedgerStore.connect(url);
    expect((await target.get("SELECT COUNT(*) AS n FROM runs"))?.n).toBe(0);
    await target.close();
    out.length = 0;
    const secret = "postgresql://sandbox:hunter2@db.example/ledger";
    expect(await runLedgerCommand("copy", ["dev", "--to", secret], c)).toBe(2);
    expect(out.join("")).toMatch(/must not hold the password: give it in PGPASSWORD/);
    expect(out.join("")).not.toContain("hunter2");
    out.length = 0;
    // No URL given and none configured: the verb says where one goes.
    expect(await runLedgerCommand("copy", ["dev"], c)).toBe(2);
    expect(out.join("")).toMatch(/--to <url> names the shared ledger/);
    expect(await runLedgerCommand("copy", ["dev", "--into", url], c)).toBe(2);
    expect(out.join("")).toMatch(/unexpected argument "--into"/);
  });
});

describe("sandbox ledger local: the checkout's own server, started when asked and stopped by the off switch", () => {
  it(
    "starts in .sandbox/postgres, takes the project's history, meters it once configured, and stops at off",
    async () => {
      await requireDocker();
      const stack = frontStack("pgl", "dev", oneTemplate({ budget: ["    enforce: metered"] }));
      // Run as root, the server runs as the postgres user, which must reach the checkout's folder.
      chmodSync(stack.root, 0o755);
      const dir = join(stack.root, ".sandbox", "postgres");
      try {
        // The project's SQLite ledger first (a report opens it), then the server, asked for.
        expect((await stack.front("spend", "dev")).code).toBe(0);
        const started = await stack.front("ledger", "local", "dev", "--json");
        expect(started.err).toBe("");
        expect(started.code).toBe(0);
        const url = (JSON.parse(started.out) as { ledger: string }).ledger;
        expect(url).toBe(`postgresql:///ledger?host=${encodeURIComponent(dir)}&user=sandbox`);
        expect(localPostgresRunning(dir)).toBe(true);
        expect(statSync(dir).mode & 0o777).toBe(0o700);
        // Asked again, it is found running.
        expect((await stack.front("ledger", "local", "dev")).out).toMatch(/sandbox ledger copy dev --to/);
        const copied = await stack.front("ledger", "copy", "dev", "--to", url);
        expect(copied.err).toBe("");
        expect(copied.out).toMatch(/copied 0 runs, 0 alerts, 0 agent keys and no deployed shape/);
        appendFileSync(
          join(stack.root, "stacks", "Pulumi.dev.yaml"),
          `  sandbox:ledger:\n    url: '${url}'\n`,
        );
        const spend = await stack.front("spend", "dev", "--json");
        expect(spend.code).toBe(0);
        expect((JSON.parse(spend.out) as { ledger: string }).ledger).toBe(url);
        // The off switch stops it: nothing of the project runs, so nothing meters.
        const off = await stack.front("off", "dev", "--yes");
        expect(off.code).toBe(0);
        expect(off.err).toMatch(/the local PostgreSQL that keeps the project's ledger .* is stopped/);
        expect(localPostgresRunning(dir)).toBe(false);
        const down = await stack.front("spend", "dev");
        expect(down.code).toBe(1);
        expect(down.err).toMatch(/the ledger at PostgreSQL postgresql:\/\/\/ledger\?host=.* did not answer/);
        // Started again, it keeps what it held.
        expect((await stack.front("ledger", "local", "dev")).code).toBe(0);
        expect((await stack.front("spend", "dev")).code).toBe(0);
        expect((await stack.front("ledger", "local", "dev", "--stop")).out).toMatch(
          /is stopped \(its data is kept/,
        );
        expect((await stack.front("ledger", "local", "dev", "--bogus")).code).toBe(2);
      } finally {
        stopLocalPostgres(dir);
        await stack.cleanup(undefined);
      }
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
