/**
 * The launcher's side of the watchdog (runtime/orphan-watch.ts): before a task's container starts, its entry is
 * written to the project's watch folder and a watchdog is made sure of, one per launcher process and watch folder,
 * detached from the launcher so that it outlives it; when the launcher is done with the task, the entry is removed.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type Dockerode from "dockerode";
import { dropEntry, thisProcess, WATCHDOG_FLAG, type WatchEntry, watchDir, watchFile } from "./orphan-watch";

/** The watchdog this process started for each watch folder, and the entries it wrote there and has not removed. */
const watchdogs = new Map<string, { child: ChildProcess | undefined; entries: number; spawnedAt: number }>();

/**
 * The watchdog's program: the compiled file in the package, the one the checkout front's bundle was built with (beside
 * the bundle, toolchain/front-bundle.cjs), else the TypeScript one (run as it is) in a checkout.
 */
function program(): { file: string; flags: string[] } {
  for (const name of ["orphan-watch.js", "orphan-watch.cjs"]) {
    const js = join(__dirname, name);
    if (existsSync(js)) return { file: js, flags: [] };
  }
  return { file: join(__dirname, "orphan-watch.ts"), flags: ["--experimental-strip-types", "--no-warnings"] };
}

/** The unix socket a Docker client talks to (the watchdog reaches the same engine), or undefined for another kind. */
function socketOf(docker: Dockerode): string | undefined {
  const socket = (docker.modem as { socketPath?: unknown }).socketPath;
  return typeof socket === "string" && socket !== "" ? socket : undefined;
}

/** Starts the watchdog of `dir` unless this process's is running. */
function ensureWatchdog(dir: string): void {
  const w = watchdogs.get(dir) ?? { child: undefined, entries: 0, spawnedAt: 0 };
  watchdogs.set(dir, w);
  if (w.child !== undefined && w.child.exitCode === null && w.child.signalCode === null) return;
  const { file, flags } = program();
  const me = thisProcess();
  const child = spawn(
    process.execPath,
    [...flags, file, WATCHDOG_FLAG, dir, String(me.pid), me.start ?? ""],
    { detached: true, stdio: "ignore" },
  );
  child.unref();
  child.on("error", () => undefined);
  child.on("exit", () => {
    if (w.child !== child) return;
    w.child = undefined;
    // Ended while tasks of this launcher still run (it was killed): started again, at most every few seconds.
    if (w.entries > 0 && Date.now() - w.spawnedAt > 5_000) ensureWatchdog(dir);
  });
  w.child = child;
  w.spawnedAt = Date.now();
}

/** What the watchdog needs of one task. */
export interface WatchedTask {
  readonly id: string;
  readonly container: Dockerode.Container;
  readonly jobDir: string;
  /**
   * The run's deadline as an absolute time (ms since the epoch): its maximum (the template's deadline and the
   * launcher's grace) from before its admission, so that what it runs stays within what it was admitted for.
   */
  readonly deadline: number;
  /** The template's deadline, in seconds from the container's start. */
  readonly timeoutSeconds: number;
  /** The launcher's own deadline (the template's and its grace), in seconds from the container's start. */
  readonly maxSeconds: number;
}

/**
 * Hands a task about to start to the watchdog: writes its entry (atomically, by rename) under `jobRoot` and makes
 * sure a watchdog runs. Returns what removes the entry once the launcher is done with the task. A client that does
 * not talk to a unix socket gets no watchdog (the toolkit drives the local engine only).
 */
export function watchTask(docker: Dockerode, jobRoot: string, task: WatchedTask): () => void {
  const socket = socketOf(docker);
  if (socket === undefined) return () => undefined;
  const dir = watchDir(jobRoot);
  const entry: WatchEntry = {
    runId: task.id,
    container: task.container.id,
    deadline: task.deadline,
    timeoutMs: task.timeoutSeconds * 1000,
    maxMs: task.maxSeconds * 1000,
    jobDir: task.jobDir,
    socket,
    owner: thisProcess(),
  };
  const file = watchFile(jobRoot, task.id);
  const tmp = join(dir, `.${task.id}.${process.pid}.tmp`);
  // The folder is removed when it is left empty (by another launcher, or the watchdog): made again if it just was.
  for (let attempt = 0; ; attempt++) {
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      writeFileSync(tmp, `${JSON.stringify(entry)}\n`, { mode: 0o600 });
      renameSync(tmp, file);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT" || attempt >= 5) throw e;
    }
  }
  ensureWatchdog(dir);
  const w = watchdogs.get(dir);
  if (w !== undefined) w.entries++;
  let removed = false;
  return () => {
    if (removed) return;
    removed = true;
    dropEntry(file);
    if (w !== undefined) w.entries--;
  };
}
