/**
 * One engine run of a stack verb, whatever drives the engine (the Automation API in cli/engine.ts, or the CLI
 * directly in cli/destroy.ts): the run's mark on every process it starts, the two-step Ctrl-C, the structured
 * events read into one report, one message per failure, and no engine process left behind. Needs none of the SDK.
 */
import { dirname } from "node:path";
import { type ToolchainReport, type ToolkitFiles, toolkitFiles } from "../toolchain/pulumi";
import { engineEnv } from "./engine-env";
import { type Drift, EngineWatch } from "./events";
import { describeFailure } from "./failure";
import { PULUMI_PROJECT } from "./identity";
import type { Reporter } from "./output";
import { removeStaleLocks } from "./recover";
import { Interrupts, newRunMark, RUN_MARK, reapMarked, signalExitCode, signalMarked } from "./signals";

/** The stack verbs the front runs through the engine. */
export type StackVerb = "preview" | "up" | "refresh" | "destroy";

export interface StackVerbOptions {
  readonly reporter: Reporter;
  /** A work folder other than the root: see stateOnlyWorkDir (cli/engine-env.ts). */
  readonly workDir?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Where the toolkit's own files are (the pack); by default the running toolkit's (see toolkitFiles). */
  readonly files?: ToolkitFiles;
  /** `preview --diff`: each step's changed keys and reason in the result's text. */
  readonly diff?: boolean;
}

/** What an operation sees of the run it belongs to. */
export interface EngineRun {
  readonly verb: StackVerb;
  readonly stack: string;
  readonly env: NodeJS.ProcessEnv;
  readonly files: ToolkitFiles;
  /** Aborted by the first Ctrl-C: the operation asks the engine to cancel (one SIGINT to the CLI). */
  readonly signal: AbortSignal;
  /** Reads the engine's structured events; give it every event. */
  readonly watch: EngineWatch;
  /** The file backend's folder, when the backend is a local one. */
  readonly fileState: string | undefined;
  /** The environment the CLI runs with: the engine's, the run's mark, the toolkit's plugins first on PATH. */
  readonly engineVars: Record<string, string>;
}

/** What an operation that succeeded reports: its changes, its text for a person and any further JSON fields. */
export interface Outcome {
  readonly changes: Record<string, number>;
  readonly text: string;
  readonly extra?: Record<string, unknown>;
}

function driftLines(drift: readonly Drift[], verb: StackVerb): string[] {
  const after: Record<StackVerb, string> = {
    up: "re-created",
    preview: "`up` re-creates it",
    refresh: "dropped from the state; `up` re-creates it",
    destroy: "",
  };
  return [...drift]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((d) =>
      d.change === "gone"
        ? `  drift: ${d.name} (${d.type}) was removed outside the stack; ${after[verb]}`
        : `  drift: ${d.name} (${d.type}) was changed outside the stack (${d.fields.join(", ")})${verb === "up" ? "; put back" : ""}`,
    );
}

/** The note naming the Docker provider the engine will use (a person's output only). */
export function providerNote(rep: Reporter, toolchain: ToolchainReport, files: ToolkitFiles): void {
  const docker = toolchain.plugins.docker;
  if (docker === undefined || rep.json) return;
  rep.note(
    `docker provider: ${toolchain.pathPrepend.length > 0 ? `the toolkit's local provider (${files.installed ? "the package's dist/providers/docker" : "providers/docker"})` : `the installed plugin at ${docker}`}`,
  );
}

/**
 * Runs `operate` as one engine run of `verb` on `stackName` and reports it through the options' reporter; returns
 * the exit code (0 done, 1 the engine failed, 130/143 cancelled by SIGINT/SIGTERM). `operate` returns what it did,
 * or an exit code when it has reported by itself. Ctrl-C once aborts the run's signal and waits; twice kills every
 * process carrying the run's mark and exits. Whatever happens, no process the engine started outlives the verb.
 */
export async function withEngineRun(
  verb: StackVerb,
  stackName: string,
  root: string,
  toolchain: ToolchainReport,
  options: StackVerbOptions,
  operate: (run: EngineRun) => Promise<Outcome | number>,
): Promise<number> {
  const rep = options.reporter;
  const env = options.env ?? process.env;
  const files = options.files ?? toolkitFiles(root);
  const mark = newRunMark();
  const engine = engineEnv(root, env);
  const backend = engine.PULUMI_BACKEND_URL ?? "";
  const fileState = backend.startsWith("file://") ? backend.slice("file://".length) : undefined;
  const base = { verb, stack: stackName };
  const controller = new AbortController();
  // Set by the second Ctrl-C: from then on its handler speaks and exits, not the failed operation.
  let forcing = false;
  const interrupts = new Interrupts({
    cancel: (signal) => {
      rep.note(
        `\n${signal}: cancelling the engine's ${verb} of ${stackName}; waiting for the steps it started to finish (press Ctrl-C again to force)`,
      );
      controller.abort();
    },
    force: async (signal) => {
      forcing = true;
      const killed = signalMarked(mark, "SIGKILL");
      // Let the kernel reap them before the lock's owner is judged gone.
      await new Promise((r) => setTimeout(r, 300));
      const locks = fileState === undefined ? 0 : removeStaleLocks(fileState, PULUMI_PROJECT, stackName);
      rep.note(
        `${signal} again: killed ${killed.length} engine process(es)${locks > 0 ? " and removed the stack's lock" : ""}; the next run of ${stackName} clears any step left pending`,
      );
      process.exit(signalExitCode(signal));
    },
  });
  const uninstall = interrupts.install();
  const progress = rep.progress();
  const watch = new EngineWatch(progress);
  const engineVars: Record<string, string> = {
    ...engine,
    // The package's pack launcher and provider run on this Node (22 or later), whatever `node` is on PATH.
    ...(files.installed && !env.SANDBOX_NODE ? { SANDBOX_NODE: process.execPath } : {}),
    [RUN_MARK]: mark,
    // The local Docker provider (when chosen) must be the `pulumi-resource-docker` the engine finds first.
    PATH: [...toolchain.pathPrepend, dirname(toolchain.pulumi?.path ?? ""), env.PATH ?? ""].join(":"),
  };
  try {
    const outcome = await operate({
      verb,
      stack: stackName,
      env,
      files,
      signal: controller.signal,
      watch,
      fileState,
      engineVars,
    });
    if (typeof outcome === "number") return outcome;
    for (const w of watch.warnings) rep.warning(w);
    const lines = driftLines(watch.drift, verb);
    // The walls table goes last: the drift belongs with the summary line.
    const [first, ...rest] = outcome.text.split("\n");
    return rep.result(
      { ...base, ok: true, exitCode: 0, ...outcome.extra, changes: outcome.changes, drift: watch.drift },
      [first, ...lines, ...rest].join("\n"),
    );
  } catch (e) {
    if (forcing) return new Promise<number>(() => {});
    for (const w of watch.warnings) rep.warning(w);
    const failure = describeFailure(verb, stackName, watch, e, interrupts.received);
    if (rep.verbose) rep.note(failure.detail);
    const exitCode = interrupts.received === undefined ? 1 : signalExitCode(interrupts.received);
    const { detail: _detail, ...error } = failure;
    return rep.failure({ ...base, ok: false, exitCode, drift: watch.drift, error });
  } finally {
    progress.stop();
    uninstall();
    const reaped = await reapMarked(mark);
    if (reaped.length > 0 && rep.verbose) rep.note(`ended ${reaped.length} engine process(es) left running`);
  }
}
