/**
 * The task contract both backends keep: what one task asks (its command, files, input, agent) and what came of it
 * (exit code, the two streams apart, the limits it hit, the job folder, the egress and broker records, the charge).
 * Both launchers implement it ({@link TaskLauncher}): Docker's (runtime/launcher.ts) and Kubernetes'
 * (runtime/kubernetes/launcher.ts); the verbs (cli/run-task.ts), the checks (runtime/walls.ts) and the ledger's meter,
 * agents, audit and reconciliation (runtime/ledger/) see only this.
 */
import type { BrokerCall, JobDiskState, LaunchSpec, ProxyDecision } from "../components/model";
import type { OutputSink } from "./docker/follow";
import type { JobSeed } from "./jobs";
import type { NotCopied } from "./outputs";

/** One task to run from a template. */
export interface TaskRequest {
  /** A unique id; it names the container and the job folder. Defaults to a random one. */
  readonly id?: string;
  /** The task's command; the template's deadline is wrapped around it. Defaults to the template's command. */
  readonly command?: readonly string[];
  /** Files to put in the job folder before the task starts (name → content). */
  readonly files?: Readonly<Record<string, string>>;
  /** Host files and folders copied into the job folder before the task starts (`run --file`, `--dir`). */
  readonly seeds?: readonly JobSeed[];
  /**
   * Kubernetes: bring the job folder's contents back from the pod before it goes, into `<jobRoot>/<id>` on this
   * machine (`run --out`, `--keep`); the launcher needs a `jobRoot`. Docker's job folder is on this machine already.
   */
  readonly collect?: boolean;
  /** Remove the job folder after the task (for checks whose output is only their logs). Defaults to false. */
  readonly removeJobDir?: boolean;
  /** The agent the task is for (known by its key: runtime/agent-keys.ts), held to its profile. None: the operator. */
  readonly agent?: string;
  /**
   * Where the task's output goes as it is written (Docker), at most the bound of the result per stream; the result
   * still holds it at the end. Defaults to none.
   */
  readonly onOutput?: OutputSink;
  /**
   * The task's standard input (`run -i`), streamed to it as it comes and closed at its end (Docker). A task without
   * one reads an empty input. A pool never serves such a task: its members were made without an open input.
   */
  readonly stdin?: NodeJS.ReadableStream;
  /**
   * Called once with the task's result as soon as it is in hand (output, exit code, charge): on Docker before its
   * container is removed, so that a caller who answers someone can answer then while `run` goes on to remove the
   * container and give its slot back; on Kubernetes when `run` returns. Not called when the launch fails; what it
   * throws is ignored (`run` still returns the result).
   */
  readonly onResult?: (result: TaskResult) => void;
}

/** Gives `result` to the request's `onResult`; what the callback throws is the caller's own and changes nothing. */
export function handResult(request: TaskRequest, result: TaskResult): void {
  try {
    request.onResult?.(result);
  } catch {
    // The caller's own failure: `run` still finishes the task and returns its result.
  }
}

/** A limit a task ran into: its deadline, its memory, or its process cap. */
export type LimitHit = "timeout" | "oom" | "pids";

/** What came of one task. */
export interface TaskResult {
  readonly id: string;
  readonly container: string;
  /** The exit code, or null when the container never ran. */
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Every limit the task ran into (empty when none). */
  readonly limits: readonly LimitHit[];
  /** True when the launcher's own deadline had to kill the container (the in-container one failed). */
  readonly killedByLauncher: boolean;
  readonly durationMs: number;
  /**
   * The job folder on this machine, holding the task's outputs: Docker's is mounted into the task; Kubernetes' came
   * back from the pod (with `collect`; empty when it did not, and `jobProblem` says why).
   */
  readonly jobDir: string;
  /** Kubernetes: entries of the job folder not brought back from the pod, and why. */
  readonly notCopied?: readonly NotCopied[];
  /** Kubernetes: why the job folder asked for could not be brought back. */
  readonly jobProblem?: string;
  /**
   * Docker: whether the job folder had a disk of its own of the template's `diskMb` (mounted `nosuid,nodev,noexec`),
   * and if not, why (runtime/job-disk.ts). The probe reports it.
   */
  readonly jobDisk?: JobDiskState;
  /** With `onOutput`: bytes of each stream not shown live (past the bound). */
  readonly liveDropped?: { readonly stdout: number; readonly stderr: number };
  /** Proxy mode: the task's own network and every decision the proxy made about the task's requests. */
  readonly egress?: { readonly network: string; readonly decisions: readonly ProxyDecision[] };
  /** With broker routes: every call the broker logged for the task (never a credential). */
  readonly broker?: { readonly calls: readonly BrokerCall[] };
  /** True when the meter stopped the task because the month's spend reached the cap. */
  readonly stoppedByCap: boolean;
  /** True when the container was removed under the task (the off switch) before its result was read. */
  readonly removed?: boolean;
  /** What the ledger charged for the run (with a ledger), in US dollars. */
  readonly chargeUsd?: number;
}

/**
 * A backend's launcher: runs one task of a template to its end (admitted by the project's ledger first when it has
 * one, charged and recorded after), and stops every task it started on shutdown.
 */
export interface TaskLauncher {
  /** Tasks running now. */
  readonly running: number;
  /** Runs one task to its end and removes what it made. Throws LaunchRefused or BudgetRefused when it may not run. */
  run(spec: LaunchSpec, request?: TaskRequest): Promise<TaskResult>;
  /** Stops and removes every task it started; new launches are refused from then on. Returns what it removed. */
  shutdown(): Promise<string[]>;
}
