/**
 * Where a ledger keeps its rows: a store that answers SQL (one dialect: `?` parameters, `ON CONFLICT`, `RETURNING`,
 * typed `CAST(? AS TEXT)` where a parameter may be null) and runs writes as transactions that the writers of one
 * ledger take in turn, in this process and in every other. The ledger's arithmetic (runtime/ledger/index.ts) is
 * written once above it. SQLite, one file per project per machine, is the embedded default.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { DatabaseSync } from "node:sqlite";
import type { Row } from "./records";
import { migrateLedger } from "./schema";

export { LedgerStatementFailed, LedgerTooNew, LedgerUnavailable } from "./errors";

/** A value a query takes. */
export type SqlValue = string | number | null;

/** Queries, inside a write transaction or outside one. */
export interface LedgerQueries {
  /** Every row the query returns. */
  all(sql: string, params?: readonly SqlValue[]): Promise<Row[]>;
  /** The first row, or undefined. */
  get(sql: string, params?: readonly SqlValue[]): Promise<Row | undefined>;
  /** Runs a statement; returns how many rows it changed. */
  run(sql: string, params?: readonly SqlValue[]): Promise<number>;
}

/** Options of {@link LedgerStore.write}. */
export interface WriteOptions {
  /**
   * False: fail at once when another process holds the ledger's write lock, instead of waiting for it (a launcher's
   * meter, whose timers must keep running). Defaults to true.
   */
  readonly wait?: boolean;
}

/** A ledger's store. */
export interface LedgerStore extends LedgerQueries {
  /** Where it is, for messages: a file, or a server without its password. */
  readonly place: string;
  /**
   * Runs `fn` in one write transaction: committed when it returns, rolled back when it throws. Writers of one store
   * take turns, so what `fn` reads stays true until it commits.
   */
  write<T>(fn: (q: LedgerQueries) => Promise<T>, options?: WriteOptions): Promise<T>;
  close(): Promise<void>;
}

/** How long a write waits for another process's lock on a SQLite ledger before it fails (a blocking wait). */
const BUSY_TIMEOUT_MS = 30_000;

/** The embedded store: one SQLite file (Node's built-in `node:sqlite`, WAL mode), schema versioned. */
export class SqliteLedgerStore implements LedgerStore {
  /** The writes of this process, one after another (the connection holds one transaction at a time). */
  private turn: Promise<unknown> = Promise.resolve();
  /** Writes asked for and not yet settled. */
  private pending = 0;

  private constructor(
    private readonly db: DatabaseSync,
    readonly place: string,
  ) {}

  /** Opens (creating and migrating when needed) the ledger file at `file`. */
  static open(file: string): SqliteLedgerStore {
    mkdirSync(dirname(file), { recursive: true });
    const db = new DatabaseSync(file, { timeout: BUSY_TIMEOUT_MS });
    db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;");
    db.exec("BEGIN IMMEDIATE");
    try {
      migrateLedger(db, file);
      db.exec("COMMIT");
    } catch (e) {
      if (db.isTransaction) db.exec("ROLLBACK");
      db.close();
      throw e;
    }
    return new SqliteLedgerStore(db, file);
  }

  async all(sql: string, params: readonly SqlValue[] = []): Promise<Row[]> {
    return this.db.prepare(sql).all(...params) as Row[];
  }

  async get(sql: string, params: readonly SqlValue[] = []): Promise<Row | undefined> {
    return this.db.prepare(sql).get(...params) as Row | undefined;
  }

  async run(sql: string, params: readonly SqlValue[] = []): Promise<number> {
    return Number(this.db.prepare(sql).run(...params).changes);
  }

  write<T>(fn: (q: LedgerQueries) => Promise<T>, options: WriteOptions = {}): Promise<T> {
    this.pending++;
    const mine = this.turn.then(async () => {
      // BEGIN IMMEDIATE takes the file's write lock: writers of every process take turns. `node:sqlite` waits for it by
      // blocking the event loop, so a meter asks not to wait.
      if (options.wait === false) this.db.exec("PRAGMA busy_timeout = 0");
      try {
        this.db.exec("BEGIN IMMEDIATE");
      } finally {
        if (options.wait === false) this.db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
      }
      try {
        const out = await fn(this);
        this.db.exec("COMMIT");
        return out;
      } catch (e) {
        if (this.db.isTransaction) this.db.exec("ROLLBACK");
        throw e;
      }
    });
    this.turn = mine.then(
      () => this.pending--,
      () => this.pending--,
    );
    return mine;
  }

  /** Closes the file once the writes asked for have settled (at once when none is pending). */
  close(): Promise<void> {
    const shut = () => {
      if (this.db.isOpen) this.db.close();
    };
    if (this.pending === 0) {
      shut();
      return Promise.resolve();
    }
    return this.turn.then(shut);
  }
}
