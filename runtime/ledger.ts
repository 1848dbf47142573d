/**
 * The ledger: every run a launcher makes, charged and recorded in one SQLite file per project (Node's built-in
 * `node:sqlite`, WAL mode, schema versioned), and the meter that holds the budget's cap with it.
 *
 * - A launch is admitted, in one write transaction, only when the month's spend so far plus the run's maximum
 *   charge (its size × its deadline) fits under what the cap leaves for runs; an agent's own cap and concurrency
 *   are held the same way. Admission writes the run's row before its container is created.
 * - Spend is the charges of finished runs plus what open runs have used so far. Running work is stopped at the
 *   moment the spend would reach the cap ({@link Ledger.stopTime}), and a charge is never more than what is left
 *   under the cap, so the sum of a month's charges never crosses it, whatever processes launch at once.
 * - Alerts at 80 %, 90 % and 100 % of the cap fire once per month and cap; launch refusals and escape signals are
 *   alerts too. Each is a row of the ledger and goes to the configured sinks (runtime/alerts.ts).
 *
 * Pricing is the model's one formula (`taskUsd`), the same the budget proof uses.
 */
import { mkdirSync } from "node:fs";
import { hostname } from "node:os";
import { dirname } from "node:path";
import { DatabaseSync } from "node:sqlite";
import {
  type Agents,
  type AlertKind,
  alwaysOnCost,
  type ResolvedProject,
  runArithmetic,
  type TaskSize,
  taskMonthlyUsd,
  taskUsd,
  usd,
  usdFine,
  withinCap,
} from "../components/model";

/** What the meter holds a project to: read once from the resolved project ({@link meterOf}). */
export interface Meter {
  readonly project: string;
  readonly enforce: "worst-case" | "metered";
  /** The monthly cap in US dollars. */
  readonly capUsd: number;
  /** What runs all month whatever the tasks do (the proxy), paid before any run. */
  readonly fixedUsd: number;
  readonly rates: { readonly usdPerVcpuHour: number; readonly usdPerGbHour: number };
  /** Tasks of the project that may run at once, across every launcher process. */
  readonly concurrency: number;
  readonly agents: Agents;
  readonly templates: readonly string[];
  /** False when the project is disabled: nothing is admitted. */
  readonly enabled: boolean;
}

/** The meter of a resolved project. */
export function meterOf(p: ResolvedProject): Meter {
  const fixed = p.spec.enabled ? alwaysOnCost(p.spec) : undefined;
  return {
    project: p.spec.name,
    enforce: p.spec.budget.enforce,
    capUsd: p.spec.budget.monthlyCapUsd,
    fixedUsd: fixed === undefined ? 0 : taskMonthlyUsd(fixed.size, p.spec.budget),
    rates: { usdPerVcpuHour: p.spec.budget.usdPerVcpuHour, usdPerGbHour: p.spec.budget.usdPerGbHour },
    concurrency: p.budget.concurrency,
    agents: p.spec.agents,
    templates: Object.keys(p.spec.templates).sort(),
    enabled: p.spec.enabled,
  };
}

/** A launch the ledger refused: the budget, an agent's profile or limits. Nothing was created. */
export class BudgetRefused extends Error {
  constructor(
    message: string,
    readonly reason: "cap" | "agent" | "concurrency" | "disabled",
  ) {
    super(message);
    this.name = "BudgetRefused";
  }
}

/** A run's row: what was launched, by whom, what came of it and what it cost. */
export interface RunRecord {
  readonly id: string;
  readonly project: string;
  readonly template: string;
  readonly specHash: string;
  readonly agent: string | null;
  readonly command: readonly string[];
  /** SHA-256 of every file put in the job folder, by path inside it. */
  readonly files: Readonly<Record<string, string>>;
  readonly container: string;
  readonly size: TaskSize;
  /** The longest the run may take (its deadline and the launcher's grace), in seconds. */
  readonly maxSeconds: number;
  readonly maxChargeUsd: number;
  /** `YYYY-MM` (UTC) of the admission: the month the run is charged to. */
  readonly month: string;
  readonly admittedAt: number;
  readonly endedAt: number | null;
  readonly status: "open" | "done" | "reconciled";
  readonly exitCode: number | null;
  readonly limits: readonly string[];
  readonly killedByLauncher: boolean;
  /** `cap` when the meter stopped the run at the cap; `interrupted` when the launcher was shut down. */
  readonly stoppedBy: string | null;
  readonly error: string | null;
  readonly chargeUsd: number | null;
  readonly egress: readonly unknown[];
}

/** An alert's row. */
export interface AlertRecord {
  readonly id: number;
  readonly at: number;
  readonly month: string;
  readonly kind: AlertKind;
  readonly project: string;
  readonly agent: string | null;
  readonly runId: string | null;
  readonly message: string;
}

/** What a new alert carries; the ledger adds its id, time and month. */
export type AlertInput = Omit<AlertRecord, "id" | "at" | "month" | "project" | "agent" | "runId"> & {
  readonly agent?: string | null;
  readonly runId?: string | null;
};

/** Where alerts go once recorded (runtime/alerts.ts makes them from the config). */
export type AlertSink = (alert: AlertRecord) => void;

/** What a launch asks the ledger to admit. */
export interface AdmitRequest {
  readonly id: string;
  readonly template: string;
  readonly specHash: string;
  readonly agent?: string | undefined;
  readonly command: readonly string[];
  readonly container: string;
  readonly size: TaskSize;
  readonly maxSeconds: number;
}

/** How a run ended, as the launcher saw it. */
export interface RunOutcome {
  readonly exitCode: number | null;
  readonly limits?: readonly string[];
  readonly killedByLauncher?: boolean;
  readonly stoppedBy?: "cap" | "interrupted";
  readonly error?: string;
  readonly egress?: readonly unknown[];
}

/** Month to date: what was spent, by template and agent, what is left, and the forecast at the current rate. */
export interface SpendReport {
  readonly project: string;
  readonly month: string;
  readonly enforce: "worst-case" | "metered";
  readonly capUsd: number;
  /** The always-on part's month, paid before any run. */
  readonly fixedUsd: number;
  /** What the cap leaves for runs: cap − fixed. */
  readonly runsCapUsd: number;
  readonly spentUsd: number;
  readonly leftUsd: number;
  /** Spent / runs cap, 0–1. */
  readonly fraction: number;
  /** Month-end spend at the rate so far this month (spent ÷ elapsed × the month), at most the cap. */
  readonly forecastUsd: number;
  readonly runs: number;
  readonly open: number;
  readonly byTemplate: Readonly<Record<string, number>>;
  readonly byAgent: Readonly<Record<string, number>>;
  /** True when the spend reached the cap: new launches and `up` are refused until the cap is raised or the month turns. */
  readonly blocked: boolean;
}

/** The schema, one migration per version; `PRAGMA user_version` says how many ran. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE runs (
     id TEXT PRIMARY KEY,
     project TEXT NOT NULL,
     template TEXT NOT NULL,
     spec_hash TEXT NOT NULL,
     agent TEXT,
     command TEXT NOT NULL,
     files TEXT NOT NULL DEFAULT '{}',
     container TEXT NOT NULL,
     vcpu REAL NOT NULL,
     memory_mb REAL NOT NULL,
     max_seconds REAL NOT NULL,
     max_charge_usd REAL NOT NULL,
     month TEXT NOT NULL,
     admitted_at INTEGER NOT NULL,
     ended_at INTEGER,
     status TEXT NOT NULL,
     exit_code INTEGER,
     limits TEXT NOT NULL DEFAULT '[]',
     killed_by_launcher INTEGER NOT NULL DEFAULT 0,
     stopped_by TEXT,
     error TEXT,
     charge_usd REAL,
     egress TEXT NOT NULL DEFAULT '[]',
     owner_host TEXT NOT NULL,
     owner_pid INTEGER NOT NULL
   );
   CREATE INDEX runs_month ON runs (project, month, status);
   CREATE TABLE alerts (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     at INTEGER NOT NULL,
     month TEXT NOT NULL,
     kind TEXT NOT NULL,
     project TEXT NOT NULL,
     agent TEXT,
     run_id TEXT,
     message TEXT NOT NULL,
     once_key TEXT UNIQUE
   );
   CREATE INDEX alerts_at ON alerts (project, at);`,
];

/** The schema version this code writes. */
export const LEDGER_SCHEMA_VERSION = MIGRATIONS.length;

/** `YYYY-MM` of a time, in UTC. */
export function monthOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 7);
}

/** The first instant of the month after `month` (UTC), in ms. */
export function nextMonthStart(month: string): number {
  const [y, m] = month.split("-").map(Number) as [number, number];
  return Date.UTC(y, m, 1);
}

function monthStart(month: string): number {
  const [y, m] = month.split("-").map(Number) as [number, number];
  return Date.UTC(y, m - 1, 1);
}

type Row = Record<string, unknown>;

function runFromRow(r: Row): RunRecord {
  return {
    id: String(r.id),
    project: String(r.project),
    template: String(r.template),
    specHash: String(r.spec_hash),
    agent: r.agent === null ? null : String(r.agent),
    command: JSON.parse(String(r.command)) as string[],
    files: JSON.parse(String(r.files)) as Record<string, string>,
    container: String(r.container),
    size: { vcpu: Number(r.vcpu), memoryMb: Number(r.memory_mb) },
    maxSeconds: Number(r.max_seconds),
    maxChargeUsd: Number(r.max_charge_usd),
    month: String(r.month),
    admittedAt: Number(r.admitted_at),
    endedAt: r.ended_at === null ? null : Number(r.ended_at),
    status: String(r.status) as RunRecord["status"],
    exitCode: r.exit_code === null ? null : Number(r.exit_code),
    limits: JSON.parse(String(r.limits)) as string[],
    killedByLauncher: Number(r.killed_by_launcher) === 1,
    stoppedBy: r.stopped_by === null ? null : String(r.stopped_by),
    error: r.error === null ? null : String(r.error),
    chargeUsd: r.charge_usd === null ? null : Number(r.charge_usd),
    egress: JSON.parse(String(r.egress)) as unknown[],
  };
}

function alertFromRow(r: Row): AlertRecord {
  return {
    id: Number(r.id),
    at: Number(r.at),
    month: String(r.month),
    kind: String(r.kind) as AlertKind,
    project: String(r.project),
    agent: r.agent === null ? null : String(r.agent),
    runId: r.run_id === null ? null : String(r.run_id),
    message: String(r.message),
  };
}

/** What a run has used by `t`: its price for the time since admission, at most its maximum and its end. */
function usedBy(run: RunRecord, rates: Meter["rates"], t: number): number {
  if (run.status !== "open") return run.chargeUsd ?? 0;
  const seconds = Math.min(run.maxSeconds, Math.max(0, (t - run.admittedAt) / 1000));
  return taskUsd(run.size, rates, seconds);
}

/** USD per millisecond while a run is open. */
function burn(run: RunRecord, rates: Meter["rates"]): number {
  return taskUsd(run.size, rates, 1) / 1000;
}

/**
 * The moment the spend of `runs` reaches `limitUsd`, given what each has used at `now` and that each stops at its
 * maximum; undefined when it never does.
 */
function reachTime(
  view: MonthView,
  rates: Meter["rates"],
  limitUsd: number,
  now: number,
  agent?: string | null,
): number | undefined {
  const runs = agent === undefined ? view.open : view.open.filter((r) => r.agent === agent);
  let remaining = limitUsd - spentIn(view, rates, now, agent);
  if (remaining <= 1e-9) return now;
  let t = now;
  let active = runs
    .filter((r) => r.status === "open" && r.admittedAt + r.maxSeconds * 1000 > now)
    .map((r) => ({ rate: burn(r, rates), end: r.admittedAt + r.maxSeconds * 1000 }))
    .sort((a, b) => a.end - b.end);
  while (active.length > 0) {
    const rate = active.reduce((s, a) => s + a.rate, 0);
    const next = active[0]?.end ?? t;
    if (rate > 0 && rate * (next - t) >= remaining) return t + remaining / rate;
    remaining -= rate * (next - t);
    t = next;
    active = active.filter((a) => a.end > t);
  }
  return undefined;
}

/** A month as the meter reads it: what closed runs were charged (in all and by agent), and the open runs. */
interface MonthView {
  readonly closedUsd: number;
  readonly closedByAgent: ReadonlyMap<string | null, number>;
  readonly open: readonly RunRecord[];
}

/** The month's spend at `t` (of one agent when given): closed charges plus what open runs have used. */
function spentIn(view: MonthView, rates: Meter["rates"], t: number, agent?: string | null): number {
  const closed = agent === undefined ? view.closedUsd : (view.closedByAgent.get(agent) ?? 0);
  const open = agent === undefined ? view.open : view.open.filter((r) => r.agent === agent);
  return open.reduce((s, r) => s + usedBy(r, rates, t), closed);
}

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
    const db = new DatabaseSync(file, { timeout: 30_000 });
    db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;");
    const ledger = new Ledger(db, file, meter, options);
    ledger.migrate();
    return ledger;
  }

  /** The ledger's clock (the launcher stops runs by it). */
  now(): number {
    return this.clock();
  }

  /** The project's meter (cap, rates, agents). */
  get limits(): Meter {
    return this.meter;
  }

  /** Takes a changed config (a raised cap, new agents) from now on. */
  reconfigure(meter: Meter): void {
    this.meter = meter;
  }

  close(): void {
    if (this.db.isOpen) this.db.close();
  }

  private migrate(): void {
    this.write(() => {
      const version = Number((this.db.prepare("PRAGMA user_version").get() as Row).user_version);
      if (version > MIGRATIONS.length) {
        throw new Error(
          `the ledger ${this.file} has schema version ${version}, newer than this toolkit's ${MIGRATIONS.length}; use the newer toolkit`,
        );
      }
      for (let v = version; v < MIGRATIONS.length; v++) this.db.exec(MIGRATIONS[v] ?? "");
      if (version < MIGRATIONS.length) this.db.exec(`PRAGMA user_version = ${MIGRATIONS.length}`);
    });
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

  private runsCap(): number {
    return Math.max(0, this.meter.capUsd - this.meter.fixedUsd);
  }

  private spentBy(runs: readonly RunRecord[], t: number): number {
    return runs.reduce((s, r) => s + usedBy(r, this.meter.rates, t), 0);
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
   * Admits a launch or refuses it with the arithmetic: the project is enabled, its agent (when agents are
   * configured) is known and may use the template, the project's and the agent's concurrency and caps hold with
   * this run's maximum charge. Writes the run's row (open) in the same transaction.
   */
  admit(req: AdmitRequest): RunRecord {
    const refusal = (message: string, reason: BudgetRefused["reason"]) => {
      const e = new BudgetRefused(`launch of template "${req.template}" refused: ${message}`, reason);
      return e;
    };
    let refused: BudgetRefused | undefined;
    const admitted = this.write(() => {
      const now = this.clock();
      const month = monthOf(now);
      const m = this.meter;
      const maxCharge = taskUsd(req.size, m.rates, req.maxSeconds);
      const agent = req.agent ?? null;
      const agents = Object.keys(m.agents);
      const profile = agent === null ? undefined : m.agents[agent];
      const view = this.view(month);
      // Open runs of any month hold a slot (one admitted before midnight on the last day still runs).
      const open = this.db
        .prepare("SELECT id FROM runs WHERE project = ? AND status = 'open'")
        .all(m.project) as Row[];
      const spent = spentIn(view, m.rates, now);
      const cap = this.runsCap();
      const fixed =
        m.fixedUsd > 0 ? ` (cap ${usd(m.capUsd)} less ${usdFine(m.fixedUsd)} for what runs all month)` : "";
      if (!m.enabled) refused = refusal(`project "${m.project}" is disabled (the hard stop)`, "disabled");
      else if (agents.length > 0 && agent === null) {
        refused = refusal(
          `the project admits only named agents (${agents.join(", ")}); name one (run --agent)`,
          "agent",
        );
      } else if (agents.length > 0 && profile === undefined) {
        refused = refusal(
          `agent "${agent}" is not one of the project's agents (${agents.join(", ")})`,
          "agent",
        );
      } else if (profile?.templates !== undefined && !profile.templates.includes(req.template)) {
        refused = refusal(
          `agent "${agent}" may use only the templates ${profile.templates.join(", ")}`,
          "agent",
        );
      } else if (!withinCap(spent, cap) || spent >= cap - 1e-9) {
        refused = refusal(
          `the month's spend ${usdFine(spent)} has reached the cap for runs ${usdFine(cap)}${fixed}; new launches and \`up\` are refused until the cap is raised or the month turns (${new Date(nextMonthStart(month)).toISOString()})`,
          "cap",
        );
      } else if (!withinCap(spent + maxCharge, cap)) {
        refused = refusal(
          `month-to-date spend ${usdFine(spent)} + this run's maximum ${runArithmetic(req.size, m.rates, req.maxSeconds)} = ${usdFine(spent + maxCharge)} > the cap for runs ${usdFine(cap)}${fixed}`,
          "cap",
        );
      } else if (open.length >= m.concurrency) {
        refused = refusal(
          `${open.length} tasks of project "${m.project}" are running, its limit is ${m.concurrency}`,
          "concurrency",
        );
      } else if (profile !== undefined && agent !== null) {
        const mineOpen = view.open.filter((r) => r.agent === agent).length;
        const mineSpent = spentIn(view, m.rates, now, agent);
        if (profile.maxConcurrentTasks !== undefined && mineOpen >= profile.maxConcurrentTasks) {
          refused = refusal(
            `agent "${agent}" has ${mineOpen} tasks running, its limit is ${profile.maxConcurrentTasks}`,
            "agent",
          );
        } else if (
          profile.monthlyCapUsd !== undefined &&
          !withinCap(mineSpent + maxCharge, profile.monthlyCapUsd)
        ) {
          refused = refusal(
            `agent "${agent}": month-to-date spend ${usdFine(mineSpent)} + this run's maximum ${runArithmetic(req.size, m.rates, req.maxSeconds)} = ${usdFine(mineSpent + maxCharge)} > its cap ${usdFine(profile.monthlyCapUsd)}`,
            "agent",
          );
        }
      }
      if (refused !== undefined) {
        this.insertAlert({ kind: "launch-refused", message: refused.message, agent, runId: req.id }, now);
        return undefined;
      }
      this.db
        .prepare(
          `INSERT INTO runs (id, project, template, spec_hash, agent, command, container, vcpu, memory_mb, max_seconds,
             max_charge_usd, month, admitted_at, status, owner_host, owner_pid)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'open', ?, ?)`,
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
          maxCharge,
          month,
          now,
          hostname(),
          process.pid,
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

  /**
   * When an open run must be stopped: the moment the month's spend (every open run of every process using what it
   * uses) reaches the cap for runs, or its agent's cap; undefined when neither is reached before it ends.
   */
  stopTime(id: string): number | undefined {
    const run = this.run(id);
    if (run === undefined || run.status !== "open") return undefined;
    const now = this.clock();
    const view = this.view(run.month);
    const times = [reachTime(view, this.meter.rates, this.runsCap(), now)];
    const agentCap = run.agent === null ? undefined : this.meter.agents[run.agent]?.monthlyCapUsd;
    if (agentCap !== undefined) times.push(reachTime(view, this.meter.rates, agentCap, now, run.agent));
    const defined = times.filter((t): t is number => t !== undefined);
    return defined.length === 0 ? undefined : Math.min(...defined);
  }

  /**
   * Closes a run: charges it for the time it took (at most its maximum, and never more than what is left under the
   * project's and its agent's caps), records how it ended, and raises the alerts it calls for: escape signals
   * (proxy refusals, limits hit, a launcher kill, a stop at the cap) and the budget thresholds it crossed.
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
      const charge = this.chargeFor(run, now);
      this.db
        .prepare(
          `UPDATE runs SET status = ?, ended_at = ?, exit_code = ?, limits = ?, killed_by_launcher = ?, stopped_by = ?,
             error = ?, charge_usd = ?, egress = ? WHERE id = ?`,
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
          id,
        );
      const closed = this.run(id) as RunRecord;
      this.signalAlerts(closed, now);
      this.thresholdAlerts(now);
      return closed;
    });
    this.deliverPending();
    return done;
  }

  /** What a run is charged when it ends at `t`: its use, clipped to what the caps leave besides every other run. */
  private chargeFor(run: RunRecord, t: number): number {
    const used = usedBy(run, this.meter.rates, t);
    const others = this.view(run.month, run.id);
    let limit = this.runsCap() - spentIn(others, this.meter.rates, t);
    const agentCap = run.agent === null ? undefined : this.meter.agents[run.agent]?.monthlyCapUsd;
    if (agentCap !== undefined)
      limit = Math.min(limit, agentCap - spentIn(others, this.meter.rates, t, run.agent));
    return Math.max(0, Math.min(used, limit));
  }

  private signalAlerts(run: RunRecord, now: number): void {
    const who = `run ${run.id} (template ${run.template}${run.agent === null ? "" : `, agent ${run.agent}`})`;
    const denied = run.egress.filter((d) => (d as { decision?: string }).decision === "denied") as {
      method?: string;
      host?: string;
      port?: number;
    }[];
    if (denied.length > 0) {
      const what = denied.map((d) => `${d.method ?? ""} ${d.host ?? ""}:${d.port ?? ""}`.trim()).join(", ");
      this.insertAlert(
        {
          kind: "proxy-refused",
          message: `${who}: the proxy refused ${what}`,
          agent: run.agent,
          runId: run.id,
        },
        now,
      );
    }
    if (run.limits.length > 0) {
      this.insertAlert(
        {
          kind: "limit-hit",
          message: `${who} hit its limits: ${run.limits.join(", ")}`,
          agent: run.agent,
          runId: run.id,
        },
        now,
      );
    }
    if (run.killedByLauncher && run.stoppedBy !== "cap") {
      this.insertAlert(
        {
          kind: "launcher-kill",
          message: `${who} outlived its deadline; the launcher killed it`,
          agent: run.agent,
          runId: run.id,
        },
        now,
      );
    }
    if (run.stoppedBy === "cap") {
      this.insertAlert(
        {
          kind: "stopped-by-cap",
          message: `${who} was stopped at the cap, charged ${usdFine(run.chargeUsd ?? 0)}`,
          agent: run.agent,
          runId: run.id,
        },
        now,
      );
    }
  }

  /** Budget alerts at 80, 90 and 100 % of the cap for runs, once per month and cap. */
  private thresholdAlerts(now: number): void {
    const month = monthOf(now);
    const cap = this.runsCap();
    if (cap <= 0) return;
    const view = this.view(month);
    const spent = spentIn(view, this.meter.rates, now);
    for (const [pct, kind] of [
      [80, "budget-80"],
      [90, "budget-90"],
      [100, "budget-100"],
    ] as const) {
      if (!withinCap(cap * (pct / 100), spent)) continue;
      const message =
        pct === 100
          ? `project "${this.meter.project}" reached its cap: ${usdFine(spent)} of ${usdFine(cap)} for runs this month; running work is stopped, new launches and \`up\` are refused until the cap is raised or the month turns`
          : `project "${this.meter.project}" spent ${usdFine(spent)} of ${usdFine(cap)} for runs this month (${pct} %)`;
      this.insertAlert(
        { kind, message },
        now,
        `${this.meter.project}:${month}:${kind}:${Math.round(cap * 1e6)}`,
      );
    }
    for (const [agent, profile] of Object.entries(this.meter.agents)) {
      if (profile.monthlyCapUsd === undefined || profile.monthlyCapUsd <= 0) continue;
      const mine = spentIn(view, this.meter.rates, now, agent);
      if (!withinCap(profile.monthlyCapUsd, mine)) continue;
      this.insertAlert(
        {
          kind: "agent-budget-100",
          agent,
          message: `agent "${agent}" reached its cap: ${usdFine(mine)} of ${usdFine(profile.monthlyCapUsd)} this month`,
        },
        now,
        `${this.meter.project}:${month}:agent:${agent}:${Math.round(profile.monthlyCapUsd * 1e6)}`,
      );
    }
  }

  /** Raises an alert (recorded, then sent to the sinks). */
  alert(a: AlertInput): void {
    this.write(() => this.insertAlert(a, this.clock()));
    this.deliverPending();
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

  /** Checks the thresholds now (a launcher calls it while runs are open, so alerts fire as spend accrues). */
  tick(): void {
    this.write(() => this.thresholdAlerts(this.clock()));
    this.deliverPending();
  }

  /** Month to date (or `month`): spend, what is left, by template and agent, and the forecast. */
  spend(month = monthOf(this.clock())): SpendReport {
    const now = this.clock();
    const runs = this.monthRuns(month);
    const at = Math.min(now, nextMonthStart(month));
    const spent = this.spentBy(runs, at);
    const runsCap = this.runsCap();
    const byTemplate: Record<string, number> = {};
    const byAgent: Record<string, number> = {};
    for (const r of runs) {
      const u = usedBy(r, this.meter.rates, at);
      byTemplate[r.template] = (byTemplate[r.template] ?? 0) + u;
      const a = r.agent ?? "(none)";
      byAgent[a] = (byAgent[a] ?? 0) + u;
    }
    const start = monthStart(month);
    const elapsed = Math.max(1, at - start);
    const forecast = Math.min(runsCap, (spent / elapsed) * (nextMonthStart(month) - start));
    return {
      project: this.meter.project,
      month,
      enforce: this.meter.enforce,
      capUsd: this.meter.capUsd,
      fixedUsd: this.meter.fixedUsd,
      runsCapUsd: runsCap,
      spentUsd: spent,
      leftUsd: Math.max(0, runsCap - spent),
      fraction: runsCap > 0 ? spent / runsCap : 1,
      forecastUsd: forecast,
      runs: runs.length,
      open: runs.filter((r) => r.status === "open").length,
      byTemplate,
      byAgent,
      blocked: spent >= runsCap - 1e-9 || !withinCap(spent, runsCap),
    };
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

  /**
   * Closes the runs a dead launcher left open (its process is gone): each is charged up to its deadline (clipped
   * to the caps), its container removed by `remove`, and an alert says so. Returns the runs closed. A run whose
   * launcher still lives is left alone.
   */
  async reconcile(remove: (container: string) => Promise<void>): Promise<RunRecord[]> {
    const here = hostname();
    const stale = (
      this.db
        .prepare("SELECT * FROM runs WHERE project = ? AND status = 'open'")
        .all(this.meter.project) as Row[]
    ).filter((r) => String(r.owner_host) === here && !processAlive(Number(r.owner_pid)));
    const out: RunRecord[] = [];
    for (const row of stale) {
      const run = runFromRow(row);
      await remove(run.container);
      const end = run.admittedAt + run.maxSeconds * 1000;
      const closed = this.complete(
        run.id,
        { exitCode: null, error: "the launcher that started it died; reconciled from the engine" },
        "reconciled",
        Math.min(end, Math.max(this.clock(), run.admittedAt)),
      );
      if (closed.status === "reconciled") {
        this.alert({
          kind: "reconciled",
          message: `run ${run.id} (template ${run.template}) was left open by a launcher that died (pid ${String(row.owner_pid)}); its container was removed and it was charged ${usdFine(closed.chargeUsd ?? 0)}`,
          agent: run.agent,
          runId: run.id,
        });
        out.push(closed);
      }
    }
    return out;
  }
}

/** True when a process with this id exists on this machine. */
function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}
