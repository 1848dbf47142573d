/**
 * The wire protocol of the launch service (`sandbox serve`): what a launch asks, the events its answer streams, and
 * the JSON error of a refusal. The service (cli/serve-http.ts) and the typed client (runtime/serve/client.ts) both
 * follow it; it loads nothing, so an agent's client needs neither the engine's client nor Pulumi.
 *
 *   GET  /v1/health  200 {ok: true, service, stack, project, pid, running, pool}
 *   POST /v1/runs    a {@link RunRequestBody} as JSON; 200 and newline-delimited JSON events as the task writes:
 *                    {type: "stdout", data}, {type: "stderr", data}, ..., then one {@link ExitEvent} (or, when the
 *                    launch failed after its output began, one {@link ErrorEvent}). A launch refused before it ran is
 *                    a 4xx or 5xx with one {@link ErrorBody}.
 *
 * On the unix socket (mode 0600: its owner only) a request without a key is the operator's; over loopback TCP every
 * launch carries an agent's key (`Authorization: Bearer <key>`, minted by `sandbox agent-key`).
 */

/** The paths of the API. */
export const API = { health: "/v1/health", runs: "/v1/runs" } as const;

/** The name the health answer gives, so that a client knows it reached this service and not another server. */
export const SERVICE_NAME = "sandbox-serve";

/** What one launch asks. Only `template` is required. */
export interface RunRequestBody {
  /** One of the stack's templates. */
  readonly template: string;
  /** The task's command; the template's when absent. */
  readonly command?: readonly string[];
  /** Files put in the job folder before the task starts: relative name → UTF-8 content. */
  readonly files?: Readonly<Record<string, string>>;
  /** The task's standard input, whole (without it the task reads an empty input). */
  readonly stdin?: string;
  /** The agent the task is for: the key's own agent (a key names its agent; this only says which one is meant). */
  readonly agent?: string;
  /** Variables for this task only, judged by the pack like the template's. */
  readonly env?: Readonly<Record<string, string>>;
  /** This task's deadline in whole seconds, at most the template's. */
  readonly timeoutSeconds?: number;
}

/** Why a task ended: ran to its end, its deadline, its memory, the cap, or the off switch. */
export type EndReason = "exit" | "timeout" | "oom" | "cap" | "off";

/** A piece of the task's output, as it was written. */
export interface OutputEvent {
  readonly type: "stdout" | "stderr";
  readonly data: string;
}

/** A file of the job folder that was not returned, and why. */
export interface SkippedResult {
  readonly path: string;
  readonly reason: string;
}

/** The last event of a launch that ran. */
export interface ExitEvent {
  readonly type: "exit";
  /** The task's id: it names its container and its job folder (removed after the task). */
  readonly id: string;
  readonly template: string;
  readonly container: string;
  /** The task's own exit code, or null when it never ran to an exit. */
  readonly exitCode: number | null;
  readonly reason: EndReason;
  /** Every limit the task ran into (`timeout`, `oom`, `pids`). */
  readonly limits: readonly string[];
  readonly killedByLauncher: boolean;
  readonly stoppedByCap: boolean;
  readonly removed: boolean;
  readonly durationMs: number;
  /** What the ledger charged, in US dollars. */
  readonly chargeUsd: number | null;
  /** The agent the run was recorded for; null for the operator's own. */
  readonly agent: string | null;
  /** Files the task left in its job folder (new or changed), UTF-8: relative name → content. */
  readonly results: Readonly<Record<string, string>>;
  /** Those that are not UTF-8, base64-encoded. */
  readonly binaryResults: Readonly<Record<string, string>>;
  /** Entries not returned (links, special files, past the bound), and why. */
  readonly skipped: readonly SkippedResult[];
  /** Bytes of each stream past the live bound, not sent. */
  readonly dropped: { readonly stdout: number; readonly stderr: number };
  /** Proxy mode: the proxy's decisions about the task's requests. */
  readonly egress?: unknown;
  /** With broker routes: the broker's calls for the task. */
  readonly broker?: unknown;
}

/** What a refusal or a failure says. `field`, `value` and `allowed` name a bad part of the request. */
export interface ServiceError {
  /**
   * `bad-input` (the request), `unauthorized` (no key, or not a valid one), `refused` (the policy, the cap, an agent's
   * limits; `reason` says which of the ledger's), `not-deployed`, `too-large`, `shutting-down`, `not-found`, `ledger`,
   * `image-missing`, `runtime-missing` or `engine`.
   */
  readonly kind: string;
  readonly message: string;
  readonly field?: string;
  readonly value?: string;
  readonly allowed?: string;
  /** The ledger's reason for a refusal: `cap`, `agent`, `concurrency` (every slot busy: try again) or `disabled`. */
  readonly reason?: string;
}

/** The body of an error answer. */
export interface ErrorBody {
  readonly error: ServiceError;
}

/** The last event of a launch that failed after its output began. */
export interface ErrorEvent {
  readonly type: "error";
  readonly status: number;
  readonly error: ServiceError;
}

export type RunEvent = OutputEvent | ExitEvent | ErrorEvent;

/** The health answer. */
export interface Health {
  readonly ok: true;
  readonly service: typeof SERVICE_NAME;
  readonly stack: string;
  readonly project: string;
  readonly pid: number;
  /** Launches in flight now (waiting for a slot or running). */
  readonly running: number;
  /** Members kept per template by the warm pool, or null without one. */
  readonly pool: number | null;
}
