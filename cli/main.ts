import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { type ResolvedProject, SpecError } from "../components/model";
import {
  checkBrokerCredentialKeys,
  configMapFromStackYaml,
  findStackFile,
  ledgerTargetFromConfig,
  offTargetFromConfig,
  projectFromConfig,
} from "../stacks/config";
import { toolkitFiles } from "../toolchain/pulumi";
import { stackNames, versions } from "./about";
import { setFrontCommand } from "./front-command";
import { asksForHelp, completionVerb, USAGE, unknownVerb, VERB_HELP } from "./help";
import { leanDockerClient } from "./lean-docker";
import { LEDGER_VERBS, type LedgerVerb, ledgerEnvProblem, ledgerFile, localLedgerFile } from "./ledger-file";
import { type Io, processIo, Reporter } from "./output";
import { kubeTarget, offTarget, rawConfig } from "./targets";
import { STACK_VERBS, TASK_VERBS, type TaskVerb } from "./verbs";

// Each verb loads what it uses when it runs (`import()`): the task verbs never load the Pulumi SDK (its automation
// API alone takes half a second to load), `check` loads neither it nor the Docker client, `help` nothing.

/**
 * Exit codes of `check` and the stack verbs: 0 done, 1 the engine or a deployment failed (a policy refusal
 * included), 2 bad input, 3 a tool is missing, 130/143 cancelled by SIGINT/SIGTERM. The task verbs' are in
 * cli/runtime.ts (`run` exits with the task's own code).
 */
export const EXIT = {
  ok: 0,
  failed: 1,
  badInput: 2,
  missingTool: 3,
  interrupted: 130,
  terminated: 143,
} as const;

/** The root of the checkout (the folder holding Pulumi.yaml). */
export function projectRoot(): string {
  return resolve(__dirname, "..");
}

/** Reads and checks a stack's config file; throws SpecError with every problem. */
export function loadStack(root: string, stack: string): ResolvedProject {
  if (!/^[A-Za-z0-9_.-]+$/.test(stack)) {
    throw new SpecError(
      [
        {
          key: "stack",
          value: JSON.stringify(stack),
          message: "a stack name uses letters, digits, _, . and - only",
        },
      ],
      "invalid stack",
    );
  }
  const installed = toolkitFiles(root).installed;
  const { file, exists, tried } = findStackFile(root, stack, installed);
  if (!exists) {
    const nor = tried.length > 1 ? ` (nor ${tried.slice(1).join(", ")})` : "";
    const see = installed ? "docs/quickstart-stack-file.md in the package" : "stacks/Pulumi.dev.yaml";
    throw new SpecError(
      [{ key: file, value: undefined, message: `no such stack config file${nor}; create it (see ${see})` }],
      "invalid stack",
    );
  }
  const all = configMapFromStackYaml(readFileSync(join(root, file), "utf8"), file);
  const project = projectFromConfig(all, stack);
  checkBrokerCredentialKeys(all, project);
  return project;
}

/** Flags every verb takes (before `--`): `--json` and `--verbose`. */
function parseFlags(argv: readonly string[]) {
  const dash = argv.indexOf("--");
  const head = dash === -1 ? argv : argv.slice(0, dash);
  const flags = new Set(["--json", "--verbose", "-v", "--yes", "-y", "--diff"]);
  return {
    json: head.includes("--json"),
    diff: head.includes("--diff"),
    verbose: head.includes("--verbose") || head.includes("-v"),
    yes: head.includes("--yes") || head.includes("-y"),
    args: [...head.filter((a) => !flags.has(a)), ...(dash === -1 ? [] : argv.slice(dash))],
  };
}

/** Verbs that create, change or remove objects: the stack is named on purpose, never taken as `dev`. */
const NAMED_STACK_VERBS = new Set(["up", "destroy", "off"]);
/** Verbs that remove objects: on a terminal they ask first, unless `--yes`. */
const CONFIRMED_VERBS = new Set(["destroy", "off"]);

/**
 * The engine set-up of the checkout's front: `./sandbox` skips toolchain/docker.sh when its cached fact (the file in
 * SANDBOX_DOCKER_STAMP) says the engine answers and the images are current; a task verb that finds otherwise runs
 * the set-up then (cli/runtime.ts). None elsewhere (the installed front, tests).
 */
async function engineSetUp(root: string, env: NodeJS.ProcessEnv) {
  const stamp = env.SANDBOX_DOCKER_STAMP;
  if (stamp === undefined || stamp === "") return undefined;
  const { checkoutSetUp } = await import("./off.js");
  return checkoutSetUp(root, stamp);
}

/** Runs the front with `argv` (without node and script). Returns the exit code; never throws for bad input. */
export async function main(
  argv: readonly string[],
  io: Io,
  root = projectRoot(),
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const code = await mainOnce(argv, io, root, env);
  const { args } = parseFlags(argv);
  if (code === EXIT.ok && args[0] === "off" && args[1] !== undefined && !asksForHelp(args))
    await (await import("./off.js")).afterOff(root, args[1], env, io);
  return code;
}

async function mainOnce(
  argv: readonly string[],
  io: Io,
  root: string,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  // `scan` takes files and folders, not a stack: it has its own arguments and never loads a stack config.
  if (argv[0] === "scan") {
    const { runScan } = await import("./scan.js");
    return runScan(argv.slice(1), io, { cwd: env.INIT_CWD ?? process.cwd() });
  }
  const { json, verbose, yes, diff, args } = parseFlags(argv);
  setFrontCommand(toolkitFiles(root).installed, env);
  const [verb = "help", named, ...rest] = args;
  const stack = named ?? "dev";
  const rep = new Reporter(io, json, verbose);
  // Help, the version and completion read nothing and start nothing, whatever else the arguments say.
  if (verb === "help" || verb === "--help" || verb === "-h") {
    const subject = named === "--help" || named === "-h" ? "help" : named;
    const topic = subject === undefined ? undefined : VERB_HELP[subject];
    if (subject !== undefined && topic === undefined) {
      io.err(`${unknownVerb(subject)}\n`);
      return EXIT.badInput;
    }
    io.out(`${topic ?? USAGE}\n`);
    return EXIT.ok;
  }
  if (asksForHelp(args)) {
    const topic = VERB_HELP[verb];
    if (topic === undefined) {
      io.err(`${unknownVerb(verb)}\n`);
      return EXIT.badInput;
    }
    io.out(`${topic}\n`);
    return EXIT.ok;
  }
  if (verb === "--version" || verb === "version") {
    io.out(`${versions(root, env)}\n`);
    return EXIT.ok;
  }
  if (verb === "completion") return completionVerb(named, io);
  if (diff && verb !== "preview") {
    io.err(`${verb}: --diff is a flag of preview only (\`sandbox preview <stack> --diff\`)\n`);
    return EXIT.badInput;
  }
  const badLedger = ledgerEnvProblem(env);
  if (badLedger !== undefined) {
    if (json)
      return rep.failure({
        verb,
        stack: named ?? "",
        ok: false,
        exitCode: EXIT.badInput,
        error: { kind: "bad-input", message: badLedger },
      });
    io.err(`${badLedger}\n`);
    return EXIT.badInput;
  }
  // Verbs of their own arguments: a stack's config key, an agent's key, the ledger itself.
  const load = (s: string) => loadStack(root, s);
  const file = (s: string, p: ResolvedProject) =>
    ledgerFile({ jobRoot: p.jobRoot, ...ledgerTargetFromConfig(rawConfig(root, s) ?? {}) }, env);
  if (verb === "config")
    return (await import("./config-set.js")).runConfigCommand(args.slice(1), { io, json, root, env });
  if (verb === "agent-key")
    return (await import("./agent-key.js")).runAgentKeyCommand(args.slice(1), { io, json, load, file });
  if (verb === "logs") {
    const { logsCommand } = await import("./service-logs.js");
    return logsCommand(named, rest, { io, json, load, kube: (s) => kubeTarget(root, s) });
  }
  if (verb === "ledger") {
    const localFile = (s: string, p: ResolvedProject) =>
      localLedgerFile({ jobRoot: p.jobRoot, ...ledgerTargetFromConfig(rawConfig(root, s) ?? {}) }, env);
    return (await import("./ledger.js")).runLedgerCommand(named, rest, {
      io,
      json,
      yes,
      load,
      file,
      localFile,
      root,
    });
  }
  const taskVerb = (TASK_VERBS as readonly string[]).includes(verb);
  const ledgerVerb = (LEDGER_VERBS as readonly string[]).includes(verb);
  const ownArgs = taskVerb || ledgerVerb || verb === "serve";
  if (!((STACK_VERBS as readonly string[]).includes(verb) && rest.length === 0) && !ownArgs) {
    const known = VERB_HELP[verb] !== undefined;
    const message = known
      ? `${verb}: unexpected arguments ${JSON.stringify(rest)} (\`sandbox ${verb} --help\`)`
      : unknownVerb(verb);
    if (json)
      return rep.failure({
        verb,
        stack,
        ok: false,
        exitCode: EXIT.badInput,
        error: { kind: "bad-input", message },
      });
    io.err(`${message}\n`);
    return EXIT.badInput;
  }
  if (NAMED_STACK_VERBS.has(verb) && named === undefined) {
    const stacks = stackNames(root);
    const message = `${verb} acts on a stack named on purpose: \`sandbox ${verb} <stack>\`${stacks.length > 0 ? ` (stacks here: ${stacks.join(", ")})` : ""}; nothing was done`;
    return rep.failure({
      verb,
      stack: "",
      ok: false,
      exitCode: EXIT.badInput,
      error: { kind: "bad-input", message },
    });
  }
  if (CONFIRMED_VERBS.has(verb) && !yes && io.ask !== undefined && !json) {
    const what =
      verb === "destroy"
        ? `destroy stack ${stack}: remove everything it deployed`
        : `off ${stack}: remove every container, network, volume and job folder of its project`;
    const answer = (await io.ask(`${what}? [y/N] `)).trim().toLowerCase();
    if (answer !== "y" && answer !== "yes") {
      io.err(`${verb}: not confirmed; nothing was done (--yes skips the question)\n`);
      return EXIT.badInput;
    }
  }
  let project: ResolvedProject | undefined;
  let invalid: SpecError | undefined;
  try {
    project = loadStack(root, stack);
  } catch (e) {
    if (!(e instanceof SpecError)) throw e;
    invalid = e;
  }
  // The off switches work from the state and the labels: a config that no longer passes must never block them.
  const offSwitches = verb === "destroy" || verb === "off";
  if (invalid !== undefined && !(offSwitches && invalid.problems[0]?.key !== "stack")) {
    return rep.failure({
      verb,
      stack,
      ok: false,
      exitCode: EXIT.badInput,
      problems: invalid.problems,
      error: { kind: "bad-input", message: `${invalid.message}\nNothing was deployed.` },
    });
  }
  const invalidNote = (what: string) =>
    `the config of stack ${stack} is invalid (\`./sandbox check ${stack}\` lists the problems); ${what}`;
  if (
    verb === "off" &&
    project === undefined &&
    rawConfig(root, stack)?.["sandbox:backend"] === "kubernetes"
  ) {
    const { name } = offTargetFromConfig(rawConfig(root, stack) ?? {}, stack);
    const { runKubeOff } = await import("./kube-runtime.js");
    return runKubeOff(
      name,
      kubeTarget(root, stack),
      io,
      json,
      invalidNote(`the off switch runs for namespace ${name}, named by the config read leniently`),
    );
  }
  if (verb === "off" && project === undefined) {
    const target = await offTarget(root, stack, env);
    const { runOff } = await import("./off.js");
    return runOff(
      target,
      io,
      json,
      invalidNote(`the off switch runs for project ${target.name}, named by ${target.source}`),
      await engineSetUp(root, env),
    );
  }
  if (verb === "serve" && project !== undefined) {
    const serve = { stack, project, args: rest, io, json, root, ledgerFile: file(stack, project) };
    return (await import("./serve.js")).serveVerb({ ...serve, setUp: await engineSetUp(root, env) });
  }
  if (taskVerb && project !== undefined && project.spec.backend === "kubernetes") {
    const { runKubeTaskVerb } = await import("./kube-runtime.js");
    const ledgerAt = verb === "off" ? undefined : file(stack, project);
    return runKubeTaskVerb(verb as TaskVerb, project, kubeTarget(root, stack), rest, io, json, ledgerAt);
  }
  if (verb === "off" && project !== undefined) {
    // The off switch alone: it loads no launcher and no policy (cli/off.ts).
    const { runOff } = await import("./off.js");
    const target = { name: project.spec.name, jobRoot: project.jobRoot };
    return runOff(target, io, json, undefined, await engineSetUp(root, env));
  }
  if (taskVerb && project !== undefined) {
    const { runTaskVerb } = await import("./runtime.js");
    return runTaskVerb(
      verb as TaskVerb,
      project,
      rest,
      io,
      json,
      await engineSetUp(root, env),
      file(stack, project),
      { root, stack, verbose },
    );
  }
  if (ledgerVerb && project !== undefined) {
    const { runLedgerVerb } = await import("./ledger.js");
    return runLedgerVerb(verb as LedgerVerb, stack, project, rest, file(stack, project), io, json);
  }
  return (await import("./stack-verb.js")).stackVerb({
    verb,
    stack,
    project,
    invalid,
    rep,
    io,
    json,
    diff,
    root,
    env,
    ledgerAt: file,
    invalidNote,
  });
}

/**
 * Runs the front as a command on stdout and stderr and sets `process.exitCode`. A failure the front does not know is
 * still one message (one JSON document with --json), never a stack trace. The checkout's `./sandbox` calls it
 * (toolchain/front.cjs), compiled or not.
 */
export async function runCommand(argv: readonly string[], root = projectRoot()): Promise<void> {
  leanDockerClient();
  const io: Io = processIo();
  try {
    process.exitCode = await main(argv, io, root);
  } catch (e) {
    const message = `internal error: ${e instanceof Error ? e.message : String(e)}`;
    if (argv.includes("--json")) {
      io.out(
        `${JSON.stringify({ verb: argv[0] ?? "", ok: false, exitCode: EXIT.failed, error: { kind: "internal", message } })}\n`,
      );
    } else io.err(`${message}\n`);
    process.exitCode = EXIT.failed;
  }
}

if (require.main === module) void runCommand(process.argv.slice(2));
