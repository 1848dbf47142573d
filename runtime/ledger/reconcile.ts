/**
 * Reconciliation: the runs a dead launcher left open in the ledger are closed. A launcher is dead when its process
 * is gone from this machine, or when its process id now belongs to another process (the start recorded with the run
 * differs). Each such run's container is stopped if it still runs and the run is charged what it ran by the engine's
 * own clock, from the container's start to its end (clipped to what the caps leave, as every charge is); then its
 * container, job folder, task network and watch entry are removed and an alert says so. Only when the engine no
 * longer knows the container is the run charged up to its deadline, its maximum, and the alert says that too. A run
 * whose launcher still lives, or that another machine admitted, is left alone.
 */
import { hostname } from "node:os";
import { usdFine } from "../../components/model";
import { ownerAlive } from "../orphan-watch";
import type { AlertInput, RunOutcome, RunRecord } from "./records";

/** A container's times as the engine knows them. */
export interface EngineTimes {
  /** When the container started (ms since the epoch); undefined when it never did. */
  readonly startedAt: number | undefined;
  /** When it ended; undefined while it runs. */
  readonly finishedAt: number | undefined;
  readonly exitCode: number | null;
  /** True when reconciliation had to stop it (it was still running). */
  readonly stoppedNow: boolean;
}

/** What reconciliation needs of the engine and the host (runtime/orphans.ts makes it for Docker). */
export interface OrphanEngine {
  /** Stops the container if it still runs and reads its times; undefined when the engine has no such container. */
  stop(container: string): Promise<EngineTimes | undefined>;
  /** Removes the container; one already gone is no error. */
  remove(container: string): Promise<void>;
  /** Removes what else the run's task left (its job folder, its task network, its watch entry). */
  cleanup(run: RunRecord): Promise<void>;
}

/** How a reconciled run is charged: until when, for how many seconds, and from what. */
export interface ReconciledUse {
  /** When the run is recorded as ended (ms since the epoch). */
  readonly endedAt: number;
  /** The seconds charged, when the engine told (not limited to the run's maximum); undefined: up to its deadline. */
  readonly usedSeconds: number | undefined;
  /** `engine`: by the engine's times; `never-started`: nothing ran; `deadline`: no times, charged to the maximum. */
  readonly basis: "engine" | "never-started" | "deadline";
}

/**
 * What a run a dead launcher left is charged for, given the engine's times of its container (undefined when the
 * engine no longer knows it) and the time now: from the start to the end on the engine's clock (to `now` if it has
 * not ended), nothing if it never started, and without times up to its deadline (its maximum), as no more is known.
 * The start is never before the run's admission: a pool member's container started before its claim, and its wait
 * until then is a run of its own (the project's), already charged.
 */
export function reconciledUse(run: RunRecord, times: EngineTimes | undefined, now: number): ReconciledUse {
  if (times === undefined) {
    const deadline = run.admittedAt + run.maxSeconds * 1000;
    return {
      endedAt: Math.min(deadline, Math.max(now, run.admittedAt)),
      usedSeconds: undefined,
      basis: "deadline",
    };
  }
  if (times.startedAt === undefined) {
    return { endedAt: Math.max(now, run.admittedAt), usedSeconds: 0, basis: "never-started" };
  }
  const start = Math.max(times.startedAt, run.admittedAt);
  const end =
    times.finishedAt !== undefined && times.finishedAt >= times.startedAt
      ? Math.max(times.finishedAt, start)
      : Math.max(now, start);
  return { endedAt: end, usedSeconds: (end - start) / 1000, basis: "engine" };
}

/** What reconciliation asks of the ledger (runtime/ledger/index.ts keeps it). */
export interface ReconciledBooks {
  openRuns(): Promise<{ run: RunRecord; host: string; pid: number; start: string | null }[]>;
  run(id: string): Promise<RunRecord | undefined>;
  now(): number;
  complete(
    id: string,
    outcome: RunOutcome,
    status: "done" | "reconciled",
    endedAt?: number,
  ): Promise<RunRecord>;
  alert(a: AlertInput, page?: boolean): Promise<void>;
}

/** The project's open runs whose launcher on this machine is dead (its process gone, or its id reused). */
export async function deadRuns(ledger: ReconciledBooks): Promise<{ run: RunRecord; pid: number }[]> {
  const here = hostname();
  return (await ledger.openRuns()).filter(
    (o) => o.host === here && !ownerAlive({ host: o.host, pid: o.pid, start: o.start }),
  );
}

/** A text of an amount of seconds. */
const secs = (s: number) => `${s.toFixed(1)} s`;

/** Closes the runs of `ledger` that a dead launcher left open (see above). Returns the runs it closed. */
export async function reconcileDeadRuns(
  ledger: ReconciledBooks,
  engine: OrphanEngine | ((container: string) => Promise<void>),
): Promise<RunRecord[]> {
  const e: OrphanEngine =
    typeof engine === "function"
      ? { stop: async () => undefined, remove: engine, cleanup: async () => undefined }
      : engine;
  const out: RunRecord[] = [];
  for (const { run, pid } of await deadRuns(ledger)) {
    if ((await ledger.run(run.id))?.status !== "open") continue;
    const times = await e.stop(run.container);
    const use = reconciledUse(run, times, ledger.now());
    if ((await ledger.run(run.id))?.status !== "open") continue;
    const how =
      use.basis === "engine"
        ? `the engine says it ran ${secs(use.usedSeconds ?? 0)}${times?.stoppedNow ? " (it was still running and was stopped now)" : ""}`
        : use.basis === "never-started"
          ? "its container never started"
          : "the engine no longer knows its container, so it was charged up to its deadline, its maximum, as no more is known";
    const closed = await ledger.complete(
      run.id,
      {
        exitCode: times?.exitCode ?? null,
        error: `the launcher that started it died; reconciled: ${how}`,
        ...(use.usedSeconds === undefined ? {} : { usedSeconds: use.usedSeconds }),
      },
      "reconciled",
      use.endedAt,
    );
    if (closed.status !== "reconciled") continue;
    // The books are closed first: what is left behind is removed after, and a failure to is said, not hidden.
    const left: string[] = [];
    await e.remove(run.container).catch((x: unknown) => left.push(`its container (${String(x)})`));
    await e.cleanup(run).catch((x: unknown) => left.push(`its job folder or network (${String(x)})`));
    // The charge is linear in the time: what it used at the run's rate, to say when the caps clipped it.
    const usedUsd =
      use.usedSeconds === undefined || run.maxSeconds <= 0
        ? undefined
        : (run.maxChargeUsd * use.usedSeconds) / run.maxSeconds;
    const charge = closed.chargeUsd ?? 0;
    const clipped =
      usedUsd !== undefined && usedUsd > charge + 1e-9
        ? ` (it used ${usdFine(usedUsd)}; the charge is clipped to what the caps leave)`
        : "";
    const removed =
      left.length === 0
        ? "its container, job folder and task network were removed"
        : `could not remove ${left.join(" and ")}; \`sandbox off\` removes them`;
    await ledger.alert({
      kind: "reconciled",
      message: `run ${run.id} (template ${run.template}) was left open by a launcher that died (pid ${String(pid)}); ${how}; it was charged ${usdFine(charge)}${clipped}; ${removed}`,
      agent: run.agent,
      runId: run.id,
    });
    out.push(closed);
  }
  return out;
}
