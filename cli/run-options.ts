import { existsSync, readdirSync, statSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { AGENT_NAME, type LaunchSpec } from "../components/model";
import { isSafeJobName, type JobSeed } from "../runtime/jobs";
import type { TaskResult } from "../runtime/launcher";

/**
 * `run <stack> <template> [options] [-- command...]`: what the options mean, checked before anything starts.
 *
 *   --file name=path   copy the host file `path` into the job folder as `name` (repeatable)
 *   --dir path         copy the contents of the host folder `path` into the job folder (repeatable)
 *   --out dir          after the task, copy the job folder's contents to `dir` (new, or an empty folder)
 *   --keep             keep the job folder on the host (by default it is removed after the copy to --out)
 *   --agent name       the agent the task is for (recorded in the ledger; needs one of its keys in SANDBOX_AGENT_KEY)
 *   --env NAME=value   a variable for this task only (repeatable), judged by the pack's rules like the template's
 *   --timeout seconds  this task's deadline, at most the template's
 *   --wait[=seconds]   when every slot is busy, wait for one (at most `seconds`, 600 by default) instead of refusing
 *   -i, --stdin        give the task this command's standard input (streamed; its end closes the task's input)
 */
export interface RunOptions {
  readonly template: string;
  readonly command?: readonly string[];
  readonly seeds: readonly JobSeed[];
  readonly out?: string;
  readonly keep: boolean;
  readonly agent?: string;
  /** Variables for this task only, besides the template's. */
  readonly env: Readonly<Record<string, string>>;
  /** This task's deadline in seconds (at most the template's; checked against it when the template is known). */
  readonly timeoutSeconds?: number;
  /** How long to wait for a slot when every one is busy; refused at once when absent. */
  readonly waitSeconds?: number;
  /** `-i`: the task reads this command's standard input. */
  readonly stdin: boolean;
}

/** `--wait` without a value: ten minutes. */
export const DEFAULT_WAIT_SECONDS = 600;

/** A variable name as a shell and the engine take it. */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Variables the toolkit sets itself for a template (proxy and broker addresses): never a task's to change. */
export const TOOLKIT_VARIABLES: ReadonlySet<string> = new Set([
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "SANDBOX_BROKER_URL",
]);

/** At most this much of `--env` in all (names and values), like a small environment. */
export const MAX_ENV_BYTES = 64 * 1024;

/** Bad `run` arguments: one message naming the option, the value and what is allowed. */
export class RunUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RunUsageError";
  }
}

export const RUN_USAGE =
  "run <stack> <template> [--file name=path]... [--dir path]... [--out dir] [--keep] [--agent name] [--env NAME=value]... [--timeout seconds] [--wait[=seconds]] [-i] [--json] [-- command...]";

/** The exit code of `run` when the task ran: its own, or 124 when its deadline killed it (as `timeout` does). */
export function runExitCode(result: TaskResult): number {
  if (result.limits.includes("timeout")) return 124;
  return result.exitCode ?? 1;
}

/** Parses `run`'s arguments after the stack; paths are relative to `cwd` (where the user typed the command). */
export function parseRunArgs(rest: readonly string[], cwd: string): RunOptions {
  const dash = rest.indexOf("--");
  const head = dash === -1 ? rest : rest.slice(0, dash);
  const command = dash === -1 ? undefined : rest.slice(dash + 1);
  const positional: string[] = [];
  const seeds: JobSeed[] = [];
  let out: string | undefined;
  let keep = false;
  let stdin = false;
  let agent: string | undefined;
  const env: Record<string, string> = {};
  let timeoutSeconds: number | undefined;
  let waitSeconds: number | undefined;
  for (let i = 0; i < head.length; i++) {
    const arg = head[i] ?? "";
    const eq = arg.indexOf("=");
    const flag = arg.startsWith("--") && eq !== -1 ? arg.slice(0, eq) : arg;
    const takesValue = ["--file", "--dir", "--out", "--agent", "--env", "--timeout"].includes(flag);
    let value: string | undefined;
    if (takesValue) {
      value = flag !== arg ? arg.slice(eq + 1) : head[++i];
      if (value === undefined || value === "") throw new RunUsageError(`${flag} needs a value: ${RUN_USAGE}`);
    }
    if (flag === "--keep") keep = true;
    else if (flag === "-i" || flag === "--stdin") stdin = true;
    else if (flag === "--wait") {
      if (waitSeconds !== undefined) throw new RunUsageError("--wait is given twice; give it once");
      waitSeconds = flag === arg ? DEFAULT_WAIT_SECONDS : wholeSeconds("--wait", arg.slice(eq + 1));
    } else if (flag === "--agent") {
      if (agent !== undefined)
        throw new RunUsageError(`--agent is given twice ("${agent}", "${value}"); name one agent`);
      if (!AGENT_NAME.test(value ?? "")) {
        throw new RunUsageError(
          `--agent "${value}": an agent name is lower-case letters, digits, ., _ and -, starting with a letter or digit, at most 64 characters`,
        );
      }
      agent = value;
    } else if (flag === "--env") {
      const [name, v] = envEntry(value ?? "");
      if (name in env) throw new RunUsageError(`--env ${name} is given twice; give each variable once`);
      env[name] = v;
    } else if (flag === "--timeout") {
      if (timeoutSeconds !== undefined)
        throw new RunUsageError(`--timeout is given twice ("${timeoutSeconds}", "${value}"); give one`);
      timeoutSeconds = wholeSeconds("--timeout", value ?? "");
    } else if (flag === "--file") seeds.push(fileSeed(value ?? "", cwd));
    else if (flag === "--dir") seeds.push({ kind: "dir", source: existingDir("--dir", value ?? "", cwd) });
    else if (flag === "--out") {
      if (out !== undefined)
        throw new RunUsageError(`--out is given twice ("${out}", "${value}"); name one folder`);
      out = outDir(value ?? "", cwd);
    } else if (arg.startsWith("-")) {
      throw new RunUsageError(
        `unknown option "${arg}" for run; allowed: --file name=path, --dir path, --out dir, --keep, --agent name, --env NAME=value, --timeout seconds, --wait[=seconds], -i, --json (a task's own arguments go after --)`,
      );
    } else positional.push(arg);
  }
  if (positional.length !== 1) {
    throw new RunUsageError(
      `run takes exactly one template${positional.length > 1 ? ` (got ${positional.map((p) => `"${p}"`).join(", ")})` : ""}: ${RUN_USAGE}`,
    );
  }
  const names = seeds.flatMap((s) => (s.kind === "file" ? [s.name] : []));
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice !== undefined) throw new RunUsageError(`--file names "${twice}" twice; each name once`);
  const envBytes = Object.entries(env).reduce(
    (n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v) + 2,
    0,
  );
  if (envBytes > MAX_ENV_BYTES)
    throw new RunUsageError(
      `--env: ${envBytes} bytes in all; at most ${MAX_ENV_BYTES} (put more in a --file)`,
    );
  return {
    template: positional[0] ?? "",
    ...(command !== undefined && command.length > 0 ? { command } : {}),
    seeds,
    ...(out === undefined ? {} : { out }),
    keep,
    stdin,
    ...(agent === undefined ? {} : { agent }),
    env,
    ...(timeoutSeconds === undefined ? {} : { timeoutSeconds }),
    ...(waitSeconds === undefined ? {} : { waitSeconds }),
  };
}

/** `NAME=value` of `--env`: a plain variable name the toolkit does not set itself, and a value without NUL. */
function envEntry(value: string): [string, string] {
  const eq = value.indexOf("=");
  const name = eq < 0 ? value : value.slice(0, eq);
  if (eq <= 0 || !ENV_NAME.test(name)) {
    throw new RunUsageError(
      `--env ${JSON.stringify(value)}: expected NAME=value, NAME being letters, digits and _ (not starting with a digit)`,
    );
  }
  if (TOOLKIT_VARIABLES.has(name)) {
    throw new RunUsageError(
      `--env ${name}: the toolkit sets ${name} itself (the proxy's or the broker's address); it is not a task's to change`,
    );
  }
  const v = value.slice(eq + 1);
  if (v.includes("\0")) throw new RunUsageError(`--env ${name}: a value cannot hold a NUL byte`);
  return [name, v];
}

/** `--timeout`, `--wait=`: whole seconds, at least 1. */
function wholeSeconds(flag: string, value: string): number {
  const n = /^\d{1,7}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isInteger(n) || n < 1)
    throw new RunUsageError(`${flag} ${JSON.stringify(value)}: expected whole seconds, at least 1`);
  return n;
}

function fileSeed(value: string, cwd: string): JobSeed {
  const eq = value.indexOf("=");
  if (eq <= 0) {
    throw new RunUsageError(
      `--file "${value}": expected name=path (the name in the job folder, then the host file), e.g. --file run.sh=./task.sh`,
    );
  }
  const name = value.slice(0, eq);
  if (!isSafeJobName(name)) {
    throw new RunUsageError(
      `--file "${value}": the name "${name}" must be a relative path inside the job folder (no leading /, no ..)`,
    );
  }
  const source = resolve(cwd, value.slice(eq + 1));
  let ok = false;
  try {
    ok = statSync(source).isFile();
  } catch {
    // reported below
  }
  if (!ok) throw new RunUsageError(`--file "${value}": ${source} is not a readable file`);
  return { kind: "file", name, source };
}

function existingDir(flag: string, value: string, cwd: string): string {
  const path = resolve(cwd, value);
  let ok = false;
  try {
    ok = statSync(path).isDirectory();
  } catch {
    // reported below
  }
  if (!ok) throw new RunUsageError(`${flag} "${value}": ${path} is not a folder`);
  return path;
}

/** The result folder must be new or empty: the toolkit never overwrites a user's files. */
function outDir(value: string, cwd: string): string {
  const path = isAbsolute(value) ? value : resolve(cwd, value);
  if (!existsSync(path)) return path;
  let empty = false;
  try {
    empty = statSync(path).isDirectory() && readdirSync(path).length === 0;
  } catch {
    // reported below
  }
  if (!empty)
    throw new RunUsageError(`--out "${value}": ${path} exists and is not an empty folder; name a new one`);
  return path;
}

/**
 * The template's launch spec with this run's own variables and deadline (`--env`, `--timeout`): what the preflight
 * judges and the ledger prices, like the template's.
 */
export function runSpec(spec: LaunchSpec, run: RunOptions): LaunchSpec {
  if (run.timeoutSeconds !== undefined && run.timeoutSeconds > spec.timeoutSeconds) {
    throw new RunUsageError(
      `--timeout ${run.timeoutSeconds}: at most template "${spec.template}"'s deadline, ${spec.timeoutSeconds} s`,
    );
  }
  return {
    ...spec,
    env: { ...spec.env, ...run.env },
    ...(run.timeoutSeconds === undefined ? {} : { timeoutSeconds: run.timeoutSeconds }),
  };
}
