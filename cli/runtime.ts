import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import type Dockerode from "dockerode";
import {
  type LaunchSpec,
  launchSpec,
  projectNetworkName,
  proxySpec,
  type ResolvedProject,
} from "../components/model";
import { identifyAgent } from "../runtime/agent-keys";
import { deployedSpecs, specDifference } from "../runtime/deployed-shape";
import { dockerClient } from "../runtime/docker/client";
import { removeJobFolder } from "../runtime/jobs";
import { Launcher } from "../runtime/launcher";
import { isLedgerUrl, Ledger, meterOf } from "../runtime/ledger";
import { offSwitch } from "../runtime/offSwitch";
import { policyPreflight } from "../runtime/preflight";
import { currentProxy } from "../runtime/proxy";
import { runEscape, runProbe } from "../runtime/walls";
import { dockerEngineProblem } from "./engine-host";
import { openLedger } from "./ledger";
import type { Io } from "./output";
import { parseRunArgs, type RunOptions, runSpec } from "./run-options";
import { runOne } from "./run-task";
import { type Failure, failureOf, report, templatesOf } from "./task-failure";
import type { TaskVerb } from "./verbs";
import { escapeVerb, probeVerb } from "./walls-verbs";

export type { Io };

/** The local engine, or the failure saying how to start it. */
async function connect(verb: string): Promise<Dockerode | Failure> {
  const problem = await dockerEngineProblem();
  return problem === undefined ? dockerClient() : { kind: "no-engine", message: `${verb}: ${problem}` };
}

/**
 * The engine and image set-up a task verb may run once when it finds no engine or an image missing, before any task
 * started; then the verb is tried again. True when the set-up succeeded.
 */
export type EngineSetUp = (need?: { runtime: string }) => boolean;

/**
 * The checkout front's set-up (`./sandbox` answers "engine up, images current" from a cached fact, `stamp`, and
 * checks with toolchain/docker.sh only when that fact is missing): forgets the fact, so that the next call checks
 * again, and runs toolchain/docker.sh (its messages on stderr).
 */
export function checkoutSetUp(root: string, stamp: string): EngineSetUp {
  return (need) => {
    if (need !== undefined) {
      // gVisor: built once and registered with the engine by toolchain/runsc.sh; other runtimes are the user's.
      if (need.runtime !== "runsc") return false;
      return (
        spawnSync("bash", [join(root, "toolchain", "runsc.sh")], { stdio: ["ignore", 2, 2] }).status === 0
      );
    }
    rmSync(stamp, { force: true });
    return (
      spawnSync("bash", [join(root, "toolchain", "docker.sh")], { stdio: ["ignore", 2, 2] }).status === 0
    );
  };
}

function isFailure(x: Dockerode | Failure): x is Failure {
  return typeof (x as Partial<Failure>).kind === "string";
}

/** What one attempt of a verb came to: its exit code, or a failure not yet reported. */
type Attempt = number | (Failure & { started: boolean });

/**
 * Runs `attempt`; when it failed for want of an engine or an image before any task started and `setUp` is given,
 * runs the set-up once and tries again. Reports a failure once, in the end.
 */
async function withSetUp(
  verb: string,
  io: Io,
  json: boolean,
  setUp: EngineSetUp | undefined,
  attempt: () => Promise<Attempt>,
): Promise<number> {
  let outcome = await attempt();
  const repairable = (o: Attempt) =>
    typeof o !== "number" &&
    !o.started &&
    (o.kind === "no-engine" || o.kind === "image-missing" || o.kind === "runtime-missing");
  if (setUp !== undefined && repairable(outcome) && typeof outcome !== "number") {
    const need = outcome.kind === "runtime-missing" ? { runtime: outcome.runtime ?? "" } : undefined;
    if (setUp(need)) outcome = await attempt();
  }
  if (typeof outcome === "number") return outcome;
  const { started: _started, ...failure } = outcome;
  return report(verb, failure, io, json);
}

/** Where the off switch looks: the project's name and the job root its job folders live under. */
export interface OffTarget {
  readonly name: string;
  readonly jobRoot: string;
}

/**
 * The off switch: every container, network and volume labelled with the project, then its job folders. Needs only
 * the name and the job root, so it also runs when the config is no longer valid (`note` says so).
 */
export async function runOff(
  target: OffTarget,
  io: Io,
  json: boolean,
  note?: string,
  setUp?: EngineSetUp,
): Promise<number> {
  return withSetUp("off", io, json, setUp, () => offOnce(target, io, json, note));
}

async function offOnce(target: OffTarget, io: Io, json: boolean, note?: string): Promise<Attempt> {
  const docker = await connect("off");
  if (isFailure(docker)) return { ...docker, started: false };
  if (note !== undefined) io.err(`${note}\n`);
  try {
    const r = await offSwitch(docker, target.name, { jobRoot: target.jobRoot });
    const folders = r.jobFolders ?? [];
    io.out(
      json
        ? `${JSON.stringify({ verb: "off", ok: true, exitCode: 0, ...r, jobFolders: folders })}\n`
        : `off switch for ${target.name}: removed ${r.containers.length} container(s), ${r.networks.length} network(s), ${r.volumes.length} volume(s), ${folders.length} job folder(s)\n` +
            [...r.containers, ...r.networks, ...r.volumes, ...folders].map((n) => `  - ${n}\n`).join(""),
    );
    return 0;
  } catch (e) {
    return { ...failureOf("off", e), started: true };
  }
}

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
