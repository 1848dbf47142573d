/**
 * How a task verb fails, on either backend: the kinds of failure (stable for `--json` readers), their exit codes, the
 * one message printed, and the classification of what a verb threw.
 */
import type { ResolvedProject } from "../components/model";
import { AgentKeyRefused } from "../runtime/agent-keys";
import { ImageMissing, isImageMissing, LaunchRefused, RuntimeMissing } from "../runtime/launch-errors";
import { BudgetRefused } from "../runtime/ledger";
import { isLedgerProblem } from "../runtime/ledger/errors";
import { LedgerGone } from "../runtime/ledger/witness";
import type { Io } from "./output";
import { RunUsageError } from "./run-options";

/**
 * Exit codes of the task verbs. `run` exits with the task's own code (0–255) when the task ran; 124 when the
 * template's deadline killed it (as `timeout` does); a task the memory limit killed exits 137 (SIGKILL), the
 * engine's own code. A task can itself exit 1, 2 or 3: with `--json` the document's `error` says whether the
 * toolkit (not the task) failed. `probe` and `escape`: 0 when every wall held, 1 otherwise. 130/143 after
 * SIGINT/SIGTERM (running tasks removed first).
 */
export const TASK_EXIT = { failed: 1, badInput: 2, missing: 3, timeout: 124 } as const;

/** What went wrong, in the user's terms; `kind` is stable for `--json` readers. */
export type Failure = {
  kind:
    | "bad-input"
    | "refused"
    | "not-deployed"
    | "ledger"
    | "image-missing"
    | "runtime-missing"
    | "no-engine"
    | "no-cluster"
    | "engine";
  message: string;
  /** The runtime a `runtime-missing` failure needs. */
  runtime?: string;
};

const FAILURE_CODE: Record<Failure["kind"], number> = {
  "bad-input": TASK_EXIT.badInput,
  refused: TASK_EXIT.badInput,
  "not-deployed": TASK_EXIT.badInput,
  ledger: TASK_EXIT.failed,
  "image-missing": TASK_EXIT.missing,
  "runtime-missing": TASK_EXIT.missing,
  "no-engine": TASK_EXIT.missing,
  "no-cluster": TASK_EXIT.missing,
  engine: TASK_EXIT.failed,
};

/** Prints one failure once (one JSON document on stdout with --json) and returns its exit code. */
export function report(verb: string, f: Failure, io: Io, json: boolean): number {
  const code = FAILURE_CODE[f.kind];
  if (json) io.out(`${JSON.stringify({ verb, ok: false, exitCode: code, error: f })}\n`);
  else io.err(`${f.message}\n`);
  return code;
}

/** Classifies an error thrown by a task verb; anything unexpected is the engine's answer, named as such. */
export function failureOf(verb: string, e: unknown): Failure {
  if (e instanceof RunUsageError) return { kind: "bad-input", message: e.message };
  if (e instanceof LaunchRefused) return { kind: "refused", message: e.message };
  if (e instanceof BudgetRefused) return { kind: "refused", message: e.message };
  if (e instanceof LedgerGone || isLedgerProblem(e)) return { kind: "ledger", message: e.message };
  if (e instanceof AgentKeyRefused) return { kind: "refused", message: e.message };
  if (e instanceof ImageMissing) return { kind: "image-missing", message: e.message };
  if (e instanceof RuntimeMissing) return { kind: "runtime-missing", message: e.message, runtime: e.runtime };
  const detail = e instanceof Error ? e.message : String(e);
  if (isImageMissing(e)) {
    return {
      kind: "image-missing",
      message: `${verb}: an image is not on the local Docker engine (${detail.replace(/^\(HTTP code 404\)[^-]*- /, "").trim()}); the toolkit never pulls one. Build the offline images with \`bash toolchain/docker.sh\`.`,
    };
  }
  const fromEngine = typeof (e as { statusCode?: unknown }).statusCode === "number";
  return {
    kind: "engine",
    message: `${verb} failed: ${fromEngine ? "the Docker engine answered: " : ""}${detail}`,
  };
}

/** The templates named (all of the stack's when none is), or a refusal naming the unknown one. */
export function templatesOf(project: ResolvedProject, names: readonly string[]): string[] {
  const all = Object.keys(project.spec.templates).sort();
  const unknown = names.filter((n) => !all.includes(n));
  if (unknown.length > 0) {
    throw new LaunchRefused(unknown[0] ?? "", [
      `no template "${unknown.join(", ")}" in this stack; it has: ${all.join(", ")}`,
    ]);
  }
  return names.length > 0 ? [...names] : all;
}
