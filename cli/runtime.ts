import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import {
  type LaunchSpec,
  launchSpec,
  projectNetworkName,
  proxySpec,
  type ResolvedProject,
} from "../components/model";
import { identifyAgent } from "../runtime/agent-keys";
import { deployedSpecs, specDifference } from "../runtime/deployed-shape";
import { removeJobFolder } from "../runtime/jobs";
import { Launcher } from "../runtime/launcher";
import { isLedgerUrl, Ledger, meterOf } from "../runtime/ledger";
import { policyPreflight } from "../runtime/preflight";
import { currentProxy } from "../runtime/proxy";
import { runEscape, runProbe } from "../runtime/walls";
import { openLedger } from "./ledger";
import { type Attempt, connect, type EngineSetUp, isFailure, runOff, withSetUp } from "./off";
import type { Io } from "./output";
import { parseRunArgs, type RunOptions, runSpec } from "./run-options";
import { runOne } from "./run-task";
import { failureOf, report, templatesOf } from "./task-failure";
import type { TaskVerb } from "./verbs";
import { escapeVerb, probeVerb } from "./walls-verbs";

// The off switch and the engine set-up live in cli/off.ts (so that `off` loads no launcher); named here as before.
export { checkoutSetUp, type EngineSetUp, type OffTarget, runOff } from "./off";
export type { Io };

/**
 * Runs a task verb. `run <template> [options] [-- command...]` launches one task (see cli/run-options.ts);
 * `probe [templates]` proves every wall; `escape [templates]` tries the four escapes; `off` removes everything of
 * the project. Returns the exit code ({@link TASK_EXIT}); never throws. With `setUp`, a verb that finds no engine or
 * an image missing before any task started runs it once and tries again. With `serve`, `run` goes through the stack's
 * launch service when one answers (`--verbose` says which way it went).
 */
export async function runTaskVerb(
  verb: TaskVerb,
  project: ResolvedProject,
  rest: readonly string[],
  io: Io,
  json: boolean,
  setUp?: EngineSetUp,
  ledgerFile?: string,
  serve?: { readonly root: string; readonly stack: string; readonly verbose: boolean },
): Promise<number> {
  if (verb === "off")
    return runOff({ name: project.spec.name, jobRoot: project.jobRoot }, io, json, undefined, setUp);
  let run: ReturnType<typeof parseRunArgs> | undefined;
  try {
    if (verb === "run") run = parseRunArgs(rest, process.env.INIT_CWD ?? process.cwd());
  } catch (e) {
    return report(verb, failureOf(verb, e), io, json);
  }
  // A launch service of the stack that answers takes the task (cli/serve-run.ts); else it is launched here.
  if (run !== undefined && serve !== undefined) {
    const { runThroughService } = await import("./serve-run.js");
    const code = await runThroughService({ ...serve, project, run, io, json });
    if (code !== undefined) return code;
  }
  let stale: string | undefined;
  try {
    stale =
      run === undefined || ledgerFile === undefined ? undefined : await notDeployed(ledgerFile, project, run);
  } catch (e) {
    return report(verb, failureOf(verb, e), io, json);
  }
  if (stale !== undefined) return report(verb, { kind: "not-deployed", message: stale }, io, json);
  return withSetUp(verb, io, json, setUp, () => taskVerbOnce(verb, project, rest, run, io, json, ledgerFile));
}

/**
 * Why `run` must not launch the template as the config on disk says: the last `up` deployed it otherwise (or not at
 * all), so the task would not be what the pack judged. Undefined when it matches, or when nothing was deployed yet.
 */
async function notDeployed(
  ledgerFile: string,
  project: ResolvedProject,
  run: RunOptions,
): Promise<string | undefined> {
  // No ledger file yet: nothing was deployed through this front.
  if (!isLedgerUrl(ledgerFile) && !existsSync(ledgerFile)) return undefined;
  const ledger = await Ledger.at(ledgerFile, meterOf(project));
  try {
    return await templateNotDeployed(ledger, project, run.template);
  } finally {
    await ledger.close();
  }
}

/**
 * Why a task of `template` must not launch as the config says: the last `up` recorded in `ledger` deployed it
 * otherwise, or not at all. Undefined when it matches, or when nothing was deployed yet. `run` and the launch service
 * (cli/serve-http.ts) both ask it.
 */
export async function templateNotDeployed(
  ledger: Ledger,
  project: ResolvedProject,
  template: string,
): Promise<string | undefined> {
  const deployed = await deployedSpecs(ledger, project.spec.name);
  if (deployed === undefined || project.spec.templates[template] === undefined) return undefined;
  const was = deployed[template];
  const names = Object.keys(deployed).sort().join(", ") || "none";
  if (was === undefined)
    return `run: template "${template}" is in the config but was not deployed (the last \`up\` deployed: ${names}); run \`up\` first`;
  const now = launchSpec(project, template, projectNetworkName(project.spec.name));
  if (was.specHash === now.specHash) return undefined;
  const diff = specDifference(was, now);
  return `run: template "${template}" differs from what the last \`up\` deployed (and the pack judged):\n${diff.map((d) => `  - ${d}`).join("\n")}\nrun \`up\` first, or put the config back`;
}

/** One attempt of `run`, `probe` or `escape` (`run`'s options already parsed). */
async function taskVerbOnce(
  verb: Exclude<TaskVerb, "off">,
  project: ResolvedProject,
  rest: readonly string[],
  run: RunOptions | undefined,
  io: Io,
  json: boolean,
  ledgerFile?: string,
): Promise<Attempt> {
  const docker = await connect(verb);
  if (isFailure(docker)) return { ...docker, started: false };
  // Every run is admitted, recorded and charged by the project's ledger; its alerts go to the configured sinks.
  const metered = ledgerFile === undefined ? undefined : await openLedger(ledgerFile, project, io.err);
  const ledger = metered?.ledger;
  let started = false;
  const name = project.spec.name;
  const networkName = projectNetworkName(name);
  const proxy = proxySpec(project, networkName);
  const launcher = new Launcher(docker, {
    preflight: policyPreflight({}, (w) => io.err(`warning: ${w}\n`)),
    ledger: ledger ?? false,
    // Proxy-mode tasks need their template's proxy as `up` deployed it: never started or replaced here, so that the
    // off switch sticks and a changed config is deployed before it is used.
    ...(proxy === undefined ? {} : { proxy: (s: LaunchSpec) => currentProxy(docker, proxy, s.template) }),
    onEvent: (e) => {
      started = true;
      io.err(`[${e.type}] task ${e.id} (${e.running} running)\n`);
    },
  });
  // `run` names its task up front, so an interrupted run can also remove its job folder.
  const taskId = `${Date.now().toString(36)}-${randomBytes(3).toString("hex")}`;
  const stop = async (signal: NodeJS.Signals) => {
    io.err(`\n${signal}: stopping; removing running tasks...\n`);
    const removed = await launcher.shutdown();
    if (run !== undefined && !run.keep) removeJobFolder(project.jobRoot, taskId);
    io.err(`removed ${removed.length} task container(s): ${removed.join(", ") || "none"}\n`);
    process.exit(signal === "SIGINT" ? 130 : 143);
  };
  const onInt = () => void stop("SIGINT");
  const onTerm = () => void stop("SIGTERM");
  process.once("SIGINT", onInt);
  process.once("SIGTERM", onTerm);
  try {
    switch (verb) {
      case "run": {
        const options = run ?? parseRunArgs(rest, process.cwd());
        // An agent is whoever holds one of its keys (runtime/agent-keys.ts); no key and no agent: the operator's run.
        const agent = ledger === undefined ? options.agent : await identifyAgent(ledger, name, options.agent);
        const { agent: _claimed, ...unclaimed } = options;
        const identified: RunOptions = agent === undefined ? unclaimed : { ...unclaimed, agent };
        const [template = ""] = templatesOf(project, [identified.template]);
        const spec = runSpec(launchSpec(project, template, networkName), identified);
        return await runOne(
          { kind: "docker", runner: launcher },
          project,
          spec,
          identified,
          taskId,
          io,
          json,
        );
      }
      case "probe":
        return await probeVerb(
          templatesOf(project, rest),
          async (template) => {
            const t = project.spec.templates[template];
            if (t === undefined) return undefined;
            return (await runProbe(launcher, launchSpec(project, template, networkName), t)).report;
          },
          io,
          json,
        );
      case "escape":
        return await escapeVerb(
          templatesOf(project, rest),
          (template, check) => runEscape(launcher, docker, launchSpec(project, template, networkName), check),
          io,
          json,
          // Every escape attempt is recorded; one that was not blocked also pages the alert sinks (a self-test that
          // held is a record, not news).
          (template, r) =>
            ledger?.alert(
              {
                kind: "escape-check",
                message: `escape check ${r.check} from template ${template}: ${r.blocked ? "blocked" : "ESCAPED"} by ${r.blockedBy}; ${r.evidence}`,
              },
              !r.blocked,
            ),
        );
    }
  } catch (e) {
    return { ...failureOf(verb, e), started };
  } finally {
    process.removeListener("SIGINT", onInt);
    process.removeListener("SIGTERM", onTerm);
    // Webhooks in flight are delivered before the verb returns; the ledger closes after them.
    await metered?.outbox.flush();
    await ledger?.close();
  }
  return { kind: "engine", message: `${verb}: not a task verb`, started };
}
