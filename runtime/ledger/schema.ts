/**
 * The ledger's schema: one migration per version, `PRAGMA user_version` saying how many ran, and the migration that
 * brings a ledger file to this code's version (a file from a newer toolkit is refused by name).
 */
import type { DatabaseSync } from "node:sqlite";
import { LedgerTooNew } from "./errors";

/** The schema, one migration per version; `PRAGMA user_version` says how many ran. */
export const MIGRATIONS: readonly string[] = [
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
  // 2: the secrets broker's calls of each run.
  "ALTER TABLE runs ADD COLUMN broker TEXT NOT NULL DEFAULT '[]';",
  // 3: the ledger's own identity, so that a ledger replaced or made anew is told from the one that was there.
  `CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
   INSERT INTO meta (key, value) VALUES ('ledger_id', lower(hex(randomblob(16))));`,
  // 4: the start of the launcher process that admitted a run, so that a dead launcher is known by more than its
  // process id (which the system gives again to a later process).
  "ALTER TABLE runs ADD COLUMN owner_start TEXT;",
  // 5: the agents' keys (their SHA-256 only): an agent is who holds one of its keys, not who names it.
  `CREATE TABLE agent_keys (
     key_hash TEXT PRIMARY KEY,
     project TEXT NOT NULL,
     agent TEXT NOT NULL,
     made_at INTEGER NOT NULL,
     revoked_at INTEGER
   );
   CREATE INDEX agent_keys_agent ON agent_keys (project, agent);`,
];

/** The schema version this code writes. */
export const LEDGER_SCHEMA_VERSION = MIGRATIONS.length;

/** Brings the ledger `db` (at `file`) to {@link LEDGER_SCHEMA_VERSION}; call it inside a write transaction. */
export function migrateLedger(db: DatabaseSync, file: string): void {
  const version = Number((db.prepare("PRAGMA user_version").get() as { user_version: unknown }).user_version);
  if (version > MIGRATIONS.length) {
    throw new LedgerTooNew(
      `the ledger ${file} has schema version ${version}, newer than this toolkit's ${MIGRATIONS.length}; use the newer toolkit`,
    );
  }
  for (let v = version; v < MIGRATIONS.length; v++) db.exec(MIGRATIONS[v] ?? "");
  if (version < MIGRATIONS.length) db.exec(`PRAGMA user_version = ${MIGRATIONS.length}`);
}
