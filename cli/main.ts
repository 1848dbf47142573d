import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { SpecError } from "../components/spec/errors";
import { launchSpec } from "../components/spec/launch";
import type { ResolvedProject } from "../components/spec/project";
import { configMapFromStackYaml, projectFromConfig } from "../stacks/config";
import { inspectToolchain, missingToolchainMessage } from "../toolchain/pulumi";
import { runStackVerb } from "./engine";
import { runTaskVerb, TASK_VERBS, type TaskVerb } from "./runtime";
import { runScan } from "./scan";

/** Exit codes: 0 done, 1 the engine or a deployment failed, 2 bad input, 3 a tool is missing. */
export const EXIT = { ok: 0, failed: 1, badInput: 2, missingTool: 3 } as const;

const USAGE = `usage: sandbox <verb> [stack] [--json]

stack verbs (default stack: dev):
  check    validate stacks/Pulumi.<stack>.yaml and print the plan; deploys nothing
  preview  check, then preview the stack with the policy pack
  up       check, then deploy the stack with the policy pack (the main job)
  refresh  check, then refresh the stack's state from the engine
  destroy  remove everything the stack deployed (the off switch)

task verbs, on the local Docker engine:
  run <stack> <template> [-- command...]   launch one task in a fresh hardened container
  probe <stack> [template...]              prove every wall inside each template, declared vs observed
  escape <stack> [template...]             try the four escapes (env exfiltration, write outside the job
                                           folder, fork bomb, metadata address); each must be blocked
  off <stack>                              remove every container, network and volume of the project

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
    const s = launchSpec(p, name, `${p.spec.name}-net`);
    lines.push(
      `  template ${name}: ${s.image}, user ${s.user}, drop ${s.capDrop.join(",")}, ${s.resources.vcpu} vCPU, ` +
        `${s.resources.memoryMb} MB, ${s.resources.pids} pids, /tmp ${s.tmpfs.sizeMb} MB, ${s.timeoutSeconds} s, ` +
        `egress ${s.egress.mode === "none" ? "none" : `proxy to ${s.egress.allow.join(", ")}`}, runtime ${s.runtime}`,
    );
  }
  return lines.join("\n");
}

interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
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
  const dash = argv.indexOf("--");
  const head = dash === -1 ? argv : argv.slice(0, dash);
  const json = head.includes("--json");
  const args = [...head.filter((a) => a !== "--json"), ...(dash === -1 ? [] : argv.slice(dash))];
  const [verb = "help", stack = "dev", ...rest] = args;
  if (verb === "help" || verb === "--help" || verb === "-h") {
    io.out(`${USAGE}\n`);
    return EXIT.ok;
  }
  const taskVerb = (TASK_VERBS as readonly string[]).includes(verb);
  if (!(["check", "preview", "up", "refresh", "destroy"].includes(verb) && rest.length === 0) && !taskVerb) {
    io.err(`${USAGE}\n\nunknown command: ${argv.join(" ")}\n`);
    return EXIT.badInput;
  }
  let project: ResolvedProject;
  try {
    project = loadStack(root, stack);
  } catch (e) {
    if (e instanceof SpecError) {
      io.err(
        json
          ? `${JSON.stringify({ ok: false, problems: e.problems })}\n`
          : `${e.message}\nNothing was deployed.\n`,
      );
      return EXIT.badInput;
    }
    throw e;
  }
  if (taskVerb) return runTaskVerb(verb as TaskVerb, project, rest, io, json);
  if (verb === "check") {
    io.out(
      json
        ? `${JSON.stringify({ ok: true, project: project.spec.name, budget: project.budget })}\n`
        : `${describePlan(stack, project)}\n`,
    );
    return EXIT.ok;
  }
  io.err(`${describePlan(stack, project)}\n`);
  const packages = project.spec.backend === "docker" ? ["docker"] : ["kubernetes"];
  const toolchain = inspectToolchain(root, packages, env);
  if (toolchain.missing.length > 0) {
    io.err(
      json
        ? `${JSON.stringify({ ok: false, missing: toolchain.missing })}\n`
        : `\n${missingToolchainMessage(verb, stack, toolchain)}\n`,
    );
    return EXIT.missingTool;
  }
  try {
    return await runStackVerb(
      verb as "preview" | "up" | "refresh" | "destroy",
      stack,
      root,
      toolchain,
      io.out,
    );
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    io.err(`\n${verb} of stack "${stack}" failed:\n${message}\n`);
    return EXIT.failed;
  }
}

if (require.main === module) {
  main(process.argv.slice(2), {
    out: (t) => process.stdout.write(t),
    err: (t) => process.stderr.write(t),
  }).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      process.stderr.write(`internal error: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exitCode = EXIT.failed;
    },
  );
}
