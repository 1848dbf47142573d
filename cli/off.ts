/**
 * The off switch verb, and what every task verb shares to reach the engine: the connection (or the failure saying how
 * to start one) and the one set-up a verb may run when it finds no engine or an image missing. Apart from the other
 * task verbs (cli/runtime.ts), so that `off` loads neither the launcher nor the policy's rules: it only removes.
 */
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import type Dockerode from "dockerode";
import { dockerClient } from "../runtime/docker/client";
import { isLedgerUrl } from "../runtime/ledger";
import { OffSwitchError, offSwitch } from "../runtime/offSwitch";
import { ledgerTargetFromConfig } from "../stacks/config";
import { dockerEngineProblem } from "./engine-host";
import { ledgerFile } from "./ledger-file";
import type { Io } from "./output";
import { rawConfig } from "./targets";
import { type Failure, failureOf, report } from "./task-failure";

/** The local engine, or the failure saying how to start it. */
export async function connect(verb: string): Promise<Dockerode | Failure> {
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

export function isFailure(x: Dockerode | Failure): x is Failure {
  return typeof (x as Partial<Failure>).kind === "string";
}

/** What one attempt of a verb came to: its exit code, or a failure not yet reported. */
export type Attempt = number | (Failure & { started: boolean });

/**
 * Runs `attempt`; when it failed for want of an engine or an image before any task started and `setUp` is given,
 * runs the set-up once and tries again. Reports a failure once, in the end.
 */
export async function withSetUp(
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
  // The engine is asked first only when there is a note to say once it answers; otherwise the off switch's own first
  // call asks it (a round trip fewer), and only a call that failed otherwise than by an object left asks why.
  let docker: Dockerode | Failure | undefined;
  if (note === undefined) {
    try {
      docker = dockerClient();
    } catch {
      // an engine address the client refuses: said below, as the engine's problem
    }
  }
  docker ??= await connect("off");
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
    if (!(e instanceof OffSwitchError)) {
      // Nothing the engine was asked to remove failed: the engine itself did not answer, or answered otherwise.
      const problem = await dockerEngineProblem();
      if (problem !== undefined) return { kind: "no-engine", message: `off: ${problem}`, started: false };
    }
    return { ...failureOf("off", e), started: true };
  }
}

/**
 * After a successful off switch: the checkout's local PostgreSQL stops when the stack's ledger is kept there. A
 * config that cannot be read names no such server, and a server that will not stop is said, never an error.
 */
export async function afterOff(root: string, stack: string, env: NodeJS.ProcessEnv, io: Io): Promise<void> {
  let place: string;
  try {
    place = ledgerFile({ jobRoot: root, ...ledgerTargetFromConfig(rawConfig(root, stack) ?? {}) }, env);
  } catch {
    return;
  }
  // Only a shared ledger (a URL) is kept by a PostgreSQL server: a file names none to stop.
  if (!isLedgerUrl(place)) return;
  try {
    const said = await (await import("./ledger-shared.js")).stopLocalLedgerServer(root, place);
    if (said !== undefined) io.err(said);
  } catch (e) {
    io.err(`warning: the local PostgreSQL did not stop: ${e instanceof Error ? e.message : String(e)}\n`);
  }
}
