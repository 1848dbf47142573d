/**
 * A local PostgreSQL server for a shared ledger, started by the toolkit on this machine: Debian's `postgresql` package
 * (toolchain/postgres.sh installs it), a data folder of its own, a unix socket in that folder only (no TCP port, the
 * socket's mode 0700), and its own user `sandbox`. Run as root, the server runs as the package's `postgres` user
 * (PostgreSQL refuses root). Stopped by {@link LocalPostgres.stop}; started again on the same folder it keeps its data.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";

/** The URL of database `database` on the local server whose folder is `dir`. */
export function localPostgresUrl(dir: string, database = "postgres"): string {
  return `postgresql:///${database}?host=${encodeURIComponent(dir)}&user=sandbox`;
}

/** The folder of the local server a ledger URL names (its socket's folder), or undefined when it names another. */
export function localPostgresDirOf(url: string): string | undefined {
  try {
    const u = new URL(url);
    return u.hostname === "" ? (u.searchParams.get("host") ?? undefined) : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the local server of folder `dir` runs. */
export function localPostgresRunning(dir: string): boolean {
  return running(join(dir, "data"));
}

/** Stops the local server of folder `dir` if it runs; true when it did. */
export function stopLocalPostgres(dir: string): boolean {
  const bin = postgresBin();
  const data = join(dir, "data");
  if (bin === undefined || !running(data)) return false;
  run(bin, "pg_ctl", ["-D", data, "-w", "-t", "60", "-m", "fast", "stop"], process.getuid?.() === 0);
  return true;
}

/** Makes database `name` (letters, digits, `_`) on the server at `url` when it has none of that name. */
export async function ensureDatabase(url: string, name: string): Promise<void> {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name))
    throw new Error(`local PostgreSQL: ${JSON.stringify(name)} is not a database name this toolkit makes`);
  const pg = await import("pg");
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const there = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (there.rowCount === 0) await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
}

/** A running local server. */
export interface LocalPostgres {
  /** The connection URL of its database (the socket's folder as `host`). */
  readonly url: string;
  /** Its folder: the data, the socket and the log. */
  readonly dir: string;
  /** Stops the server (fast shutdown: open transactions are rolled back). */
  stop(): Promise<void>;
}

/** The longest path of a unix socket the system takes (its `sun_path`, less the name PostgreSQL adds). */
const SOCKET_DIR_MAX = 107 - "/.s.PGSQL.5432".length;

/** The folder of PostgreSQL's server programs (the newest installed version), or undefined. */
export function postgresBin(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a));
  for (const v of versions) {
    const bin = join(root, v, "bin");
    if (["postgres", "initdb", "pg_ctl"].every((p) => existsSync(join(bin, p)))) return bin;
  }
  return undefined;
}

/** Runs a server program, as the `postgres` user when this process is root. Throws with its output on failure. */
function run(bin: string, program: string, args: readonly string[], asPostgres: boolean): void {
  const argv = asPostgres
    ? ["runuser", "-u", "postgres", "--", join(bin, program), ...args]
    : [join(bin, program), ...args];
  const r = spawnSync(argv[0] as string, argv.slice(1), { encoding: "utf8", timeout: 120_000 });
  if (r.status !== 0) {
    throw new Error(
      `local PostgreSQL: ${program} ${args.join(" ")} failed (${r.error?.message ?? `exit ${String(r.status)}`}): ${`${r.stderr}${r.stdout}`.trim().slice(-2000)}${asPostgres ? " (run as root, the server runs as the postgres user, which must be able to reach every folder above its own)" : ""}`,
    );
  }
}

/** Whether the server of `data` runs (its postmaster.pid names a live process). */
function running(data: string): boolean {
  const pidFile = join(data, "postmaster.pid");
  if (!existsSync(pidFile)) return false;
  const pid = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts (creating when needed) the local server in `dir`, or finds it running there. `fast` skips the data's sync
 * to disk at creation (for tests).
 */
export async function startLocalPostgres(
  dir: string,
  options: { fast?: boolean } = {},
): Promise<LocalPostgres> {
  const bin = postgresBin();
  if (bin === undefined) {
    throw new Error(
      "local PostgreSQL: its server is not installed (no /usr/lib/postgresql/<version>/bin/postgres); run toolchain/postgres.sh, or on Debian apt-get install -y postgresql",
    );
  }
  if (dir.length > SOCKET_DIR_MAX) {
    throw new Error(
      `local PostgreSQL: the folder ${dir} is too long for a unix socket (at most ${SOCKET_DIR_MAX} characters); choose a shorter one`,
    );
  }
  // Only the server's own folder is closed (0700): the folders above it stay as the umask makes them, for the server's
  // user to reach it.
  mkdirSync(dirname(dir), { recursive: true });
  if (!existsSync(dir)) mkdirSync(dir, { mode: 0o700 });
  const asPostgres = process.getuid?.() === 0;
  if (asPostgres) {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
    if (statSync(dir).uid !== uid) chownSync(dir, uid, gid);
  }
  const data = join(dir, "data");
  if (!existsSync(join(data, "PG_VERSION"))) {
    run(
      bin,
      "initdb",
      [
        "-D",
        data,
        "-U",
        "sandbox",
        "-A",
        "trust",
        "-E",
        "UTF8",
        "--no-instructions",
        ...(options.fast ? ["--no-sync"] : []),
      ],
      asPostgres,
    );
  }
  if (!running(data)) {
    const settings = `-c listen_addresses='' -k ${dir} -c unix_socket_permissions=0700`;
    run(
      bin,
      "pg_ctl",
      ["-D", data, "-l", join(dir, "postgres.log"), "-w", "-t", "60", "-o", settings, "start"],
      asPostgres,
    );
  }
  return {
    url: localPostgresUrl(dir),
    dir,
    stop: async () => {
      stopLocalPostgres(dir);
    },
  };
}
