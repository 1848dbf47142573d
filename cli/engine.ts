import { join } from "node:path";
import { LocalWorkspace, PulumiCommand, Stack, StackNotFoundError } from "@pulumi/pulumi/automation";
import { sandboxProgram } from "../stacks/program";
import { pulumiHome, type ToolchainReport } from "../toolchain/pulumi";
import { engineWorkDir, policyPackArg } from "./engine-env";
import {
  type Outcome,
  providerNote,
  type StackVerb,
  type StackVerbOptions,
  withEngineRun,
} from "./engine-run";
import { EngineWatch, type Step } from "./events";
import { PULUMI_PROJECT } from "./identity";
import { describeChanges } from "./output";
import { recoverInterruptedRun } from "./recover";
import { probeReports, wallsTable } from "./walls-table";

export {
  DEV_PASSPHRASE,
  engineEnv,
  installedWorkDir,
  policyPackArg,
  stateDir,
  stateOnlyWorkDir,
} from "./engine-env";
export type { StackVerb, StackVerbOptions } from "./engine-run";

/** The Pulumi CLI, run through cli/engine-session (a session of its own; see that script). */
async function pulumiCommand(toolchain: ToolchainReport): Promise<PulumiCommand> {
  if (toolchain.pulumi === undefined) throw new Error("runStackVerb needs a Pulumi CLI");
  process.env.SANDBOX_PULUMI_CLI = toolchain.pulumi.path;
  return PulumiCommand.get({ root: join(__dirname, "engine-session") });
}

/**
 * Runs one stack verb through the Automation API and reports it through `reporter`; returns the exit code (0 done,
 * 1 the engine failed, 130/143 cancelled by SIGINT/SIGTERM). `up` and `preview` refresh first, so objects removed or
 * changed behind the stack's back are put back (and listed as drift). Ctrl-C once cancels the engine's operation and
 * waits for it; twice kills it. Whatever happens, no process the engine started outlives the verb (cli/engine-run.ts).
 */
export async function runStackVerb(
  verb: StackVerb,
  stackName: string,
  root: string,
  toolchain: ToolchainReport,
  options: StackVerbOptions,
): Promise<number> {
  const rep = options.reporter;
  return withEngineRun(verb, stackName, root, toolchain, options, async (run) => {
    const { env, files, watch, fileState } = run;
    const workspace = await LocalWorkspace.create({
      program: sandboxProgram,
      workDir: engineWorkDir(root, stackName, options.workDir, files),
      pulumiHome: pulumiHome(root, env),
      pulumiCommand: await pulumiCommand(toolchain),
      envVars: run.engineVars,
    });
    // One CLI call when the stack exists (select), two when `up` or `preview` creates it.
    const selected = await Stack.select(stackName, workspace).catch((e: unknown) => {
      if (e instanceof StackNotFoundError) return undefined;
      throw e;
    });
    if (selected === undefined && (verb === "destroy" || verb === "refresh")) {
      return rep.result(
        { verb, stack: stackName, ok: true, exitCode: 0, created: false, changes: {}, drift: [] },
        `stack ${stackName} was never created here: nothing to ${verb}`,
      );
    }
    const stack = selected ?? (await Stack.create(stackName, workspace));
    if (fileState !== undefined) {
      await recoverInterruptedRun(stack, fileState, PULUMI_PROJECT, (t) => rep.note(t.trimEnd()), rep.engine);
    }
    providerNote(rep, toolchain, files);
    if (run.signal.aborted) throw new Error("cancelled before the engine started");
    const common = { onEvent: watch.onEvent, onOutput: rep.engine, signal: run.signal };
    const policyPacks = policyPackArg(root, env, files);
    return operation(verb, stack, stackName, common, policyPacks, {
      steps: watch.steps,
      diff: options.diff === true,
      watch,
    });
  });
}

const MARK: Record<string, string> = { create: "+", delete: "-", update: "~", replace: "+-" };

/** One planned step for `preview --diff`: `  ~ web (docker Container): changed: image, env`. */
function stepLine(s: Step): string {
  return `  ${MARK[s.op] ?? s.op} ${s.name} (${s.type}): ${s.reason}`;
}

async function operation(
  verb: StackVerb,
  stack: Stack,
  stackName: string,
  common: Parameters<Stack["refresh"]>[0] & object,
  policyPacks: string[],
  plan: { readonly steps: readonly Step[]; readonly diff: boolean; readonly watch: EngineWatch },
): Promise<Outcome> {
  switch (verb) {
    case "preview": {
      const r = await stack.preview({ ...common, policyPacks, refresh: true });
      const changes = r.changeSummary as Record<string, number>;
      const head = `preview of ${stackName}: ${describeChanges(changes, true)}`;
      const steps = plan.steps.map((s) => ({
        op: s.op,
        name: s.name,
        type: s.type,
        keys: s.keys,
        reason: s.reason,
      }));
      return {
        changes,
        text: plan.diff ? [head, ...steps.map(stepLine)].join("\n") : head,
        extra: { steps },
      };
    }
    case "up": {
      // The stack rules judge the whole new graph only at the end of a run: judged on a preview first, a refused
      // `up` changes nothing, and a fixed config passes the first time (as the official CLI's up previews first).
      const previewed = new EngineWatch(() => undefined);
      try {
        await stack.preview({ ...common, onEvent: previewed.onEvent, policyPacks, refresh: true });
      } catch (e) {
        const refused = previewed.violations.length > 0;
        if (refused) {
          plan.watch.beforeSteps = true;
          plan.watch.violations.push(...previewed.violations);
          plan.watch.warnings.push(...previewed.warnings);
        }
        // Any other failure of the preview is the up's to meet and report, as it would without one.
        if (refused || common.signal?.aborted === true) throw e;
      }
      const r = await stack.up({ ...common, policyPacks, refresh: true });
      const changes = (r.summary.resourceChanges ?? {}) as Record<string, number>;
      const walls = probeReports(r.outputs.probes?.value);
      const project = r.outputs.project?.value;
      const text = [
        `${stackName} is up: ${describeChanges(changes, false)}`,
        ...Object.entries(walls).map(([t, w]) => wallsTable(t, w).trimEnd()),
      ].join("\n");
      return { changes, text, extra: { ...(typeof project === "string" ? { project } : {}), walls } };
    }
    case "refresh": {
      const r = await stack.refresh(common);
      const changes = (r.summary.resourceChanges ?? {}) as Record<string, number>;
      return { changes, text: `${stackName} refreshed: ${describeChanges(changes, false)}` };
    }
    case "destroy": {
      const r = await stack.destroy(common);
      const changes = (r.summary.resourceChanges ?? {}) as Record<string, number>;
      return { changes, text: `${stackName} destroyed: ${describeChanges(changes, false)}` };
    }
  }
}
