/**
 * The gate of a pre-started pool member (runtime/pool.ts): process 1's child in a member started before any task
 * claims it. It is the image's own shell sourcing a FIFO in the member's job folder, so it runs no task code and
 * blocks, holding no CPU, until the launcher writes the claim: a short script of the toolkit's own that `exec`s the
 * task's command (the cold launch's command line, its deadline wrapper included). The shell never returns to the
 * gate: a member serves one task.
 *
 * Why a FIFO in the job folder: only the launcher writes it (it is root's, readable by the task's group alone, and
 * nothing else runs in the member before the claim), it needs no network and no extra mount, and it can vanish
 * before the task starts. The pool opens the FIFO once the member starts; the claim unlinks it, then writes the
 * task's files and the script: the
 * task finds in its job folder only what was delivered for it, and no descriptor of the gate (a shell closes a
 * sourced file on exec).
 */
import { execFileSync } from "node:child_process";
import { closeSync, constants, lchownSync, openSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { parseUser } from "../components/model";

/** The gate's channel, in the member's job folder until the claim. */
export const GATE_FIFO = ".sandbox-gate";

/** Variables a POSIX shell sets for itself: a cold task has them only when its template sets them. */
const SHELL_VARIABLES = ["SHLVL", "PWD", "OLDPWD", "_"] as const;

/** A word for the shell, quoted so that it stays one word whatever it holds. */
export function shellWord(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The member's entrypoint: the image's shell, reading the claim from the FIFO in the job folder. */
export function gateEntrypoint(containerPath: string): string[] {
  return ["sh", "-c", `. ${shellWord(`${containerPath}/${GATE_FIFO}`)}`];
}

/**
 * The claim: the script the gate runs. It restores the environment a cold launch starts with (the shell's own
 * variables removed, the template's kept) and replaces the shell with the task's command, so the task's process is
 * the one a cold launch starts, under the same process 1.
 */
export function claimScript(command: readonly string[], env: Readonly<Record<string, string>>): string {
  if (command.length === 0) throw new Error("a pool member's claim needs a command");
  // The engine refuses such a word in a cold launch; the shell would cut it short: refused the same way here.
  const cut = command.findIndex((w) => w.includes("\0"));
  if (cut >= 0) throw new Error(`command word ${cut + 1} holds a NUL byte, which no command line can carry`);
  const lines = [`unset ${SHELL_VARIABLES.join(" ")} 2>/dev/null`];
  for (const name of SHELL_VARIABLES) {
    const value = env[name];
    if (value !== undefined) lines.push(`export ${name}=${shellWord(value)}`);
  }
  lines.push(`exec ${command.map(shellWord).join(" ")}`);
  return `${lines.join("\n")}\n`;
}

/**
 * Makes the gate's FIFO in a member's job folder (before the member starts): readable by the task's group, written
 * by the launcher alone (root's when the launcher is root, as job files are the task's only then).
 */
export function makeGate(jobDir: string, user: string): string {
  const fifo = join(jobDir, GATE_FIFO);
  execFileSync("mkfifo", ["-m", "0640", fifo], { stdio: "ignore" });
  if (process.getuid?.() === 0) lchownSync(fifo, 0, parseUser(user).gid);
  return fifo;
}

/** The gate is not there to take a claim: its shell ended (no `sh` in the image, or the member was stopped). */
export class GateClosed extends Error {}

/**
 * Opens a member's gate for its claim; the claim {@link Gate.detach}es the FIFO from the job folder, writes the task's
 * files, then {@link Gate.send}s. `running` says whether the member still runs (asked while its shell is not yet reading).
 */
export async function openGate(jobDir: string, running: () => Promise<boolean>): Promise<Gate> {
  const fifo = join(jobDir, GATE_FIFO);
  // A non-blocking open succeeds only once the gate reads (ENXIO before): it never blocks this process.
  let probe: number | undefined;
  for (let attempt = 0; probe === undefined; attempt++) {
    try {
      probe = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== "ENXIO") throw new GateClosed(`the gate's channel ${fifo} is gone (${code})`);
      if (attempt % 20 === 19 && !(await running())) throw new GateClosed("the member's gate has ended");
      if (attempt > 3000) throw new GateClosed("the member's gate did not open its channel");
      await new Promise((r) => setTimeout(r, 5));
    }
  }
  try {
    // Node's promise file API, loaded by the claim that uses it: loaded with this module it costs every task verb of
    // the front a few milliseconds at start (it brings readline's interface along), and only a pooled claim needs it.
    const { open } = await import("node:fs/promises");
    // With a reader there, a blocking open returns at once; writes through it then wait for the reader, not fail.
    return new Gate(await open(fifo, constants.O_WRONLY), fifo);
  } finally {
    closeSync(probe);
  }
}

/** An opened gate: one claim goes through it. */
export class Gate {
  constructor(
    private readonly handle: import("node:fs/promises").FileHandle,
    private readonly fifo: string,
  ) {}

  /**
   * Removes the channel from the job folder (the task never sees it; the open ends stay open), before the task's
   * files are written: a file of the task's named like it is then a plain file.
   */
  detach(): void {
    try {
      unlinkSync(this.fifo);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    }
  }

  /** Writes the claim and closes the channel: the member's shell runs it to its `exec`. */
  async send(script: string): Promise<void> {
    this.detach();
    try {
      await this.handle.writeFile(script);
    } finally {
      await this.handle.close();
    }
  }

  /** Closes the channel without a claim: the gate's shell reads nothing and ends. */
  async abandon(): Promise<void> {
    await this.handle.close().catch(() => undefined);
  }
}
