/**
 * `run`'s one task, the same on both backends: launched through the task contract (runtime/task.ts), waited for a
 * slot with `--wait`, its outputs copied to `--out`, its job folder kept with `--keep`, and its result written as
 * text or one `--json` document. Docker shows the task's output as it is written; Kubernetes when the task ends.
 */
import { join } from "node:path";
import { Readable } from "node:stream";
import { type LaunchSpec, type ResolvedProject, TASK_OUTPUT_MAX_BYTES, usdFine } from "../components/model";
import { removeJobFolder } from "../runtime/jobs";
import { BudgetRefused } from "../runtime/ledger";
import { copyOutputs, type NotCopied } from "../runtime/outputs";
import type { TaskLauncher, TaskResult } from "../runtime/task";
import { liveOutput } from "./live-output";
import { escapeControls, type Io, taskOutput } from "./output";
import { type RunOptions, runExitCode } from "./run-options";

/** The backend's words for the last line: what the task ran in, and what became of it. */
export interface RunBackend {
  readonly kind: "docker" | "kubernetes";
  readonly runner: Pick<TaskLauncher, "run">;
}

/**
 * One task: runs it, copies its outputs to `--out`, removes the job folder unless `--keep`, and returns the task's
 * own exit code. With `--json`, one document on stdout:
 * `{verb, ok, exitCode, task: {id, template, container, exitCode, stdout, stderr, limits, killedByLauncher,
 * durationMs, egress?, chargeUsd?}, jobFolder: {path, kept}, out: path | null, skipped: [{path, reason}]}`.
 */
export async function runOne(
  backend: RunBackend,
  project: ResolvedProject,
  spec: LaunchSpec,
  run: RunOptions,
  taskId: string,
  io: Io,
  json: boolean,
): Promise<number> {
  const docker = backend.kind === "docker";
  // Docker shows the task's output as it is written; --json holds it in its one document.
  const live = json || !docker ? undefined : liveOutput(io);
  const wantFolder = run.out !== undefined || run.keep;
  let result: TaskResult;
  // With --wait, a launch refused because every slot is busy is tried again each second until the wait is over.
  const waitUntil = run.waitSeconds === undefined ? undefined : Date.now() + run.waitSeconds * 1000;
  let waiting = false;
  for (;;) {
    try {
      result = await backend.runner.run(spec, {
        id: taskId,
        ...(live === undefined ? {} : { onOutput: live.sink }),
        ...(run.command === undefined ? {} : { command: run.command }),
        ...(run.agent === undefined ? {} : { agent: run.agent }),
        ...(run.stdin ? { stdin: io.stdin?.() ?? Readable.from([]) } : {}),
        ...(!docker && wantFolder ? { collect: true } : {}),
        seeds: run.seeds,
      });
      break;
    } catch (e) {
      const busy = e instanceof BudgetRefused && e.reason === "concurrency";
      if (busy && waitUntil !== undefined && Date.now() < waitUntil) {
        if (!waiting) io.err(`waiting for a slot (up to ${run.waitSeconds} s): ${e.message}\n`);
        waiting = true;
        await new Promise((r) => setTimeout(r, 1000));
        continue;
      }
      // A launch that failed after its folder was made leaves nothing behind unless the user asked to keep it.
      if (!run.keep) removeJobFolder(project.jobRoot, taskId);
      if (busy && !waiting)
        throw new BudgetRefused(`${e.message} (\`run --wait\` waits for a slot)`, e.reason);
      throw e;
    }
  }
  // A task the off switch stopped has no job folder left to copy from; one that never came back from its pod neither.
  const skipped: NotCopied[] = [...(result.notCopied ?? [])];
  if (run.out !== undefined && !result.removed && result.jobDir !== "")
    skipped.push(...copyOutputs(result.jobDir, run.out, spec.resources.diskMb * 1024 * 1024));
  if (!run.keep) removeJobFolder(project.jobRoot, taskId);
  const code = runExitCode(result);
  const { jobDir: _jobDir, notCopied: _notCopied, ...task } = result;
  // The launcher's own name for the task (a launch service names its tasks itself).
  const folderPath = join(project.jobRoot, result.id);
  if (json) {
    const doc = {
      verb: "run",
      ok: code === 0,
      exitCode: code,
      task: { ...task, template: spec.template },
      jobFolder: { path: folderPath, kept: run.keep && result.jobDir !== "" },
      out: run.out ?? null,
      skipped,
    };
    io.out(`${JSON.stringify(doc)}\n`);
    return code;
  }
  if (live !== undefined) live.flush();
  else {
    io.out(taskOutput(result.stdout, io.terminal?.out === true));
    io.err(taskOutput(result.stderr, io.terminal?.err === true));
  }
  const dropped = result.liveDropped;
  if (dropped !== undefined && dropped.stdout + dropped.stderr > 0) {
    io.err(
      `task ${result.id}: output past ${TASK_OUTPUT_MAX_BYTES / (1024 * 1024)} MiB a stream was not shown (stdout ${dropped.stdout} bytes, stderr ${dropped.stderr} bytes more)\n`,
    );
  }
  const limits = result.limits.length ? `, limits hit: ${result.limits.join(", ")}` : "";
  const deadline = result.limits.includes("timeout")
    ? ` (killed at its ${spec.timeoutSeconds} s deadline: exit 124)`
    : "";
  if (result.removed) {
    io.err(
      `task ${result.id}: stopped by the off switch (exit ${result.exitCode}); its container, job folder and output beyond what was shown went with it\n`,
    );
    return code;
  }
  const cap = result.stoppedByCap ? ", stopped at the cap" : "";
  const charge = result.chargeUsd === undefined ? "" : `; charged ${usdFine(result.chargeUsd)}`;
  const problem =
    result.jobProblem === undefined ? "" : `; job folder not brought back: ${result.jobProblem}`;
  const copied = run.out === undefined || result.jobDir === "" ? "" : `; outputs copied to ${run.out}`;
  // The names are the task's: written out, never passed to the terminal as they are.
  const skip = skipped.length
    ? ` (not copied: ${skipped.map((s) => `${escapeControls(JSON.stringify(s.path))} (${s.reason})`).join(", ")})`
    : "";
  const where = docker ? "" : ` pod ${result.container}`;
  const folder = docker
    ? `job folder ${result.jobDir} ${run.keep ? "kept" : "removed"}`
    : result.jobDir !== "" && run.keep
      ? `job folder kept at ${result.jobDir}; its Job deleted`
      : "its Job deleted";
  io.err(
    `task ${result.id}:${where} exit ${result.exitCode}${deadline}${limits}${cap}${copied}${skip}${problem}; ${folder}${charge}\n`,
  );
  return code;
}
