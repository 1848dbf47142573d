// The engine tests' background processes: started with their output in a log file, stopped with SIGTERM (SIGKILL
// after a grace), and a free loopback port for each listener.
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";

export interface Proc {
  readonly name: string;
  readonly child: ChildProcess;
  readonly log: string;
  exited?: number | string | null;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr !== null ? addr.port : 0;
      srv.close(() => resolvePort(port));
    });
  });
}

/** The last `lines` lines of a log file. */
export function tail(file: string, lines = 40): string {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

/** Starts `bin args` in `dir`, its stdout and stderr appended to `<dir>/<name>.log`. */
export function startProcess(
  name: string,
  bin: string,
  args: string[],
  dir: string,
  env?: NodeJS.ProcessEnv,
): Proc {
  const log = join(dir, `${name}.log`);
  const fd = openSync(log, "a");
  const child = spawn(bin, args, {
    stdio: ["ignore", fd, fd],
    cwd: dir,
    ...(env === undefined ? {} : { env }),
  });
  closeSync(fd);
  const proc: Proc = { name, child, log };
  child.on("exit", (code, signal) => {
    proc.exited = code ?? signal;
  });
  return proc;
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
export async function stopProcess(p: Proc, graceMs = 10_000): Promise<void> {
  if (p.exited !== undefined || p.child.exitCode !== null) return;
  const gone = new Promise<void>((r) => p.child.once("exit", () => r()));
  p.child.kill("SIGTERM");
  const killed = await Promise.race([gone.then(() => true), sleep(graceMs).then(() => false)]);
  if (!killed) {
    p.child.kill("SIGKILL");
    await gone;
  }
}
