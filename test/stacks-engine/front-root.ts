// A throwaway checkout for driving the real front (`main`) through the real Pulumi and Docker engines: a temporary
// root with the project file, the stack's config, and links to the checkout's policy pack, Docker provider and
// packages. Its own state (`.sandbox/state`) and Pulumi home live in the temporary root, so no tracked file and no
// other stack is touched.
import { spawn } from "node:child_process";
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../../cli/main";
import { TEST_IMAGE } from "../helpers/docker";

export const REPO = join(__dirname, "../..");

export interface FrontRoot {
  readonly root: string;
  /** The project name every stack config of this root declares (unique per test file). */
  readonly project: string;
  readonly env: NodeJS.ProcessEnv;
  /** Writes `stacks/Pulumi.<stack>.yaml` for this root's project; `budget` and `image` vary per test. */
  writeStack(stack: string, opts?: { maxConcurrentTasks?: number; image?: string }): void;
  /** Runs the front in this process and captures what it writes. */
  run(...argv: string[]): Promise<{ code: number; out: string; err: string }>;
  /** Starts the front as a child process (signals are per process); `mark` is put in its environment. */
  spawn(mark: string, ...argv: string[]): ReturnType<typeof spawn>;
  /** Lock files the file backend holds for `stack`. */
  locks(stack: string): string[];
  cleanup(): void;
}

export function frontRoot(prefix: string): FrontRoot {
  const project = `${prefix}-${Math.random().toString(36).slice(2, 7)}`;
  const root = mkdtempSync(join(tmpdir(), `${project}-root-`));
  mkdirSync(join(root, "stacks"));
  cpSync(join(REPO, "Pulumi.yaml"), join(root, "Pulumi.yaml"));
  for (const link of ["policy", "providers", "node_modules", "tsconfig.json", "package.json"]) {
    symlinkSync(join(REPO, link), join(root, link));
  }
  symlinkSync(join(REPO, "stacks", "index.ts"), join(root, "stacks", "index.ts"));
  writeFileSync(
    join(root, "front.ts"),
    `import { main } from ${JSON.stringify(join(REPO, "cli/main.ts"))};\n` +
      "main(process.argv.slice(2), { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) }, " +
      `${JSON.stringify(root)}).then((c) => { process.exitCode = c; });\n`,
  );
  // The backend and the Pulumi home are the root's own, whatever the caller's environment says.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PULUMI_BACKEND_URL: "",
    PULUMI_HOME: join(root, ".sandbox", "pulumi-home"),
    PULUMI_CONFIG_PASSPHRASE: "",
    PULUMI_CONFIG_PASSPHRASE_FILE: "",
  };
  return {
    root,
    project,
    env,
    writeStack(stack, opts = {}) {
      writeFileSync(
        join(root, "stacks", `Pulumi.${stack}.yaml`),
        [
          "config:",
          `  sandbox:name: ${project}`,
          `  sandbox:jobRoot: ${join(root, "jobs")}`,
          "  sandbox:budget:",
          "    monthlyCapUsd: 10",
          `    maxConcurrentTasks: ${opts.maxConcurrentTasks ?? 2}`,
          "  sandbox:templates:",
          "    default:",
          `      image: ${opts.image ?? TEST_IMAGE}`,
          "      timeoutSeconds: 120",
          "",
        ].join("\n"),
      );
    },
    async run(...argv) {
      const out: string[] = [];
      const err: string[] = [];
      const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t) }, root, env);
      return { code, out: out.join(""), err: err.join("") };
    },
    spawn(mark, ...argv) {
      return spawn(join(REPO, "node_modules", ".bin", "tsx"), [join(root, "front.ts"), ...argv], {
        cwd: REPO,
        env: { ...env, SANDBOX_TEST_MARK: mark },
        stdio: ["ignore", "pipe", "pipe"],
      });
    },
    locks(stack) {
      const dir = join(root, ".sandbox", "state", ".pulumi", "locks", "organization", "sandbox", stack);
      try {
        return readdirSync(dir);
      } catch {
        return [];
      }
    },
    cleanup() {
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** Live processes whose environment holds `SANDBOX_TEST_MARK=<mark>`: what a spawned front left behind. */
export function processesWithMark(mark: string): string[] {
  const left: string[] = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      if (!readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").includes(`SANDBOX_TEST_MARK=${mark}`))
        continue;
      left.push(`${pid} ${readFileSync(`/proc/${pid}/cmdline`, "latin1").replace(/\0/g, " ")}`);
    } catch {
      // ended while being read
    }
  }
  return left;
}
