/**
 * Reconciliation: the runs a dead launcher left open in the ledger (its process is gone from this machine) are
 * charged up to their deadline (clipped to the caps), their containers removed, and an alert says so. A run whose
 * launcher still lives, or that another machine admitted, is left alone.
 */
import { hostname } from "node:os";
import { usdFine } from "../components/model";
import type { Ledger, RunRecord } from "./ledger";

/** Closes the runs of `ledger` that a dead launcher left open, removing each one's container with `remove`. */
export async function reconcileDeadRuns(
  ledger: Ledger,
  remove: (container: string) => Promise<void>,
): Promise<RunRecord[]> {
  const here = hostname();
  const stale = ledger.openRuns().filter((o) => o.host === here && !processAlive(o.pid));
  const out: RunRecord[] = [];
  for (const { run, pid } of stale) {
    await remove(run.container);
    const end = run.admittedAt + run.maxSeconds * 1000;
    const closed = ledger.complete(
      run.id,
      { exitCode: null, error: "the launcher that started it died; reconciled from the engine" },
      "reconciled",
      Math.min(end, Math.max(ledger.now(), run.admittedAt)),
    );
    if (closed.status === "reconciled") {
      ledger.alert({
        kind: "reconciled",
        message: `run ${run.id} (template ${run.template}) was left open by a launcher that died (pid ${String(pid)}); its container was removed and it was charged ${usdFine(closed.chargeUsd ?? 0)}`,
        agent: run.agent,
        runId: run.id,
      });
      out.push(closed);
    }
  }
  return out;
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
