/** The two writes of a run's row: its admission (open) and its end (closed, charged). Inside a ledger write. */
import { taskUsd } from "../../components/model";
import { thisProcess } from "../orphan-watch";
import type { AdmitRequest, Meter, RunOutcome } from "./records";
import type { LedgerQueries } from "./store";

/** Writes an admitted run's row, open, owned by this process. */
export async function insertRun(
  q: LedgerQueries,
  m: Meter,
  req: AdmitRequest,
  month: string,
  now: number,
): Promise<void> {
  await q.run(
    `INSERT INTO runs (id, project, template, spec_hash, agent, command, container, vcpu, memory_mb, max_seconds,
       max_charge_usd, month, admitted_at, status, owner_host, owner_pid, owner_start)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'open', ?, ?, ?)`,
    [
      req.id,
      m.project,
      req.template,
      req.specHash,
      req.agent ?? null,
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
    ],
  );
}

/** Records how a run ended and what it is charged. */
export async function updateClosedRun(
  q: LedgerQueries,
  id: string,
  status: "done" | "reconciled",
  now: number,
  outcome: RunOutcome,
  charge: number,
): Promise<void> {
  await q.run(
    `UPDATE runs SET status = ?, ended_at = ?, exit_code = ?, limits = ?, killed_by_launcher = ?, stopped_by = ?,
       error = ?, charge_usd = ?, egress = ?, broker = ? WHERE id = ?`,
    [
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
    ],
  );
}
