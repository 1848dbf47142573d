import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";

/**
 * Every process the front starts for one run (the Pulumi CLI, and through it the local Docker provider and the
 * policy pack) inherits this variable. Parents die before children, and an orphan is re-parented away from the
 * front, so the process tree cannot find them all; the mark in their environment can.
 */
export const RUN_MARK = "SANDBOX_FRONT_RUN";

/** A mark unique to this run of the front. */
export function newRunMark(): string {
  return `${process.pid}-${randomBytes(6).toString("hex")}`;
}

/** Pids of live processes whose environment holds `RUN_MARK=<mark>` (Linux /proc; none elsewhere). */
export function markedProcesses(mark: string): number[] {
  const needle = `${RUN_MARK}=${mark}`;
  const out: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return out;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${entry}/environ`, "latin1").split("\0");
      // A zombie has an empty environment and is reaped by its parent: it holds nothing.
      if (environ.includes(needle)) out.push(Number(entry));
    } catch {
      // gone already, or another user's process: not ours
    }
  }
  return out;
}

/** Sends `signal` to every marked process; returns the pids signalled. */
export function signalMarked(mark: string, signal: NodeJS.Signals): number[] {
  const pids = markedProcesses(mark);
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // it ended between the scan and the signal
    }
  }
  return pids;
}

/**
 * Ends what is left of a run: SIGTERM, a grace period, then SIGKILL for whatever still lives. Returns the pids that
 * had to be ended (empty when the engine took everything down itself, as it does after a clean cancel).
 */
export async function reapMarked(mark: string, graceMs = 2000): Promise<number[]> {
  const first = signalMarked(mark, "SIGTERM");
  if (first.length === 0) return [];
  for (let waited = 0; waited < graceMs && markedProcesses(mark).length > 0; waited += 100) {
    await new Promise((r) => setTimeout(r, 100));
  }
  signalMarked(mark, "SIGKILL");
  return first;
}

/** How the front reacts to Ctrl-C (and SIGTERM) while the engine runs an operation. */
export interface InterruptHandlers {
  /** First signal: ask the engine to cancel (the Automation API sends the CLI one SIGINT) and wait for it. */
  cancel: (signal: NodeJS.Signals) => void;
  /** Second signal: stop waiting; kill what is left and exit. */
  force: (signal: NodeJS.Signals) => Promise<void>;
}

/**
 * Installs the two-step handling of SIGINT and SIGTERM for the duration of an engine operation; returns the
 * function that removes it. `received` tells afterwards which signal (if any) arrived first.
 */
export class Interrupts {
  received: NodeJS.Signals | undefined;
  private count = 0;
  private readonly listener = (signal: NodeJS.Signals) => {
    this.count += 1;
    if (this.count === 1) {
      this.received = signal;
      this.handlers.cancel(signal);
    } else if (this.count === 2) {
      void this.handlers.force(signal);
    }
  };

  constructor(private readonly handlers: InterruptHandlers) {}

  install(): () => void {
    process.on("SIGINT", this.listener);
    process.on("SIGTERM", this.listener);
    return () => {
      process.removeListener("SIGINT", this.listener);
      process.removeListener("SIGTERM", this.listener);
    };
  }
}

/** The shell's exit code for a process ended by `signal`. */
export function signalExitCode(signal: NodeJS.Signals): number {
  return signal === "SIGTERM" ? 143 : 130;
}
