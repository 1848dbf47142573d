import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { launchSpec, projectNetworkName, type ResolvedProject, SpecError } from "../components/model";
import { dockerClient } from "../runtime/docker/client";
import { configMapFromStackYaml, offTargetFromConfig, projectFromConfig } from "../stacks/config";
import { inspectToolchain, missingToolchainMessage } from "../toolchain/pulumi";
import { engineEnv, runStackVerb, type StackVerb, stateOnlyWorkDir } from "./engine";
import { targetFromLabels, targetFromState } from "./identity";
import { type Io, Reporter } from "./output";
import { type OffTarget, runOff, runTaskVerb, TASK_VERBS, type TaskVerb } from "./runtime";
import { runScan } from "./scan";

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

/** The verbs that act on a stack through the engine (and `check`, which only reads its config). */
const STACK_VERBS = ["check", "preview", "up", "refresh", "destroy"] as const;

const USAGE = `usage: sandbox <verb> [stack] [--json] [--verbose]

stack verbs (default stack: dev):
  check    validate stacks/Pulumi.<stack>.yaml and print the plan; deploys nothing
  preview  check, then preview the stack with the policy pack (after a refresh: drift is shown)
  up       check, then deploy the stack with the policy pack (the main job); what drifted is put back
  refresh  check, then refresh the stack's state from the engine
  destroy  remove everything the stack deployed (the off switch; works whatever the config says now)

  --json     one JSON document on stdout, nothing else there
  --verbose  the engine's own output and the full detail of a failure (stderr)
  exit codes: 0 done, 1 the engine failed or the policy pack refused, 2 bad input, 3 a tool is missing,
              130/143 cancelled (Ctrl-C once cancels and waits; twice kills)

task verbs, on the local Docker engine:
  run <stack> <template> [--file name=path] [--dir path] [--keep] [--out dir] [-- command...]
                                           launch one task in a fresh hardened container
  probe <stack> [template...]              prove every wall inside each template, declared vs observed
  escape <stack> [template...]             try the four escapes (env exfiltration, write outside the job
                                           folder, fork bomb, metadata address); each must be blocked
  off <stack>                              remove every container, network, volume and job folder of the
                                           project (works whatever the config says now)

files, no stack:
  scan [--format text|json|sarif] [--config f] <file|folder|->...
           judge Kubernetes YAML, Compose files, pulumi preview --json / stack export and launch specs
           with the policy pack's rules (exit 0 pass, 1 a mandatory rule fails, 2 bad input)

other:
  test     run the test suite (type check, lint, tests)
  help     print this text`;

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
  const file = join("stacks", `Pulumi.${stack}.yaml`);
  const path = join(root, file);
  if (!existsSync(path)) {
    throw new SpecError(
      [
        {
          key: file,
          value: undefined,
          message: `no such stack config file; create it (see stacks/Pulumi.dev.yaml)`,
        },
      ],
      "invalid stack",
    );
  }
  return projectFromConfig(configMapFromStackYaml(readFileSync(path, "utf8"), file), stack);
}

/** The plan a person reads before anything is deployed: budget, and per template its walls. */
export function describePlan(stack: string, p: ResolvedProject): string {
  const lines = [
    `stack ${stack}: project ${p.spec.name} on ${p.spec.backend}${p.spec.enabled ? "" : " (DISABLED: nothing new may start)"}`,
    `  budget: ${p.budget.arithmetic} ≤ cap $${p.budget.capUsd.toFixed(2)} (a slot the size of template ${p.largestTemplate})`,
  ];
  for (const name of Object.keys(p.spec.templates).sort()) {
    const s = launchSpec(p, name, projectNetworkName(p.spec.name));
    lines.push(
      `  template ${name}: ${s.image}, user ${s.user}, drop ${s.capDrop.join(",")}, ${s.resources.vcpu} vCPU, ` +
        `${s.resources.memoryMb} MB, ${s.resources.pids} pids, /tmp ${s.tmpfs.sizeMb} MB, ${s.timeoutSeconds} s, ` +
        `egress ${s.egress.mode === "none" ? "none" : `proxy to ${s.egress.allow.join(", ")}`}, runtime ${s.runtime}`,
    );
  }
  return lines.join("\n");
}

/** Flags every verb takes (before `--`): `--json` and `--verbose`. */
function parseFlags(argv: readonly string[]) {
  const dash = argv.indexOf("--");
  const head = dash === -1 ? argv : argv.slice(0, dash);
  const flags = new Set(["--json", "--verbose", "-v"]);
  return {
    json: head.includes("--json"),
    verbose: head.includes("--verbose") || head.includes("-v"),
    args: [...head.filter((a) => !flags.has(a)), ...(dash === -1 ? [] : argv.slice(dash))],
  };
}

/** The raw `namespace:key` map of a stack's config file, or undefined when it cannot be read or parsed. */
function rawConfig(root: string, stack: string): Record<string, string> | undefined {
  try {
    const file = join("stacks", `Pulumi.${stack}.yaml`);
    return configMapFromStackYaml(readFileSync(join(root, file), "utf8"), file);
  } catch {
    return undefined;
  }
}

/**
 * The off switch's target when the config no longer passes: the name the stack's last deployment exported, else the
 * name on the objects the stack made (their labels), else the config read leniently (name or its default).
 */
async function offTarget(
  root: string,
  stack: string,
  env: NodeJS.ProcessEnv,
): Promise<OffTarget & { source: string }> {
  const lenient = offTargetFromConfig(rawConfig(root, stack) ?? {}, stack);
  const backend = engineEnv(root, env).PULUMI_BACKEND_URL ?? "";
  let found = backend.startsWith("file://") ? targetFromState(backend.slice(7), stack) : undefined;
  if (found === undefined) {
    try {
      found = await targetFromLabels(dockerClient(env), stack);
    } catch {
      // no engine: runOff says so in its own words
    }
  }
  if (found === undefined)
    return { ...lenient, source: "the config's name (nothing of the stack was found)" };
  return {
    name: found.name,
    jobRoot: found.jobRoot ?? lenient.jobRoot,
    source: `the stack's ${found.source}`,
  };
}

/** Runs the front with `argv` (without node and script). Returns the exit code; never throws for bad input. */
export async function main(
  argv: readonly string[],
  io: Io,
  root = projectRoot(),
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  // `scan` takes files and folders, not a stack: it has its own arguments and never loads a stack config.
  if (argv[0] === "scan") return runScan(argv.slice(1), io, { cwd: env.INIT_CWD ?? process.cwd() });
  const { json, verbose, args } = parseFlags(argv);
  const [verb = "help", stack = "dev", ...rest] = args;
  const rep = new Reporter(io, json, verbose);
  if (verb === "help" || verb === "--help" || verb === "-h") {
    io.out(`${USAGE}\n`);
    return EXIT.ok;
  }
  const taskVerb = (TASK_VERBS as readonly string[]).includes(verb);
  if (!((STACK_VERBS as readonly string[]).includes(verb) && rest.length === 0) && !taskVerb) {
    const message = `unknown command: ${argv.join(" ")}`;
    if (json)
      return rep.failure({
        verb,
        stack,
        ok: false,
        exitCode: EXIT.badInput,
        error: { kind: "bad-input", message },
      });
    io.err(`${USAGE}\n\n${message}\n`);
    return EXIT.badInput;
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
  if (verb === "off" && project === undefined) {
    const target = await offTarget(root, stack, env);
    return runOff(
      target,
      io,
      json,
      invalidNote(`the off switch runs for project ${target.name}, named by ${target.source}`),
    );
  }
  if (taskVerb && project !== undefined) return runTaskVerb(verb as TaskVerb, project, rest, io, json);
  if (verb === "check" && project !== undefined) {
    return rep.result(
      { verb, stack, ok: true, exitCode: EXIT.ok, project: project.spec.name, budget: project.budget },
      describePlan(stack, project),
    );
  }
  if (project !== undefined && !json) io.err(`${describePlan(stack, project)}\n`);
  const backend =
    project?.spec.backend ??
    (rawConfig(root, stack)?.["sandbox:backend"] === "kubernetes" ? "kubernetes" : "docker");
  const toolchain = inspectToolchain(root, [backend], env);
  if (toolchain.missing.length > 0) {
    return rep.failure({
      verb,
      stack,
      ok: false,
      exitCode: EXIT.missingTool,
      missing: toolchain.missing,
      error: { kind: "missing-tool", message: `\n${missingToolchainMessage(verb, stack, toolchain)}` },
    });
  }
  const stateOnly = project === undefined ? stateOnlyWorkDir(root, stack) : undefined;
  if (stateOnly !== undefined) {
    const noFile = invalid?.problems[0]?.message.startsWith("no such stack config file") === true;
    rep.note(
      noFile
        ? `stack ${stack} has no config file; destroy works from the stack's state alone`
        : invalidNote("destroy works from the stack's state alone"),
    );
  }
  try {
    return await runStackVerb(verb as StackVerb, stack, root, toolchain, {
      reporter: rep,
      env,
      ...(stateOnly === undefined ? {} : { workDir: stateOnly.dir }),
    });
  } finally {
    stateOnly?.cleanup();
  }
}

if (require.main === module) {
  const io: Io = { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) };
  main(process.argv.slice(2), io).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      // Not a failure the front knows: still one message (one JSON document with --json), never a stack trace.
      const message = `internal error: ${e instanceof Error ? e.message : String(e)}`;
      if (process.argv.includes("--json")) {
        io.out(
          `${JSON.stringify({ verb: process.argv[2] ?? "", ok: false, exitCode: EXIT.failed, error: { kind: "internal", message } })}\n`,
        );
      } else io.err(`${message}\n`);
      process.exitCode = EXIT.failed;
    },
  );
}
