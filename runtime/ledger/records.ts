/**
 * The ledger's records: what the meter holds a project to, a run's and an alert's rows (and how they are read back
 * from SQLite), what a launch asks and how it ended, the month-to-date report, and the schema's migrations.
 */
import type { AlertKind, TaskSize } from "../../components/model";

export { type Meter, meterOf } from "../../components/model/metering";

/** A launch the ledger refused: the budget, an agent's profile or limits. Nothing was created. */
export class BudgetRefused extends Error {
  constructor(
    message: string,
    /** `concurrency`: every slot of the project or of the agent is busy (a launch may wait for one). */
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
  /** Every call the secrets broker logged for the run (route, method, path, status, bytes, time; no credential). */
  readonly broker: readonly unknown[];
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

/** Where alerts go once recorded (runtime/ledger/alerts.ts makes them from the config). */
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
  /**
   * The open run whose slot this one takes over, closed and charged in the same transaction: a pool member's wait
   * (runtime/pool.ts), when a task claims the member.
   */
  readonly replaces?: string;
}

/** How a run ended, as the launcher saw it. */
export interface RunOutcome {
  readonly exitCode: number | null;
  readonly limits?: readonly string[];
  readonly killedByLauncher?: boolean;
  readonly stoppedBy?: "cap" | "interrupted" | "off";
  readonly error?: string;
  readonly egress?: readonly unknown[];
  readonly broker?: readonly unknown[];
  /**
   * The seconds the run is charged for, when they are known apart from its end (reconciliation reads them from the
   * engine: what its container ran, not limited to its maximum); else the time from its admission to its end.
   */
  readonly usedSeconds?: number;
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

/** `YYYY-MM` of a time, in UTC. */
export function monthOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 7);
}

/** The first instant of the month after `month` (UTC), in ms. */
export function nextMonthStart(month: string): number {
  const [y, m] = month.split("-").map(Number) as [number, number];
  return Date.UTC(y, m, 1);
}

/** The first instant of `month` (UTC), in ms. */
export function monthStart(month: string): number {
  const [y, m] = month.split("-").map(Number) as [number, number];
  return Date.UTC(y, m - 1, 1);
}

/** A row as node:sqlite returns it. */
export type Row = Record<string, unknown>;

export function runFromRow(r: Row): RunRecord {
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
    broker: JSON.parse(String(r.broker ?? "[]")) as unknown[],
  };
}

/** The launcher that admitted a run, from its row: its host, its process id and that process's start (or null). */
export function ownerFromRow(r: Row): { host: string; pid: number; start: string | null } {
  return {
    host: String(r.owner_host),
    pid: Number(r.owner_pid),
    start: r.owner_start === null || r.owner_start === undefined ? null : String(r.owner_start),
  };
}

export function alertFromRow(r: Row): AlertRecord {
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
