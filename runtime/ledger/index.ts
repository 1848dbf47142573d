/**
 * The ledger: every run a launcher makes, charged and recorded in its store (runtime/ledger/store.ts: one SQLite file
 * per project per machine by default, schema versioned), and the meter that holds the budget's cap with it: admission
 * in one write transaction under what the cap leaves (an agent's cap and concurrency the same way), running work stopped
 * when the spend would reach the cap ({@link Ledger.stopTime}), charges never past it, and alerts at 80, 90 and
 * 100 % once per month and cap, each a row sent to the configured sinks (runtime/ledger/alerts.ts). Pricing is the model's
 * one formula (`taskUsd`), the same the budget proof uses; docs/ledger.md says the rest.
 */
import { type AlertKind, usdFine } from "../../components/model";
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
  type RunOutcome,
  type RunRecord,
  runFromRow,
  type SpendReport,
} from "./records";
import { insertRun, updateClosedRun } from "./run-rows";
import { type LedgerQueries, type LedgerStore, SqliteLedgerStore, type WriteOptions } from "./store";

export { isLedgerProblem, LedgerStatementFailed, LedgerTooNew, LedgerUnavailable } from "./errors";
export * from "./records";
export { LEDGER_SCHEMA_VERSION } from "./schema";
export type { LedgerQueries, LedgerStore, SqlValue, WriteOptions } from "./store";
export { SqliteLedgerStore } from "./store";

/** Whether a ledger's place is a PostgreSQL server's URL (else it is a SQLite file). */
export function isLedgerUrl(place: string): boolean {
  return /^postgres(ql)?:\/\//.test(place);
}

/** Options of {@link Ledger.open}. */
export interface LedgerOptions {
  /** The clock, in ms since the epoch. Defaults to `Date.now` (tests inject months). */
  readonly clock?: () => number;
  /** Where alerts go once recorded, besides the ledger. Defaults to none. */
  readonly sinks?: readonly AlertSink[];
}

/** One project's ledger. Several processes may open its store at once; every write is one transaction. */
export class Ledger {
  private readonly clock: () => number;
  private readonly sinks: readonly AlertSink[];

  constructor(
    /** Where its rows are kept (agent keys and the deployed shape keep theirs there too). */
    readonly store: LedgerStore,
    private meter: Meter,
    options: LedgerOptions = {},
  ) {
    this.clock = options.clock ?? Date.now;
    this.sinks = options.sinks ?? [];
  }

  /** Opens (creating and migrating when needed) the SQLite ledger file of `meter.project`. */
  static open(file: string, meter: Meter, options: LedgerOptions = {}): Ledger {
    return new Ledger(SqliteLedgerStore.open(file), meter, options);
  }

  /**
   * Connects to a shared ledger in PostgreSQL (runtime/ledger/postgres.ts), migrating its schema: the same ledger for
   * every launcher of the project, on every machine.
   */
  static async connect(url: string, meter: Meter, options: LedgerOptions = {}): Promise<Ledger> {
    const { PostgresLedgerStore } = await import("./postgres.js");
    return new Ledger(await PostgresLedgerStore.connect(url), meter, options);
  }

  /** Opens the ledger at `place`: a PostgreSQL URL ({@link Ledger.connect}), else a SQLite file ({@link Ledger.open}). */
  static async at(place: string, meter: Meter, options: LedgerOptions = {}): Promise<Ledger> {
    return isLedgerUrl(place) ? Ledger.connect(place, meter, options) : Ledger.open(place, meter, options);
  }

  /** Where the ledger is kept (its file, or its server), for messages. */
  get file(): string {
    return this.store.place;
  }

  /** The ledger's identity, made with it: a file replaced or created anew has another. */
  async id(): Promise<string> {
    return String((await this.store.get("SELECT value FROM meta WHERE key = 'ledger_id'"))?.value);
  }

  /** The ledger's clock (the launcher stops runs by it). */
  now(): number {
    return this.clock();
  }

  /** Takes a changed config (a raised cap, new agents) from now on. */
  reconfigure(meter: Meter): void {
    this.meter = meter;
  }

  /** Closes the store once its pending writes have settled. */
  close(): Promise<void> {
    return this.store.close();
  }

  /** The runs of a month (default: this one). */
  private async monthRuns(month: string): Promise<RunRecord[]> {
    return (
      await this.store.all("SELECT * FROM runs WHERE project = ? AND month = ? ORDER BY admitted_at", [
        this.meter.project,
        month,
      ])
    ).map(runFromRow);
  }

  /** The month's closed charges (summed by the database) and its open runs, without `except`. */
  private async view(month: string, except?: string, q: LedgerQueries = this.store): Promise<MonthView> {
    const sums = await q.all(
      "SELECT agent, SUM(charge_usd) AS usd FROM runs WHERE project = ? AND month = ? AND status != 'open' GROUP BY agent",
      [this.meter.project, month],
    );
    const byAgent = new Map<string | null, number>();
    let closed = 0;
    for (const r of sums) {
      const v = Number(r.usd ?? 0);
      byAgent.set(r.agent === null ? null : String(r.agent), v);
      closed += v;
    }
    const open = (
      await q.all("SELECT * FROM runs WHERE project = ? AND month = ? AND status = 'open' AND id != ?", [
        this.meter.project,
        month,
        except ?? "",
      ])
    ).map(runFromRow);
    return { closedUsd: closed, closedByAgent: byAgent, open };
  }

  /**
   * Admits a launch or refuses it with the arithmetic: the project is enabled, its agent (when one is named) is
   * known and may use the template, the project's and the agent's concurrency and caps hold with
   * this run's maximum charge. Writes the run's row (open) in the same transaction.
   */
  async admit(req: AdmitRequest): Promise<RunRecord> {
    let refused: BudgetRefused | undefined;
    const admitted = await this.store.write(async (q) => {
      const now = this.clock();
      const month = monthOf(now);
      const m = this.meter;
      const agent = req.agent ?? null;
      // Open runs of any month hold a slot (one admitted before midnight on the last day still runs).
      const open = await q.get("SELECT COUNT(*) AS n FROM runs WHERE project = ? AND status = 'open'", [
        m.project,
      ]);
      // A claimed pool member's wait (runtime/pool.ts): its slot passes to this run, its time is charged now.
      const replaced = req.replaces === undefined ? undefined : await this.run(req.replaces, q);
      if (req.replaces !== undefined && replaced?.status !== "open") {
        throw new Error(`run ${req.replaces} (a pool member's wait) is not open in the ledger ${this.file}`);
      }
      const openNow = Number(open?.n ?? 0) - (replaced === undefined ? 0 : 1);
      refused = admissionRefusal(m, await this.view(month, undefined, q), openNow, req, now);
      // A refusal is an alert, but for a full house: every slot busy is news to no one (a launch may wait for one).
      if (refused !== undefined) {
        if (refused.reason !== "concurrency")
          await this.insertAlert(
            q,
            { kind: "launch-refused", message: refused.message, agent, runId: req.id },
            now,
          );
        return undefined;
      }
      if (replaced !== undefined) await this.closeRun(q, replaced, { exitCode: null }, "done", now);
      await insertRun(q, m, req, month, now);
      return this.run(req.id, q);
    });
    this.deliverPending();
    if (refused !== undefined) throw refused;
    if (admitted === undefined) throw new Error(`run ${req.id} was admitted but not recorded`);
    return admitted;
  }

  /** Records the files put in a run's job folder (path → SHA-256). */
  async recordFiles(id: string, files: Readonly<Record<string, string>>): Promise<void> {
    await this.store.write((q) =>
      q.run("UPDATE runs SET files = ? WHERE id = ?", [JSON.stringify(files), id]),
    );
  }

  /** One run's row. */
  async run(id: string, q: LedgerQueries = this.store): Promise<RunRecord | undefined> {
    const r = await q.get("SELECT * FROM runs WHERE id = ?", [id]);
    return r === undefined ? undefined : runFromRow(r);
  }

  /** When an open run must stop: the month's spend reaching the cap for runs or its agent's, or undefined. */
  async stopTime(id: string): Promise<number | undefined> {
    const run = await this.run(id);
    if (run === undefined || run.status !== "open") return undefined;
    const now = this.clock();
    const view = await this.view(run.month);
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
  async complete(
    id: string,
    outcome: RunOutcome,
    status: "done" | "reconciled" = "done",
    endedAt?: number,
  ): Promise<RunRecord> {
    const done = await this.store.write(async (q) => {
      const run = await this.run(id, q);
      if (run === undefined) throw new Error(`no run ${id} in the ledger ${this.file}`);
      return this.closeRun(q, run, outcome, status, endedAt ?? this.clock());
    });
    this.deliverPending();
    return done;
  }

  /** Closes an open run inside a write (see {@link Ledger.complete}); a closed one is returned as it is. */
  private async closeRun(
    q: LedgerQueries,
    run: RunRecord,
    outcome: RunOutcome,
    status: "done" | "reconciled",
    now: number,
  ): Promise<RunRecord> {
    if (run.status !== "open") return run;
    const id = run.id;
    const charge = await this.chargeFor(q, run, now, outcome.usedSeconds);
    await updateClosedRun(q, id, status, now, outcome, charge);
    const closed = (await this.run(id, q)) as RunRecord;
    for (const a of signalAlerts(closed)) await this.insertAlert(q, a, now);
    await this.thresholdAlerts(q, now);
    return closed;
  }

  /** What a run is charged when it ends at `t`: its use, clipped to what the caps leave besides every other run. */
  private async chargeFor(q: LedgerQueries, run: RunRecord, t: number, seconds?: number): Promise<number> {
    const used = usedBy(run, this.meter.rates, t, seconds);
    const others = await this.view(run.month, run.id, q);
    let limit = runsCap(this.meter) - spentIn(others, this.meter.rates, t);
    const agentCap = run.agent === null ? undefined : this.meter.agents[run.agent]?.monthlyCapUsd;
    if (agentCap !== undefined)
      limit = Math.min(limit, agentCap - spentIn(others, this.meter.rates, t, run.agent));
    return Math.max(0, Math.min(used, limit));
  }

  /** Budget alerts at 80, 90 and 100 % of the cap for runs (and agents at theirs), once per month and cap. */
  private async thresholdAlerts(q: LedgerQueries, now: number): Promise<void> {
    const month = monthOf(now);
    for (const { alert, onceKey } of thresholdAlerts(
      this.meter,
      month,
      await this.view(month, undefined, q),
      now,
    )) {
      await this.insertAlert(q, alert, now, onceKey);
    }
  }

  /** Raises an alert: recorded, then sent to the sinks unless `page` is false (a self-test that held). */
  async alert(a: AlertInput, page = true): Promise<void> {
    await this.store.write((q) => this.insertAlert(q, a, this.clock()));
    if (page) this.deliverPending();
    else this.pending = [];
  }

  private pending: AlertRecord[] = [];

  /** Records an alert (once per `onceKey`); it is sent after the transaction commits. */
  private async insertAlert(q: LedgerQueries, a: AlertInput, at: number, onceKey?: string): Promise<void> {
    const row = await q.get(
      `INSERT INTO alerts (at, month, kind, project, agent, run_id, message, once_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT DO NOTHING RETURNING *`,
      [
        at,
        monthOf(at),
        a.kind,
        this.meter.project,
        a.agent ?? null,
        a.runId ?? null,
        a.message,
        onceKey ?? null,
      ],
    );
    if (row !== undefined) this.pending.push(alertFromRow(row));
  }

  /** Sends the alerts recorded by the last transaction to the sinks (after it committed). */
  private deliverPending(): void {
    const out = this.pending;
    this.pending = [];
    for (const a of out) for (const sink of this.sinks) sink(a);
  }

  /**
   * Checks the thresholds now (a launcher calls it while runs are open, so alerts fire as spend accrues). A meter
   * passes `{ wait: false }`: a ledger another process holds throws at once rather than stopping its timers.
   */
  async tick(options: WriteOptions = {}): Promise<void> {
    await this.store.write((q) => this.thresholdAlerts(q, this.clock()), options);
    this.deliverPending();
  }

  /** Month to date (or `month`): spend, what is left, by template and agent, and the forecast. */
  async spend(month = monthOf(this.clock())): Promise<SpendReport> {
    return spendReport(this.meter, month, await this.monthRuns(month), this.clock());
  }

  /** The refusal `up` gets while the month's spend is at the cap, else undefined. */
  async upRefusal(): Promise<string | undefined> {
    const s = await this.spend();
    if (!s.blocked) return undefined;
    return `project "${s.project}" has reached its monthly cap: ${usdFine(s.spentUsd)} spent of ${usdFine(s.runsCapUsd)} for runs in ${s.month}; \`up\` is refused until budget.monthlyCapUsd is raised or the month turns (${new Date(nextMonthStart(s.month)).toISOString()})`;
  }

  /** The audit log: runs, newest first, since a time and of an agent when given. */
  async runs(filter: { since?: number; agent?: string; limit?: number } = {}): Promise<RunRecord[]> {
    const rows = await this.store.all(
      `SELECT * FROM runs WHERE project = ? AND admitted_at >= ? AND (CAST(? AS TEXT) IS NULL OR agent = ?)
       ORDER BY admitted_at DESC, id LIMIT ?`,
      [
        this.meter.project,
        filter.since ?? 0,
        filter.agent ?? null,
        filter.agent ?? null,
        filter.limit ?? 1_000_000,
      ],
    );
    return rows.map(runFromRow);
  }

  /** The alerts, newest first, since a time when given. */
  async alerts(filter: { since?: number; kind?: AlertKind } = {}): Promise<AlertRecord[]> {
    const rows = await this.store.all(
      "SELECT * FROM alerts WHERE project = ? AND at >= ? AND (CAST(? AS TEXT) IS NULL OR kind = ?) ORDER BY at DESC, id DESC",
      [this.meter.project, filter.since ?? 0, filter.kind ?? null, filter.kind ?? null],
    );
    return rows.map(alertFromRow);
  }

  /** Closes the runs a dead launcher left open: see {@link reconcileDeadRuns}. Returns the runs closed. */
  reconcile(engine: OrphanEngine | ((container: string) => Promise<void>)): Promise<RunRecord[]> {
    return reconcileDeadRuns(this, engine);
  }

  /** The project's open runs, each with the host, process id and process start of the launcher that admitted it. */
  async openRuns(): Promise<{ run: RunRecord; host: string; pid: number; start: string | null }[]> {
    return (
      await this.store.all("SELECT * FROM runs WHERE project = ? AND status = 'open'", [this.meter.project])
    ).map((row) => ({ run: runFromRow(row), ...ownerFromRow(row) }));
  }
}
