/**
 * The shared store: a ledger in PostgreSQL (node-postgres), for launchers on many processes and machines that hold one
 * project's cap together. Every write is one transaction that first takes the ledger's advisory lock
 * (`pg_advisory_xact_lock`), so writers take turns across every connection as SQLite's writers do on one file: what
 * admission reads (the month's spend, the open runs) stays true until it commits. The schema is versioned in
 * `ledger_schema` and migrated on connect, under the same lock. A server that does not answer fails every call with
 * {@link LedgerUnavailable}, naming where it is: launches are refused, never let through unmetered.
 */
import type { Pool, PoolClient } from "pg";
import { LedgerStatementFailed, LedgerTooNew, LedgerUnavailable } from "./errors";
import type { Row } from "./records";
import type { LedgerQueries, LedgerStore, SqlValue, WriteOptions } from "./store";

/** The advisory lock every write of a PostgreSQL ledger takes (one number for the whole database). */
const WRITE_LOCK = 7_310_442_001;

/** The schema, one migration per version; `ledger_schema.version` says how many ran. */
export const PG_MIGRATIONS: readonly string[] = [
  `CREATE TABLE runs (
     id TEXT PRIMARY KEY,
     project TEXT NOT NULL,
     template TEXT NOT NULL,
     spec_hash TEXT NOT NULL,
     agent TEXT,
     command TEXT NOT NULL,
     files TEXT NOT NULL DEFAULT '{}',
     container TEXT NOT NULL,
     vcpu DOUBLE PRECISION NOT NULL,
     memory_mb DOUBLE PRECISION NOT NULL,
     max_seconds DOUBLE PRECISION NOT NULL,
     max_charge_usd DOUBLE PRECISION NOT NULL,
     month TEXT NOT NULL,
     admitted_at BIGINT NOT NULL,
     ended_at BIGINT,
     status TEXT NOT NULL,
     exit_code INTEGER,
     limits TEXT NOT NULL DEFAULT '[]',
     killed_by_launcher INTEGER NOT NULL DEFAULT 0,
     stopped_by TEXT,
     error TEXT,
     charge_usd DOUBLE PRECISION,
     egress TEXT NOT NULL DEFAULT '[]',
     owner_host TEXT NOT NULL,
     owner_pid INTEGER NOT NULL,
     broker TEXT NOT NULL DEFAULT '[]',
     owner_start TEXT
   );
   CREATE INDEX runs_month ON runs (project, month, status);
   CREATE TABLE alerts (
     id BIGSERIAL PRIMARY KEY,
     at BIGINT NOT NULL,
     month TEXT NOT NULL,
     kind TEXT NOT NULL,
     project TEXT NOT NULL,
     agent TEXT,
     run_id TEXT,
     message TEXT NOT NULL,
     once_key TEXT UNIQUE
   );
   CREATE INDEX alerts_at ON alerts (project, at);
   CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
   INSERT INTO meta (key, value) VALUES ('ledger_id', md5(random()::text || clock_timestamp()::text));
   CREATE TABLE agent_keys (
     key_hash TEXT PRIMARY KEY,
     project TEXT NOT NULL,
     agent TEXT NOT NULL,
     made_at BIGINT NOT NULL,
     revoked_at BIGINT
   );
   CREATE INDEX agent_keys_agent ON agent_keys (project, agent);`,
];

/** The ledger's SQL (`?` parameters) as PostgreSQL takes it (`$1`, `$2`, …); a `?` inside a quoted string stays. */
export function postgresSql(sql: string): string {
  let n = 0;
  let quoted = false;
  let out = "";
  for (const c of sql) {
    if (c === "'") quoted = !quoted;
    out += c === "?" && !quoted ? `$${++n}` : c;
  }
  return out;
}

/** A connection URL with its password replaced, to be shown. */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== "") u.password = "***";
    return u.toString();
  } catch {
    return "(a PostgreSQL URL that does not parse)";
  }
}

/** The SQLSTATE classes of a server that does not answer as a ledger: connection, shutdown, resources, login, database. */
const UNAVAILABLE_CLASSES = new Set(["08", "57", "53", "28", "3D"]);

/**
 * Whether `e` is the server's refusal of one statement (a SQLSTATE outside {@link UNAVAILABLE_CLASSES}, e.g. a
 * unique key): the server answered, so it is not "unavailable".
 */
function refusedStatement(e: unknown): boolean {
  // The server's own errors carry a severity beside their SQLSTATE; a socket's (EPIPE, ECONNRESET) carry neither.
  const { code, severity } = (e ?? {}) as { code?: unknown; severity?: unknown };
  return (
    typeof severity === "string" &&
    typeof code === "string" &&
    /^[0-9A-Z]{5}$/.test(code) &&
    !UNAVAILABLE_CLASSES.has(code.slice(0, 2))
  );
}

/** A ledger in a PostgreSQL database. */
export class PostgresLedgerStore implements LedgerStore {
  private constructor(
    private readonly pool: Pool,
    readonly place: string,
  ) {}

  /**
   * Connects to the database at `url` (node-postgres' connection string: `postgresql://user:password@host/db`, or a
   * unix socket's folder as `?host=`) and migrates its schema. Throws {@link LedgerUnavailable} when it does not answer.
   */
  static async connect(
    url: string,
    options: { readonly connections?: number } = {},
  ): Promise<PostgresLedgerStore> {
    const pg = await import("pg");
    const pool = new pg.Pool({
      connectionString: url,
      max: options.connections ?? 4,
      connectionTimeoutMillis: 10_000,
      // Counts and times (BIGINT) and sums (NUMERIC) as numbers: every figure of the ledger fits a double exactly.
      types: {
        getTypeParser: ((oid: number, format?: "text" | "binary") =>
          oid === 20 || oid === 1700
            ? (v: string) => Number(v)
            : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
      },
    });
    // An idle connection the server dropped: the next call reconnects (or says the ledger does not answer).
    pool.on("error", () => undefined);
    const store = new PostgresLedgerStore(pool, `PostgreSQL ${shownUrl(url)}`);
    try {
      await store.migrate();
    } catch (e) {
      await pool.end().catch(() => undefined);
      throw e;
    }
    return store;
  }

  /** Brings the database to {@link PG_MIGRATIONS}' version, under the write lock (launchers may start together). */
  private async migrate(): Promise<void> {
    await this.write(async (q) => {
      await q.run("CREATE TABLE IF NOT EXISTS ledger_schema (version INTEGER NOT NULL)");
      const row = await q.get("SELECT version FROM ledger_schema");
      const version = row === undefined ? 0 : Number(row.version);
      if (row === undefined) await q.run("INSERT INTO ledger_schema (version) VALUES (0)");
      if (version > PG_MIGRATIONS.length) {
        throw new LedgerTooNew(
          `the ledger at ${this.place} has schema version ${version}, newer than this toolkit's ${PG_MIGRATIONS.length}; use the newer toolkit`,
        );
      }
      for (let v = version; v < PG_MIGRATIONS.length; v++) await q.run(PG_MIGRATIONS[v] ?? "");
      if (version < PG_MIGRATIONS.length)
        await q.run("UPDATE ledger_schema SET version = ?", [PG_MIGRATIONS.length]);
    });
  }

  /** Runs one query, on `client` or the pool; a driver's failure says where the ledger is. */
  private async query(client: Pool | PoolClient, sql: string, params: readonly SqlValue[]) {
    try {
      return await client.query(postgresSql(sql), [...params]);
    } catch (e) {
      throw refusedStatement(e)
        ? new LedgerStatementFailed(this.place, e)
        : new LedgerUnavailable(this.place, e);
    }
  }

  private queries(client: Pool | PoolClient): LedgerQueries {
    return {
      all: async (sql, params = []) => (await this.query(client, sql, params)).rows as Row[],
      get: async (sql, params = []) => (await this.query(client, sql, params)).rows[0] as Row | undefined,
      run: async (sql, params = []) => (await this.query(client, sql, params)).rowCount ?? 0,
    };
  }

  all(sql: string, params: readonly SqlValue[] = []): Promise<Row[]> {
    return this.queries(this.pool).all(sql, params);
  }

  get(sql: string, params: readonly SqlValue[] = []): Promise<Row | undefined> {
    return this.queries(this.pool).get(sql, params);
  }

  run(sql: string, params: readonly SqlValue[] = []): Promise<number> {
    return this.queries(this.pool).run(sql, params);
  }

  async write<T>(fn: (q: LedgerQueries) => Promise<T>, options: WriteOptions = {}): Promise<T> {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (e) {
      throw new LedgerUnavailable(this.place, e);
    }
    let broken: unknown;
    // A connection the server drops while it is ours fails its query (said below); its own error event is not thrown.
    const dropped = (e: Error) => {
      broken = e;
    };
    client.on("error", dropped);
    try {
      await this.query(client, "BEGIN", []);
      if (options.wait === false) {
        const got = await this.query(client, "SELECT pg_try_advisory_xact_lock(?) AS ok", [WRITE_LOCK]);
        if (got.rows[0]?.ok !== true)
          throw new Error(`the ledger at ${this.place} is busy (another launcher writes)`);
      } else {
        await this.query(client, "SELECT pg_advisory_xact_lock(?)", [WRITE_LOCK]);
      }
      const out = await fn(this.queries(client));
      await this.query(client, "COMMIT", []);
      return out;
    } catch (e) {
      if (e instanceof LedgerUnavailable) broken = e;
      await client.query("ROLLBACK").catch((x: unknown) => {
        broken = x;
      });
      throw e;
    } finally {
      // A connection that failed mid-transaction is not given to the next caller.
      client.off("error", dropped);
      client.release(broken instanceof Error ? broken : undefined);
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
