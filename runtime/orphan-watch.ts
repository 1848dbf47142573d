/**
 * The watchdog: what stops a task at its deadline when the launcher that started it is gone. The in-container
 * deadline runs as the task's own user (the task can kill it), and the launcher's own kill dies with the launcher;
 * the watchdog is a small process of its own, detached from the launcher, that reads the project's watch folder
 * (`<job root>/.sandbox-deadlines/<task id>.json`, one file per running task, written by the launcher before the
 * task's container starts and removed when the launcher is done with it) and kills each container through the
 * engine's socket once its deadline has passed. It exits when the folder is empty and the launcher that started it
 * is gone; a new launcher's watchdog takes over what an old one left, and reconciliation (runtime/ledger/reconcile.ts)
 * charges and removes what it stopped.
 *
 * This file imports only Node's own modules: it is also the watchdog's program, run by Node as it is (its types
 * stripped) in a checkout, and compiled in the package.
 */
import { readdirSync, readFileSync, rmdirSync, rmSync } from "node:fs";
import { request } from "node:http";
import { hostname } from "node:os";
import { dirname, join } from "node:path";

/** How long past its deadline the watchdog waits for a launcher that still lives to act first, in ms. */
export const LIVE_LAUNCHER_MARGIN_MS = 5_000;

/** The longest the watchdog sleeps between two reads of its folder, in ms. */
const POLL_MS = 1_000;

/** The process that admitted a run or started a task: its host, its id, and its start (which survives id reuse). */
export interface ProcessOwner {
  readonly host: string;
  readonly pid: number;
  /** {@link processStart} of the process when it was recorded; null where the system does not tell. */
  readonly start: string | null;
}

/** One task the watchdog watches. */
export interface WatchEntry {
  /** The ledger's run id (the task's id). */
  readonly runId: string;
  /** The container's engine id: unlike its name, never given to another container. */
  readonly container: string;
  /** Not before this absolute time (ms since the epoch): the run's maximum as its launcher counts it. */
  readonly deadline: number;
  /** Nor before this long after the container's start on the engine's own clock: the template's deadline, in ms. */
  readonly timeoutMs: number;
  /** The template's deadline and the launcher's grace, in ms: the launcher's own kill comes this long after start. */
  readonly maxMs: number;
  /** The task's job folder (reconciliation removes it). */
  readonly jobDir: string;
  /** The engine's unix socket, as the launcher reached it. */
  readonly socket: string;
  /** The launcher that started the task. */
  readonly owner: ProcessOwner;
}

/** The project's watch folder: beside the job folders, never inside one (a task cannot reach it). */
export function watchDir(jobRoot: string): string {
  return join(jobRoot, ".sandbox-deadlines");
}

/** The file of a task's entry in the watch folder. */
export function watchFile(jobRoot: string, id: string): string {
  return join(watchDir(jobRoot), `${id}.json`);
}

/** Removes an entry's file, and the watch folder with it when it is left empty (no trace in the job root). */
export function dropEntry(file: string): void {
  rmSync(file, { force: true });
  try {
    rmdirSync(dirname(file));
  } catch {
    // Not empty (other tasks are watched), or already gone.
  }
}

/**
 * The start of process `pid` as this machine's kernel knows it: the boot's id and the process's start time (field
 * 22 of `/proc/<pid>/stat`, in clock ticks since boot). A process that later gets the same id has another start.
 * Undefined where `/proc` does not tell (another system, or the process is gone).
 */
export function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command's name (field 2) is in parentheses and may hold spaces and parentheses: count from the last ")".
    const start = stat
      .slice(stat.lastIndexOf(")") + 2)
      .split(" ")
      .at(22 - 3);
    const boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    return start !== undefined && /^\d+$/.test(start) ? `${boot}:${start}` : undefined;
  } catch {
    return undefined;
  }
}

let self: ProcessOwner | undefined;

/** This process, as a run's or an entry's owner. */
export function thisProcess(): ProcessOwner {
  self ??= { host: hostname(), pid: process.pid, start: processStart(process.pid) ?? null };
  return self;
}

/**
 * Whether the owner still lives: false when its process is gone from this machine or its id now belongs to another
 * process (another start); true while it lives, and when it cannot be told (another host, a start not recorded or
 * not readable).
 */
export function ownerAlive(owner: ProcessOwner): boolean {
  if (owner.host !== hostname()) return true;
  if (!Number.isInteger(owner.pid) || owner.pid <= 0) return false;
  try {
    process.kill(owner.pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  if (owner.start === null) return true;
  const now = processStart(owner.pid);
  return now === undefined ? true : now === owner.start;
}

/**
 * When the watchdog may kill an entry's container: not before the entry's deadline, nor before the template's
 * deadline from the container's start on the engine (when known). While the launcher lives, not before its own kill
 * (its deadline and grace from the start) and a margin: the launcher acts first, the watchdog only when it did not.
 */
export function killTime(entry: WatchEntry, startedAt: number | undefined, launcherAlive: boolean): number {
  const fromStart = launcherAlive ? entry.maxMs : entry.timeoutMs;
  const engine = startedAt === undefined ? entry.deadline : startedAt + fromStart;
  return Math.max(entry.deadline, engine) + (launcherAlive ? LIVE_LAUNCHER_MARGIN_MS : 0);
}

/** One call to the engine's API over its unix socket: the status and the body, or undefined when it is not there. */
function engineCall(
  socket: string,
  method: string,
  path: string,
): Promise<{ status: number; body: string } | undefined> {
  return new Promise((resolve) => {
    const req = request({ socketPath: socket, method, path, timeout: 10_000 }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => {
        body += d;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      res.on("error", () => resolve(undefined));
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(undefined));
    req.end();
  });
}

/** A container's state: running or not, and its start on the engine's clock. "gone" when the engine has none. */
async function containerState(
  entry: WatchEntry,
): Promise<{ running: boolean; startedAt: number | undefined } | "gone" | undefined> {
  const r = await engineCall(entry.socket, "GET", `/containers/${encodeURIComponent(entry.container)}/json`);
  if (r === undefined) return undefined;
  if (r.status === 404) return "gone";
  if (r.status !== 200) return undefined;
  const state = (JSON.parse(r.body) as { State?: { Running?: boolean; StartedAt?: string } }).State;
  const started = Date.parse(state?.StartedAt ?? "");
  return { running: state?.Running === true, startedAt: started > 0 ? started : undefined };
}

/** The entries of a watch folder (a file that cannot be read as one is removed: it would be watched forever). */
export function readEntries(dir: string): { file: string; entry: WatchEntry }[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: { file: string; entry: WatchEntry }[] = [];
  for (const name of names.filter((n) => n.endsWith(".json") && !n.startsWith("."))) {
    const file = join(dir, name);
    try {
      const e = JSON.parse(readFileSync(file, "utf8")) as WatchEntry;
      if (typeof e.container !== "string" || typeof e.deadline !== "number" || typeof e.socket !== "string")
        throw new Error("not an entry");
      out.push({ file, entry: e });
    } catch {
      dropEntry(file);
    }
  }
  return out;
}

/**
 * One pass over the folder: kills every container whose time has come and drops the entries of containers that no
 * longer run. Returns the entries left and when the next one is due.
 */
export async function watchOnce(dir: string): Promise<{ left: number; next: number }> {
  const entries = readEntries(dir);
  let next = Date.now() + POLL_MS;
  let left = 0;
  for (const { file, entry } of entries) {
    const alive = ownerAlive(entry.owner);
    const earliest = killTime(entry, undefined, alive);
    left++;
    // A live launcher's task is looked at only once its time may have come; a dead one's on every pass, so that one
    // removed meanwhile (reconciled, the off switch) is let go of at once.
    if (alive && Date.now() < earliest) {
      next = Math.min(next, earliest);
      continue;
    }
    const state = await containerState(entry);
    if (state === undefined) continue;
    if (state === "gone" || !state.running) {
      dropEntry(file);
      left--;
      continue;
    }
    const at = killTime(entry, state.startedAt, alive);
    if (Date.now() < at) {
      next = Math.min(next, at);
      continue;
    }
    const kill = `/containers/${encodeURIComponent(entry.container)}/kill?signal=SIGKILL`;
    const r = await engineCall(entry.socket, "POST", kill);
    // 404: gone; 409: no longer running. Anything else is tried again on the next pass.
    if (r !== undefined && [204, 404, 409].includes(r.status)) {
      dropEntry(file);
      left--;
    }
  }
  return { left, next };
}

/** Watches `dir` until it is empty and `launcher` (the process that started the watchdog) is gone. */
export async function watch(dir: string, launcher: ProcessOwner): Promise<void> {
  for (;;) {
    let left = 1;
    let next = Date.now() + POLL_MS;
    try {
      ({ left, next } = await watchOnce(dir));
    } catch {
      // A pass that failed (the folder or the engine in an odd state) is tried again.
    }
    if (left === 0 && !ownerAlive(launcher)) return;
    await new Promise((r) => setTimeout(r, Math.max(10, Math.min(POLL_MS, next - Date.now()))));
  }
}

/** The argument that makes this file the watchdog's program: `<node> <this file> --sandbox-watchdog <dir> <pid> <start>`. */
export const WATCHDOG_FLAG = "--sandbox-watchdog";

if (/orphan-watch\.(c?js|ts)$/.test(process.argv[1] ?? "") && process.argv[2] === WATCHDOG_FLAG) {
  const [dir = "", pid = "0", start = ""] = process.argv.slice(3);
  void watch(dir, { host: hostname(), pid: Number(pid), start: start === "" ? null : start }).then(() =>
    process.exit(0),
  );
}
