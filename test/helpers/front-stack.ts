/**
 * A stack of its own for tests that drive the front (`main`) on the real engine: a unique project name, a root with
 * `stacks/Pulumi.<stack>.yaml` and a job root in a temp folder, so that nothing touches another test's objects.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Dockerode from "dockerode";
import { afterAll, beforeAll } from "vitest";
import { main } from "../../cli/main";
import { offSwitch } from "../../runtime/offSwitch";
import { requireDocker, TEST_IMAGE } from "./docker";

export interface FrontStack {
  /** The project's name (`<prefix>-<random>`). */
  readonly name: string;
  readonly root: string;
  readonly jobRoot: string;
  /** Runs the front with `argv` in the stack's root; what it printed and its exit code. */
  front(...argv: string[]): Promise<{ code: number; out: string; err: string }>;
  /** The off switch for the project (job folders included), then the root removed. */
  cleanup(docker: Dockerode | undefined): Promise<void>;
}

/**
 * Writes stack `stack` of a new project: `config` holds the YAML lines after `sandbox:name` and `sandbox:jobRoot`
 * (two-space indented under `config:`).
 */
export function frontStack(prefix: string, stack: string, config: readonly string[]): FrontStack {
  const name = `${prefix}-${Math.random().toString(36).slice(2, 8)}`;
  const root = mkdtempSync(join(tmpdir(), `${name}-root-`));
  const jobRoot = join(root, "jobs");
  mkdirSync(join(root, "stacks"));
  writeFileSync(
    join(root, "stacks", `Pulumi.${stack}.yaml`),
    ["config:", `  sandbox:name: ${name}`, `  sandbox:jobRoot: ${jobRoot}`, ...config, ""].join("\n"),
  );
  return {
    name,
    root,
    jobRoot,
    async front(...argv) {
      const out: string[] = [];
      const err: string[] = [];
      const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t) }, root);
      return { code, out: out.join(""), err: err.join("") };
    },
    async cleanup(docker) {
      if (docker) await offSwitch(docker, name, { jobRoot });
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/**
 * The config lines of a project with a $100 cap (and `budget` lines more) and one template `default` of the test
 * image with a deadline of `timeoutSeconds` (and `template` lines more), then `more` lines.
 */
export function oneTemplate(
  opts: { timeoutSeconds?: number; budget?: readonly string[]; more?: readonly string[] } = {},
): string[] {
  return [
    "  sandbox:budget:",
    "    monthlyCapUsd: 100",
    ...(opts.budget ?? []),
    "  sandbox:templates:",
    "    default:",
    `      image: ${TEST_IMAGE}`,
    `      timeoutSeconds: ${opts.timeoutSeconds ?? 60}`,
    ...(opts.more ?? []),
  ];
}

/**
 * A front stack for a test file on the real engine: the engine is asked for before the file's tests (the test fails
 * saying how to get one), and the project's objects and root are removed after them.
 */
export function frontStackOnEngine(
  prefix: string,
  stack: string,
  config: readonly string[],
): FrontStack & { docker(): Dockerode } {
  const made = frontStack(prefix, stack, config);
  let docker: Dockerode | undefined;
  beforeAll(async () => {
    docker = await requireDocker();
  });
  afterAll(async () => {
    await made.cleanup(docker);
  });
  return {
    ...made,
    docker() {
      if (docker === undefined) throw new Error("the engine was not reached before this test");
      return docker;
    },
  };
}
