/**
 * `run` through the launch service: when `sandbox serve <stack>` answers on the stack's socket, `run` hands its task to
 * it (one warm launcher, no engine or ledger to open) and shows the output as the service streams it; otherwise, or
 * for an option only a launch in this process can keep (the job folder kept or copied out, input streamed, a folder
 * seeded), it launches directly. `--verbose` says which, and why.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { launchSpec, projectNetworkName, type ResolvedProject } from "../components/model";
import { AGENT_KEY_ENV } from "../runtime/agent-keys";
import { BudgetRefused } from "../runtime/ledger";
import { SandboxClient, SandboxConnectionError, SandboxServiceError } from "../runtime/serve/client";
import type { LimitHit, TaskResult } from "../runtime/task";
import type { Io } from "./output";
import { type RunOptions, runSpec } from "./run-options";
import { runOne } from "./run-task";
import { type Failure, failureOf, report, templatesOf } from "./task-failure";

/** The socket of a stack's launch service: in the project's state folder, beside the engine's state. */
export function serveSocketPath(root: string, stack: string): string {
  return join(root, ".sandbox", "serve", `${stack}.sock`);
}

/** The most of the files `run` sends the service (their contents travel in the request). */
const MAX_FILES_BYTES = 8 * 1024 * 1024;

/** Why `run` with these options launches directly even when a service answers, or undefined. */
function directOnly(run: RunOptions): string | undefined {
  if (run.out !== undefined) return "--out copies the job folder, which the service removes";
  if (run.keep) return "--keep keeps the job folder, which the service removes";
  if (run.stdin) return "-i streams this command's input";
  if (run.seeds.some((s) => s.kind === "dir")) return "--dir seeds a folder";
  return undefined;
}

/** The `--file` seeds as the request's files, or why they cannot travel in it (not UTF-8 text, too large). */
function seedFiles(run: RunOptions): Record<string, string> | string {
  const files: Record<string, string> = {};
  let bytes = 0;
  const utf8 = new TextDecoder("utf-8", { fatal: true });
  for (const seed of run.seeds) {
    if (seed.kind !== "file") continue;
    bytes += statSync(seed.source).size;
    if (bytes > MAX_FILES_BYTES) return `the --file contents pass ${MAX_FILES_BYTES} bytes`;
    try {
      files[seed.name] = utf8.decode(readFileSync(seed.source));
    } catch {
      return `--file ${seed.name} is not UTF-8 text`;
    }
  }
  return files;
}

/** The service began to stop between its health answer and the launch: nothing started there. */
class ServiceStopping extends Error {}

/** The service's refusal in `run`'s terms. */
class ServiceRefused extends Error {
  constructor(readonly failure: Failure) {
    super(failure.message);
  }
}

const FAILURE_KINDS: Readonly<Record<string, Failure["kind"]>> = {
  "bad-input": "bad-input",
  "too-large": "bad-input",
  unauthorized: "refused",
  refused: "refused",
  "not-deployed": "not-deployed",
  ledger: "ledger",
  "image-missing": "image-missing",
  "runtime-missing": "runtime-missing",
};

export interface ThroughService {
  readonly root: string;
  readonly stack: string;
  readonly verbose: boolean;
  readonly project: ResolvedProject;
  readonly run: RunOptions;
  readonly io: Io;
  readonly json: boolean;
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * Runs `run`'s task through the stack's launch service and returns its exit code, or undefined when no service
 * answers (or the options need a direct launch): the caller then launches directly.
 */
export async function runThroughService(c: ThroughService): Promise<number | undefined> {
  const { project, run, io } = c;
  const env = c.env ?? process.env;
  const say = (text: string) => {
    if (c.verbose) io.err(`run: ${text}\n`);
  };
  const socket = serveSocketPath(c.root, c.stack);
  const why = directOnly(run);
  if (why !== undefined) {
    say(`launching directly (${why})`);
    return undefined;
  }
  if (!existsSync(socket)) {
    say(`launching directly: no launch service answers for stack ${c.stack} (no socket at ${socket})`);
    return undefined;
  }
  const key = env[AGENT_KEY_ENV];
  let client: SandboxClient;
  let pid: number;
  try {
    client = new SandboxClient({ socket, ...(key === undefined || key === "" ? {} : { token: key }) });
    const health = await client.health({ timeoutMs: 3000 });
    if (health.project !== project.spec.name || health.stack !== c.stack) {
      say(
        `launching directly: the service at ${socket} serves project ${health.project}, not ${project.spec.name}`,
      );
      return undefined;
    }
    pid = health.pid;
  } catch (e) {
    say(`launching directly: ${socket} is there but no launch service answers (${(e as Error).message})`);
    return undefined;
  }
  const files = seedFiles(run);
  if (typeof files === "string") {
    say(`launching directly (${files})`);
    return undefined;
  }
  say(`through the launch service at ${socket} (pid ${pid})`);
  const abort = new AbortController();
  let signalled: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    signalled = signal;
    io.err(`\n${signal}: stopping; the service stops the task...\n`);
    abort.abort();
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    const [template = ""] = templatesOf(project, [run.template]);
    const spec = runSpec(launchSpec(project, template, projectNetworkName(project.spec.name)), run);
    const runner = {
      async run(
        _spec: unknown,
        request: { command?: readonly string[]; onOutput?: (s: "stdout" | "stderr", t: string) => void },
      ): Promise<TaskResult> {
        try {
          const r = await client.run({
            template,
            ...(request.command === undefined ? {} : { command: request.command }),
            ...(Object.keys(files).length === 0 ? {} : { files }),
            ...(run.agent === undefined ? {} : { agent: run.agent }),
            ...(Object.keys(run.env).length === 0 ? {} : { env: run.env }),
            ...(run.timeoutSeconds === undefined ? {} : { timeoutSeconds: run.timeoutSeconds }),
            onStdout: (t) => request.onOutput?.("stdout", t),
            onStderr: (t) => request.onOutput?.("stderr", t),
            signal: abort.signal,
          });
          return {
            id: r.id,
            container: r.container,
            exitCode: r.exitCode,
            stdout: r.stdout,
            stderr: r.stderr,
            limits: r.limits as LimitHit[],
            killedByLauncher: r.killedByLauncher,
            durationMs: r.durationMs,
            jobDir: join(project.jobRoot, r.id),
            stoppedByCap: r.stoppedByCap,
            ...(r.removed ? { removed: true } : {}),
            ...(r.chargeUsd === null ? {} : { chargeUsd: r.chargeUsd }),
            liveDropped: r.dropped,
            ...(r.egress === undefined ? {} : { egress: r.egress as TaskResult["egress"] }),
            ...(r.broker === undefined ? {} : { broker: r.broker as TaskResult["broker"] }),
          };
        } catch (e) {
          if (!(e instanceof SandboxServiceError)) throw e;
          // Every slot busy: the same refusal as a direct launch's, so that `--wait` waits for one.
          if (e.error.reason === "concurrency") throw new BudgetRefused(e.message, "concurrency");
          if (e.kind === "shutting-down") throw new ServiceStopping(e.message);
          // The key travelled as the request's bearer token: named as the user gave it.
          const whose = e.kind === "unauthorized" && key ? ` (the key in ${AGENT_KEY_ENV})` : "";
          throw new ServiceRefused({
            kind: FAILURE_KINDS[e.kind] ?? "engine",
            message: `${e.message}${whose}`,
          });
        }
      },
    };
    // A name of its own for the task's folder on this side: nothing is made under it (the service names the task).
    const localId = `${Date.now().toString(36)}-${randomBytes(3).toString("hex")}`;
    return await runOne({ kind: "docker", runner }, project, spec, run, localId, io, c.json);
  } catch (e) {
    if (signalled !== undefined) return signalled === "SIGINT" ? 130 : 143;
    if (e instanceof ServiceStopping) {
      say(`launching directly: the service is stopping (${e.message})`);
      return undefined;
    }
    if (e instanceof ServiceRefused) return report("run", e.failure, io, c.json);
    if (e instanceof SandboxConnectionError)
      return report(
        "run",
        { kind: "engine", message: `run: the launch service at ${socket} stopped answering: ${e.message}` },
        io,
        c.json,
      );
    return report("run", failureOf("run", e), io, c.json);
  } finally {
    process.removeListener("SIGINT", onSignal);
    process.removeListener("SIGTERM", onSignal);
  }
}
