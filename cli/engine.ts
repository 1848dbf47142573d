import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { LocalWorkspace, PulumiCommand, Stack, StackNotFoundError } from "@pulumi/pulumi/automation";
import { findStackFile } from "../stacks/config";
import { sandboxProgram } from "../stacks/program";
import {
  onPath,
  pulumiHome,
  type ToolchainReport,
  type ToolkitFiles,
  toolkitFiles,
} from "../toolchain/pulumi";
import { type Drift, EngineWatch } from "./events";
import { describeFailure } from "./failure";
import { PULUMI_PROJECT } from "./identity";
import { describeChanges, type Reporter } from "./output";
import { recoverInterruptedRun, removeStaleLocks } from "./recover";
import { Interrupts, newRunMark, RUN_MARK, reapMarked, signalExitCode, signalMarked } from "./signals";
import { probeReports, wallsTable } from "./walls-table";

/** The stack verbs the front runs through the Automation API. */
export type StackVerb = "preview" | "up" | "refresh" | "destroy";

/** The dev passphrase used when the caller set none: it protects only local, throwaway dev state. */
export const DEV_PASSPHRASE = "sandbox-dev-passphrase";

/** The local file backend's folder, created on first use (the engine refuses a missing one). */
export function stateDir(root: string): string {
  const dir = join(root, ".sandbox", "state");
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * The environment the engine runs with: the local file backend under the project, a dev passphrase unless one is
 * set, no update check, and no plugin downloads (a missing plugin is an error, never a download attempt).
 */
export function engineEnv(root: string, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    PULUMI_BACKEND_URL: env.PULUMI_BACKEND_URL || `file://${stateDir(root)}`,
  };
  if (!env.PULUMI_CONFIG_PASSPHRASE && !env.PULUMI_CONFIG_PASSPHRASE_FILE)
    out.PULUMI_CONFIG_PASSPHRASE = DEV_PASSPHRASE;
  return out;
}

/**
 * The policy pack to attach: the pack folder when the official Node policy analyzer is installed, otherwise the
 * pack's launcher script, which the engine starts as an analyzer plugin (no Node language host needed). A checkout's
 * pack is `policy/` under the root; the installed front's is the package's `policy-pack/`.
 */
export function policyPackArg(
  root: string,
  env: NodeJS.ProcessEnv = process.env,
  files: ToolkitFiles = toolkitFiles(root),
): string[] {
  const folder = files.policyPack;
  if (!existsSync(join(folder, "PulumiPolicy.yaml"))) return [];
  if (onPath("pulumi-analyzer-policy", env) !== undefined) return [folder];
  const launcher = join(folder, "run-pack");
  return existsSync(launcher) ? [launcher] : [];
}

/**
 * A work folder for a stack whose config file no longer passes (or no longer parses): the project file and a stack
 * file holding only the secrets provider's lines, so that `destroy` runs from the state alone. Destroy never runs
 * the program, and the providers it calls are configured from the state.
 */
export function stateOnlyWorkDir(
  root: string,
  stack: string,
  installed = toolkitFiles(root).installed,
): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "sandbox-state-only-"));
  mkdirSync(join(dir, "stacks"));
  writeFileSync(
    join(dir, "Pulumi.yaml"),
    `name: ${PULUMI_PROJECT}\nruntime: nodejs\nstackConfigDir: stacks\n`,
  );
  const found = findStackFile(root, stack, installed);
  const text = found.exists ? readFileSync(join(root, found.file), "utf8") : "";
  const secrets = text.match(/^(encryptionsalt|secretsprovider|encryptedkey):.*$/gm) ?? [];
  writeFileSync(join(dir, "stacks", `Pulumi.${stack}.yaml`), `${secrets.join("\n")}\n`);
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * The installed front's work folder for a stack: a team's folder has no Pulumi.yaml of the toolkit's project, so
 * the front keeps one in `.sandbox/work/stack-<stack>/`, beside its state, whose `stackConfigDir` points back at the
 * folder that holds the stack's config file. The engine reads the config there and writes its secrets provider's
 * lines there, as it does to a checkout's `stacks/Pulumi.<stack>.yaml`.
 */
export function installedWorkDir(root: string, stack: string): string {
  // "stack-" keeps a stack named "." or ".." inside work/.
  const dir = join(root, ".sandbox", "work", `stack-${stack}`);
  mkdirSync(dir, { recursive: true });
  const configDir = relative(dir, dirname(join(root, findStackFile(root, stack, true).file)));
  writeFileSync(
    join(dir, "Pulumi.yaml"),
    [
      "# Written by the installed `sandbox` front for each run: the toolkit's program runs inline, and the stack's",
      "# config file is in the folder stackConfigDir names.",
      `name: ${PULUMI_PROJECT}`,
      "runtime: nodejs",
      `stackConfigDir: ${JSON.stringify(configDir)}`,
      "",
    ].join("\n"),
  );
  return dir;
}

/** The Pulumi CLI, run through cli/engine-session (a session of its own; see that script). */
async function pulumiCommand(toolchain: ToolchainReport): Promise<PulumiCommand> {
  if (toolchain.pulumi === undefined) throw new Error("runStackVerb needs a Pulumi CLI");
  process.env.SANDBOX_PULUMI_CLI = toolchain.pulumi.path;
  return PulumiCommand.get({ root: join(__dirname, "engine-session") });
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

export interface StackVerbOptions {
  readonly reporter: Reporter;
  /** A work folder other than the root: see {@link stateOnlyWorkDir}. */
  readonly workDir?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Where the toolkit's own files are (the pack); by default the running toolkit's (see toolkitFiles). */
  readonly files?: ToolkitFiles;
}

/**
 * Runs one stack verb and reports it through `reporter`; returns the exit code (0 done, 1 the engine failed,
 * 130/143 cancelled by SIGINT/SIGTERM). `up` and `preview` refresh first, so objects removed or changed behind the
 * stack's back are put back (and listed as drift). Ctrl-C once cancels the engine's operation and waits for it;
 * twice kills it. Whatever happens, no process the engine started outlives the verb.
 */
export async function runStackVerb(
  verb: StackVerb,
  stackName: string,
  root: string,
  toolchain: ToolchainReport,
  options: StackVerbOptions,
): Promise<number> {
  const rep = options.reporter;
  const env = options.env ?? process.env;
  const files = options.files ?? toolkitFiles(root);
  const mark = newRunMark();
  const backend = engineEnv(root, env).PULUMI_BACKEND_URL ?? "";
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
  const watch = new EngineWatch((line) => rep.note(line));
  try {
    const workspace = await LocalWorkspace.create({
      program: sandboxProgram,
      workDir: options.workDir ?? (files.installed ? installedWorkDir(root, stackName) : root),
      pulumiHome: pulumiHome(root, env),
      pulumiCommand: await pulumiCommand(toolchain),
      envVars: {
        ...engineEnv(root, env),
        // The package's pack launcher and provider run on this Node (22 or later), whatever `node` is on PATH.
        ...(files.installed && !env.SANDBOX_NODE ? { SANDBOX_NODE: process.execPath } : {}),
        [RUN_MARK]: mark,
        // The local Docker provider (when chosen) must be the `pulumi-resource-docker` the engine finds first.
        PATH: [...toolchain.pathPrepend, dirname(toolchain.pulumi?.path ?? ""), env.PATH ?? ""].join(":"),
      },
    });
    // One CLI call when the stack exists (select), two when `up` or `preview` creates it.
    const selected = await Stack.select(stackName, workspace).catch((e: unknown) => {
      if (e instanceof StackNotFoundError) return undefined;
      throw e;
    });
    if (selected === undefined && (verb === "destroy" || verb === "refresh")) {
      return rep.result(
        { ...base, ok: true, exitCode: 0, created: false, changes: {}, drift: [] },
        `stack ${stackName} was never created here: nothing to ${verb}`,
      );
    }
    const stack = selected ?? (await Stack.create(stackName, workspace));
    if (fileState !== undefined) {
      await recoverInterruptedRun(stack, fileState, PULUMI_PROJECT, (t) => rep.note(t.trimEnd()), rep.engine);
    }
    const docker = toolchain.plugins.docker;
    if (docker !== undefined && !rep.json) {
      rep.note(
        `docker provider: ${toolchain.pathPrepend.length > 0 ? `the toolkit's local provider (${files.installed ? "the package's dist/providers/docker" : "providers/docker"})` : `the installed plugin at ${docker}`}`,
      );
    }
    if (controller.signal.aborted) throw new Error("cancelled before the engine started");
    const common = { onEvent: watch.onEvent, onOutput: rep.engine, signal: controller.signal };
    const policyPacks = policyPackArg(root, env, files);
    let changes: Record<string, number> = {};
    let text = "";
    const extra: Record<string, unknown> = {};
    switch (verb) {
      case "preview": {
        const r = await stack.preview({ ...common, policyPacks, refresh: true });
        changes = r.changeSummary as Record<string, number>;
        text = `preview of ${stackName}: ${describeChanges(changes, true)}`;
        break;
      }
      case "up": {
        const r = await stack.up({ ...common, policyPacks, refresh: true });
        changes = (r.summary.resourceChanges ?? {}) as Record<string, number>;
        const walls = probeReports(r.outputs.probes?.value);
        const project = r.outputs.project?.value;
        if (typeof project === "string") extra.project = project;
        extra.walls = walls;
        text = [
          `${stackName} is up: ${describeChanges(changes, false)}`,
          ...Object.entries(walls).map(([t, w]) => wallsTable(t, w).trimEnd()),
        ].join("\n");
        break;
      }
      case "refresh": {
        const r = await stack.refresh(common);
        changes = (r.summary.resourceChanges ?? {}) as Record<string, number>;
        text = `${stackName} refreshed: ${describeChanges(changes, false)}`;
        break;
      }
      case "destroy": {
        const r = await stack.destroy(common);
        changes = (r.summary.resourceChanges ?? {}) as Record<string, number>;
        text = `${stackName} destroyed: ${describeChanges(changes, false)}`;
        break;
      }
    }
    for (const w of watch.warnings) rep.warning(w);
    const lines = driftLines(watch.drift, verb);
    // The walls table goes last: the drift belongs with the summary line.
    const [first, ...rest] = text.split("\n");
    return rep.result(
      { ...base, ok: true, exitCode: 0, ...extra, changes, drift: watch.drift },
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
    uninstall();
    const reaped = await reapMarked(mark);
    if (reaped.length > 0 && rep.verbose) rep.note(`ended ${reaped.length} engine process(es) left running`);
  }
}
