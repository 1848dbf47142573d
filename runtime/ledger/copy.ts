/**
 * Moving a project's history from one ledger to another (`sandbox ledger copy`): its runs, alerts, agents' keys and
 * what its last `up` deployed, from the SQLite file one machine kept into the shared store, in one write transaction
 * of the target (all of it lands, or nothing). The two stores then give the same answers for the project.
 */
import type { LedgerStore, SqlValue } from "./store";

/** The runs table's columns, as both stores keep them. */
const RUN_COLUMNS = [
  "id",
  "project",
  "template",
  "spec_hash",
  "agent",
  "command",
  "files",
  "container",
  "vcpu",
  "memory_mb",
  "max_seconds",
  "max_charge_usd",
  "month",
  "admitted_at",
  "ended_at",
  "status",
  "exit_code",
  "limits",
  "killed_by_launcher",
  "stopped_by",
  "error",
  "charge_usd",
  "egress",
  "owner_host",
  "owner_pid",
  "broker",
  "owner_start",
] as const;

/** The alerts table's columns but its id (the target numbers them anew, in the same order). */
const ALERT_COLUMNS = ["at", "month", "kind", "project", "agent", "run_id", "message", "once_key"] as const;

const AGENT_KEY_COLUMNS = ["key_hash", "project", "agent", "made_at", "revoked_at"] as const;

/** What a copy moved. */
export interface CopyCount {
  readonly runs: number;
  readonly alerts: number;
  readonly agentKeys: number;
  readonly deployed: number;
}

/** A copy refused before anything was written: the target is left as it was. */
export class CopyRefused extends Error {}

/** The `meta` keys that belong to a project (what its last `up` deployed). */
function projectMetaKeys(project: string): string[] {
  return [`deployed:${project}`, `deployed-specs:${project}`];
}

function values(row: Record<string, unknown>, columns: readonly string[]): SqlValue[] {
  return columns.map((c) => {
    const v = row[c];
    return v === undefined || v === null
      ? null
      : typeof v === "number" || typeof v === "string"
        ? v
        : String(v);
  });
}

const insert = (table: string, columns: readonly string[]) =>
  `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`;

/**
 * Copies project `project`'s history from `from` into `to`. Refused (nothing written) when the source has runs still
 * open (a launcher may yet end them there) or when the target already holds any history of the project.
 */
export async function copyLedger(from: LedgerStore, to: LedgerStore, project: string): Promise<CopyCount> {
  const open = await from.get("SELECT COUNT(*) AS n FROM runs WHERE project = ? AND status = 'open'", [
    project,
  ]);
  if (Number(open?.n ?? 0) > 0) {
    throw new CopyRefused(
      `${Number(open?.n)} run(s) of project ${project} are still open in ${from.place}: a launcher may yet end and charge them there. Wait for them to end (or stop them with \`sandbox kill\`), then copy`,
    );
  }
  const runs = await from.all(
    `SELECT ${RUN_COLUMNS.join(", ")} FROM runs WHERE project = ? ORDER BY admitted_at, id`,
    [project],
  );
  const alerts = await from.all(
    `SELECT ${ALERT_COLUMNS.join(", ")} FROM alerts WHERE project = ? ORDER BY id`,
    [project],
  );
  const keys = await from.all(`SELECT ${AGENT_KEY_COLUMNS.join(", ")} FROM agent_keys WHERE project = ?`, [
    project,
  ]);
  const metaKeys = projectMetaKeys(project);
  const meta = await from.all(`SELECT key, value FROM meta WHERE key IN (?, ?)`, metaKeys);
  return to.write(async (q) => {
    const held = await q.get(
      `SELECT (SELECT COUNT(*) FROM runs WHERE project = ?) + (SELECT COUNT(*) FROM alerts WHERE project = ?)
        + (SELECT COUNT(*) FROM agent_keys WHERE project = ?) AS n`,
      [project, project, project],
    );
    if (Number(held?.n ?? 0) > 0) {
      throw new CopyRefused(
        `${to.place} already holds history of project ${project} (${Number(held?.n)} rows): nothing was copied. A copy moves a project's history once, into a ledger that has none of it`,
      );
    }
    for (const r of runs) await q.run(insert("runs", RUN_COLUMNS), values(r, RUN_COLUMNS));
    for (const a of alerts) await q.run(insert("alerts", ALERT_COLUMNS), values(a, ALERT_COLUMNS));
    for (const k of keys) await q.run(insert("agent_keys", AGENT_KEY_COLUMNS), values(k, AGENT_KEY_COLUMNS));
    for (const m of meta) {
      await q.run(
        "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [String(m.key), String(m.value)],
      );
    }
    return { runs: runs.length, alerts: alerts.length, agentKeys: keys.length, deployed: meta.length };
  });
}
