/**
 * `destroy`, the off switch, with the Pulumi CLI driven directly: the same `pulumi destroy` the Automation API runs,
 * with the same environment, event log and Ctrl-C handling (cli/engine-run.ts), but without loading the Pulumi SDK
 * into the front, which costs about a second before the engine starts. Destroy never runs the program, so the SDK's
 * in-process program server has nothing to serve.
 *
 * Taken only on the plain path: a local file backend that holds the stack's checkpoint, with nothing left to recover
 * (no torn state file, no lock of a dead run, no pending operation). Anything else (another backend, a stack never
 * created here, a run to recover) goes through the Automation API (cli/engine.ts), which selects the stack and
 * recovers it first.
 */
import { spawn } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { EngineEvent } from "@pulumi/pulumi/automation";
import { pulumiHome, type ToolchainReport } from "../toolchain/pulumi";
import { engineEnv, engineWorkDir } from "./engine-env";
import { providerNote, type StackVerbOptions, withEngineRun } from "./engine-run";
import { PULUMI_PROJECT } from "./identity";
import { describeChanges } from "./output";
import { pendingOperations, staleLocks, tornAttrs } from "./recover";

/** Where the file backend keeps the checkpoint of `stack` (the project-scoped layout, then the legacy one). */
function checkpointOf(stateDir: string, stack: string): string | undefined {
  const stacks = join(stateDir, ".pulumi", "stacks");
  return [join(stacks, PULUMI_PROJECT, `${stack}.json`), join(stacks, `${stack}.json`)].find((f) =>
    existsSync(f),
  );
}

/** True when `destroy` of `stack` on the file backend at `stateDir` can run directly (see the module's note). */
export function directDestroyable(stateDir: string, stack: string): boolean {
  if (stack.includes("/") || checkpointOf(stateDir, stack) === undefined) return false;
  try {
    return (
      tornAttrs(stateDir, PULUMI_PROJECT, stack).length === 0 &&
      staleLocks(stateDir, PULUMI_PROJECT, stack).length === 0 &&
      pendingOperations(stateDir, PULUMI_PROJECT, stack).length === 0
    );
  } catch {
    // A checkpoint that does not parse: the Automation API's path reports it.
    return false;
  }
}

/** Reads the engine's event log (one JSON event a line) as the engine appends to it. */
class EventTail {
  private fd: number | undefined;
  private offset = 0;
  private partial = "";
  private done = false;
  private readonly buffer = Buffer.alloc(1 << 16);

  constructor(
    private readonly path: string,
    private readonly onEvent: (event: EngineEvent) => void,
  ) {}

  /** Reads what was appended since the last call and hands each whole line's event on. */
  read(): void {
    if (this.done) return;
    if (this.fd === undefined) {
      if (!existsSync(this.path)) return;
      this.fd = openSync(this.path, "r");
    }
    for (;;) {
      const n = readSync(this.fd, this.buffer, 0, this.buffer.length, this.offset);
      if (n <= 0) break;
      this.offset += n;
      const lines = (this.partial + this.buffer.toString("utf8", 0, n)).split("\n");
      this.partial = lines.pop() ?? "";
      for (const line of lines) this.line(line);
    }
  }

  /** Reads the rest, the last line included, and closes the log. Safe to call twice. */
  finish(): void {
    if (this.done) return;
    this.read();
    this.done = true;
    if (this.partial.trim() !== "") this.line(this.partial);
    this.partial = "";
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private line(line: string): void {
    if (line.trim() === "") return;
    let event: EngineEvent;
    try {
      event = JSON.parse(line) as EngineEvent;
    } catch {
      return; // a line cut by a killed engine
    }
    this.onEvent(event);
  }
}

/** The most kept of each of the CLI's streams for the failure message (its end holds the `error:` lines). */
const KEEP = 1 << 20;

/**
 * Runs `destroy` of `stackName` with the CLI directly when {@link directDestroyable}; returns its exit code, or
 * undefined when it did not run (the caller then runs it through the Automation API).
 */
export async function directDestroy(
  stackName: string,
  root: string,
  toolchain: ToolchainReport,
  options: StackVerbOptions,
): Promise<number | undefined> {
  const backend = engineEnv(root, options.env ?? process.env).PULUMI_BACKEND_URL ?? "";
  const cli = toolchain.pulumi?.path;
  if (cli === undefined || !backend.startsWith("file://")) return undefined;
  if (!directDestroyable(backend.slice("file://".length), stackName)) return undefined;
  const rep = options.reporter;
  return withEngineRun("destroy", stackName, root, toolchain, options, async (run) => {
    const { files } = run;
    providerNote(rep, toolchain, files);
    if (run.signal.aborted) throw new Error("cancelled before the engine started");
    const logDir = mkdtempSync(join(tmpdir(), "sandbox-destroy-"));
    const eventLog = join(logDir, "events.jsonl");
    let changes: Record<string, number> = {};
    const tail = new EventTail(eventLog, (event) => {
      run.watch.onEvent(event);
      if (event.summaryEvent !== undefined) changes = { ...event.summaryEvent.resourceChanges };
    });
    // The CLI in a session of its own, as the Automation API runs it (see cli/engine-session/bin/pulumi).
    const session = join(__dirname, "engine-session", "bin", "pulumi");
    const args = ["destroy", "--yes", "--skip-preview", "--non-interactive", "--stack", stackName];
    try {
      const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>(
        (resolve, reject) => {
          const child = spawn(session, [...args, "--event-log", eventLog], {
            cwd: engineWorkDir(root, stackName, options.workDir, files),
            env: {
              ...process.env,
              ...run.engineVars,
              PULUMI_HOME: pulumiHome(root, run.env),
              PULUMI_AUTOMATION_API: "true",
              // What the Automation API sets too: it turns on the CLI's `--event-log`.
              PULUMI_DEBUG_COMMANDS: "true",
              SANDBOX_PULUMI_CLI: cli,
              PATH: `${dirname(session)}:${run.engineVars.PATH}`,
            },
            stdio: ["ignore", "pipe", "pipe"],
          });
          let out = "";
          let err = "";
          child.stdout.setEncoding("utf8").on("data", (d: string) => {
            rep.engine(d);
            out = (out + d).slice(-KEEP);
          });
          child.stderr.setEncoding("utf8").on("data", (d: string) => {
            err = (err + d).slice(-KEEP);
          });
          const cancel = () => child.kill("SIGINT");
          run.signal.addEventListener("abort", cancel, { once: true });
          const poll = setInterval(() => tail.read(), 100);
          child.on("error", (e) => {
            clearInterval(poll);
            reject(e);
          });
          child.on("close", (status, signal) => {
            clearInterval(poll);
            run.signal.removeEventListener("abort", cancel);
            resolve({ code: status ?? (signal === null ? -2 : 128), stdout: out, stderr: err });
          });
        },
      );
      tail.finish();
      if (code !== 0) {
        // The Automation API's wording of a failed command, which the failure report reads (cli/failure.ts).
        throw new Error(
          `code: ${code}\n stdout: ${stdout}\n stderr: ${stderr}\n command: pulumi ${args.join(" ")}`,
        );
      }
      return { changes, text: `${stackName} destroyed: ${describeChanges(changes, false)}` };
    } finally {
      tail.finish();
      rmSync(logDir, { recursive: true, force: true });
    }
  });
}
