/**
 * The ledger: every run a launcher makes, charged and recorded in one SQLite file per project (Node's built-in
 * `node:sqlite`, WAL mode, schema versioned), and the meter that holds the budget's cap with it: admission in one
 * write transaction under what the cap leaves (an agent's cap and concurrency the same way), running work stopped
 * when the spend would reach the cap ({@link Ledger.stopTime}), charges never past it, and alerts at 80, 90 and
 * 100 % once per month and cap, each a row sent to the configured sinks (runtime/ledger/alerts.ts). Pricing is the model's
 * one formula (`taskUsd`), the same the budget proof uses; docs/ledger.md says the rest.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { type AlertKind, taskUsd, usdFine } from "../../components/model";
import { thisProcess } from "../orphan-watch";
import {
  admissionRefusal,
  type MonthView,
  reachTime,
  runsCap,
  signalAlerts,
  spendReport,
  spentIn,
  thresholdAlerts,
  usedBy,
} from "./meter";
import { type OrphanEngine, reconcileDeadRuns } from "./reconcile";
import {
  type AdmitRequest,
  type AlertInput,
  type AlertRecord,
  type AlertSink,
  alertFromRow,
  type BudgetRefused,
  type Meter,
  monthOf,
  nextMonthStart,
  ownerFromRow,
  type Row,
  type RunOutcome,
  type RunRecord,
  runFromRow,
  type SpendReport,
} from "./records";
import { migrateLedger } from "./schema";

export * from "./records";
export { LEDGER_SCHEMA_VERSION } from "./schema";

/** How long a call waits for another process's lock on the ledger before it fails (a blocking wait). */
const BUSY_TIMEOUT_MS = 30_000;

/** Options of {@link Ledger.open}. */
export interface LedgerOptions {
  /** The clock, in ms since the epoch. Defaults to `Date.now` (tests inject months). */
  readonly clock?: () => number;
  /** Where alerts go once recorded, besides the ledger. Defaults to none. */
  readonly sinks?: readonly AlertSink[];
}

/** One project's ledger file. Several processes may open it at once; every write is one transaction. */
export class Ledger {
  private readonly clock: () => number;
  private readonly sinks: readonly AlertSink[];

  private constructor(
    private readonly db: DatabaseSync,
    readonly file: string,
    private meter: Meter,
    options: LedgerOptions,
  ) {
    this.clock = options.clock ?? Date.now;
    this.sinks = options.sinks ?? [];
  }

  /** Opens (creating and migrating when needed) the ledger file of `meter.project`. */
  static open(file: string, meter: Meter, options: LedgerOptions = {}): Ledger {
    mkdirSync(dirname(file), { recursive: true });
    const db = new DatabaseSync(file, { timeout: BUSY_TIMEOUT_MS });
    db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;");
    const ledger = new Ledger(db, file, meter, options);
    ledger.write(() => migrateLedger(db, file));
    return ledger;
  }

  /** The ledger's identity, made with it: a file replaced or created anew has another. */
  id(): string {
    return String((this.db.prepare("SELECT value FROM meta WHERE key = 'ledger_id'").get() as Row).value);
  }

  /** The ledger's clock (the launcher stops runs by it). */
  now(): number {
    return this.clock();
  }

  /** Takes a changed config (a raised cap, new agents) from now on. */
  reconfigure(meter: Meter): void {
    this.meter = meter;
  }

  close(): void {
    if (this.db.isOpen) this.db.close();
  }

  /** Runs `fn` in one write transaction (BEGIN IMMEDIATE: writers on the same file take turns). */
  private write<T>(fn: () => T): T {
    this.db.exec("BEGIN IMMEDIATE");
    try {
      const out = fn();
      this.db.exec("COMMIT");
      return out;
    } catch (e) {
      if (this.db.isTransaction) this.db.exec("ROLLBACK");
      throw e;
    }
  }

  /** The runs of a month (default: this one). */
  private monthRuns(month: string): RunRecord[] {
    return (
      this.db
        .prepare("SELECT * FROM runs WHERE project = ? AND month = ? ORDER BY admitted_at")
        .all(this.meter.project, month) as Row[]
    ).map(runFromRow);
  }

  /** The month's closed charges (summed by the database) and its open runs, without `except`. */
  private view(month: string, except?: string): MonthView {
    const sums = this.db
      .prepare(
        "SELECT agent, SUM(charge_usd) AS usd FROM runs WHERE project = ? AND month = ? AND status != 'open' GROUP BY agent",
      )
      .all(this.meter.project, month) as Row[];
    const byAgent = new Map<string | null, number>();
    let closed = 0;
    for (const r of sums) {
      const v = Number(r.usd ?? 0);
      byAgent.set(r.agent === null ? null : String(r.agent), v);
      closed += v;
    }
    const open = (
      this.db
        .prepare("SELECT * FROM runs WHERE project = ? AND month = ? AND status = 'open' AND id != ?")
        .all(this.meter.project, month, except ?? "") as Row[]
    ).map(runFromRow);
    return { closedUsd: closed, closedByAgent: byAgent, open };
  }

  /**
   * Admits a launch or refuses it with the arithmetic: the project is enabled, its agent (when one is named) is
   * known and may use the template, the project's and the agent's concurrency and caps hold with
   * this run's maximum charge. Writes the run's row (open) in the same transaction.
   */
  admit(req: AdmitRequest): RunRecord {
    let refused: BudgetRefused | undefined;
    const admitted = this.write(() => {
      const now = this.clock();
      const month = monthOf(now);
      const m = this.meter;
      const agent = req.agent ?? null;
      // Open runs of any month hold a slot (one admitted before midnight on the last day still runs).
      const open = this.db
        .prepare("SELECT COUNT(*) AS n FROM runs WHERE project = ? AND status = 'open'")
        .get(m.project) as Row;
      refused = admissionRefusal(m, this.view(month), Number(open.n), req, now);
      // A refusal is an alert, but for a full house: every slot busy is news to no one (a launch may wait for one).
      if (refused !== undefined) {
        if (refused.reason !== "concurrency")
          this.insertAlert({ kind: "launch-refused", message: refused.message, agent, runId: req.id }, now);
        return undefined;
      }
      this.db
        .prepare(
          `INSERT INTO runs (id, project, template, spec_hash, agent, command, container, vcpu, memory_mb, max_seconds,
             max_charge_usd, month, admitted_at, status, owner_host, owner_pid, owner_start)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'open', ?, ?, ?)`,
        )
        .run(
          req.id,
          m.project,
          req.template,
          req.specHash,
          agent,
          JSON.stringify(req.command),
          req.container,
          req.size.vcpu,
          req.size.memoryMb,
          req.maxSeconds,
          taskUsd(req.size, m.rates, req.maxSeconds),
          month,
          now,
          thisProcess().host,
          thisProcess().pid,
          thisProcess().start,
        );
      return this.run(req.id);
    });
    this.deliverPending();
    if (refused !== undefined) throw refused;
    if (admitted === undefined) throw new Error(`run ${req.id} was admitted but not recorded`);
    return admitted;
  }

  /** Records the files put in a run's job folder (path → SHA-256). */
  recordFiles(id: string, files: Readonly<Record<string, string>>): void {
    this.write(() => {
      this.db.prepare("UPDATE runs SET files = ? WHERE id = ?").run(JSON.stringify(files), id);
    });
  }

  /** One run's row. */
  run(id: string): RunRecord | undefined {
    const r = this.db.prepare("SELECT * FROM runs WHERE id = ?").get(id) as Row | undefined;
    return r === undefined ? undefined : runFromRow(r);
  }

  /** When an open run must stop: the month's spend reaching the cap for runs or its agent's, or undefined. */
  stopTime(id: string): number | undefined {
    const run = this.run(id);
    if (run === undefined || run.status !== "open") return undefined;
    const now = this.clock();
    const view = this.view(run.month);
    const times = [reachTime(view, this.meter.rates, runsCap(this.meter), now)];
    const agentCap = run.agent === null ? undefined : this.meter.agents[run.agent]?.monthlyCapUsd;
    if (agentCap !== undefined) times.push(reachTime(view, this.meter.rates, agentCap, now, run.agent));
    const defined = times.filter((t): t is number => t !== undefined);
    return defined.length === 0 ? undefined : Math.min(...defined);
  }

  /**
   * Closes a run: charges it for the time it took (at most its maximum, or `outcome.usedSeconds` when given; never
   * more than what is left under the project's and its agent's caps), records how it ended, and raises the alerts it
   * calls for: escape signals (proxy refusals, limits hit, a launcher kill, a stop at the cap) and the thresholds.
   */
  complete(
    id: string,
    outcome: RunOutcome,
    status: "done" | "reconciled" = "done",
    endedAt?: number,
  ): RunRecord {
    const done = this.write(() => {
      const run = this.run(id);
      if (run === undefined) throw new Error(`no run ${id} in the ledger ${this.file}`);
      if (run.status !== "open") return run;
      const now = endedAt ?? this.clock();
      const charge = this.chargeFor(run, now, outcome.usedSeconds);
      this.db
        .prepare(
          `UPDATE runs SET status = ?, ended_at = ?, exit_code = ?, limits = ?, killed_by_launcher = ?, stopped_by = ?,
             error = ?, charge_usd = ?, egress = ?, broker = ? WHERE id = ?`,
        )
        .run(
          status,
          now,
          outcome.exitCode,
          JSON.stringify(outcome.limits ?? []),
          outcome.killedByLauncher ? 1 : 0,
          outcome.stoppedBy ?? null,
          outcome.error ?? null,
          charge,
          JSON.stringify(outcome.egress ?? []),
          JSON.stringify(outcome.broker ?? []),
          id,
        );
      const closed = this.run(id) as RunRecord;
      for (const a of signalAlerts(closed)) this.insertAlert(a, now);
      this.thresholdAlerts(now);
      return closed;
    });
    this.deliverPending();
    return done;
  }

  /** What a run is charged when it ends at `t`: its use, clipped to what the caps leave besides every other run. */
  private chargeFor(run: RunRecord, t: number, seconds?: number): number {
    const used = usedBy(run, this.meter.rates, t, seconds);
    const others = this.view(run.month, run.id);
    let limit = runsCap(this.meter) - spentIn(others, this.meter.rates, t);
    const agentCap = run.agent === null ? undefined : this.meter.agents[run.agent]?.monthlyCapUsd;
    if (agentCap !== undefined)
      limit = Math.min(limit, agentCap - spentIn(others, this.meter.rates, t, run.agent));
    return Math.max(0, Math.min(used, limit));
  }

  /** Budget alerts at 80, 90 and 100 % of the cap for runs (and agents at theirs), once per month and cap. */
  private thresholdAlerts(now: number): void {
    const month = monthOf(now);
    for (const { alert, onceKey } of thresholdAlerts(this.meter, month, this.view(month), now)) {
      this.insertAlert(alert, now, onceKey);
    }
  }

  /** Raises an alert: recorded, then sent to the sinks unless `page` is false (a self-test that held). */
  alert(a: AlertInput, page = true): void {
    this.write(() => this.insertAlert(a, this.clock()));
    if (page) this.deliverPending();
    else this.pending = [];
  }

  private pending: AlertRecord[] = [];

  private insertAlert(a: AlertInput, at: number, onceKey?: string): void {
    const r = this.db
      .prepare(
        "INSERT OR IGNORE INTO alerts (at, month, kind, project, agent, run_id, message, once_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      )
      .run(
        at,
        monthOf(at),
        a.kind,
        this.meter.project,
        a.agent ?? null,
        a.runId ?? null,
        a.message,
        onceKey ?? null,
      );
    if (Number(r.changes) === 1) {
      const row = this.db.prepare("SELECT * FROM alerts WHERE id = ?").get(Number(r.lastInsertRowid)) as Row;
      this.pending.push(alertFromRow(row));
    }
  }

  /** Sends the alerts recorded by the last transaction to the sinks (after it committed). */
  private deliverPending(): void {
    const out = this.pending;
    this.pending = [];
    for (const a of out) for (const sink of this.sinks) sink(a);
  }

  /**
   * Runs `fn` without waiting for another process's lock (a locked ledger throws at once): `node:sqlite` waits by
   * blocking the event loop, which would stop a running launcher's deadline and meter timers.
   */
  withoutWaiting<T>(fn: () => T): T {
    this.db.exec("PRAGMA busy_timeout = 0");
    try {
      return fn();
    } finally {
      this.db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  }

  /** Checks the thresholds now (a launcher calls it while runs are open, so alerts fire as spend accrues). */
  tick(): void {
    this.write(() => this.thresholdAlerts(this.clock()));
    this.deliverPending();
  }

  /** Month to date (or `month`): spend, what is left, by template and agent, and the forecast. */
  spend(month = monthOf(this.clock())): SpendReport {
    return spendReport(this.meter, month, this.monthRuns(month), this.clock());
  }

  /** The refusal `up` gets while the month's spend is at the cap, else undefined. */
  upRefusal(): string | undefined {
    const s = this.spend();
    if (!s.blocked) return undefined;
    return `project "${s.project}" has reached its monthly cap: ${usdFine(s.spentUsd)} spent of ${usdFine(s.runsCapUsd)} for runs in ${s.month}; \`up\` is refused until budget.monthlyCapUsd is raised or the month turns (${new Date(nextMonthStart(s.month)).toISOString()})`;
  }

  /** The audit log: runs, newest first, since a time and of an agent when given. */
  runs(filter: { since?: number; agent?: string; limit?: number } = {}): RunRecord[] {
    const rows = this.db
      .prepare(
        `SELECT * FROM runs WHERE project = ? AND admitted_at >= ? AND (? IS NULL OR agent = ?)
         ORDER BY admitted_at DESC, id LIMIT ?`,
      )
      .all(
        this.meter.project,
        filter.since ?? 0,
        filter.agent ?? null,
        filter.agent ?? null,
        filter.limit ?? 1_000_000,
      ) as Row[];
    return rows.map(runFromRow);
  }

  /** The alerts, newest first, since a time when given. */
  alerts(filter: { since?: number; kind?: AlertKind } = {}): AlertRecord[] {
    const rows = this.db
      .prepare(
        "SELECT * FROM alerts WHERE project = ? AND at >= ? AND (? IS NULL OR kind = ?) ORDER BY at DESC, id DESC",
      )
      .all(this.meter.project, filter.since ?? 0, filter.kind ?? null, filter.kind ?? null) as Row[];
    return rows.map(alertFromRow);
  }

  /** Closes the runs a dead launcher left open: see {@link reconcileDeadRuns}. Returns the runs closed. */
  reconcile(engine: OrphanEngine | ((container: string) => Promise<void>)): Promise<RunRecord[]> {
    return reconcileDeadRuns(this, engine);
  }

  /** The project's open runs, each with the host, process id and process start of the launcher that admitted it. */
  openRuns(): { run: RunRecord; host: string; pid: number; start: string | null }[] {
    return (
      this.db
        .prepare("SELECT * FROM runs WHERE project = ? AND status = 'open'")
        .all(this.meter.project) as Row[]
    ).map((row) => ({ run: runFromRow(row), ...ownerFromRow(row) }));
  }
}
