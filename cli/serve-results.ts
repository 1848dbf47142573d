/**
 * A task's exit event as the launch service sends it, with what the task left in its job folder (the folder is removed
 * after). Everything there was written by code nobody reviewed, so it is read as plain data: regular files only,
 * opened without following a link, walked without recursion, and bounded in bytes, entries and depth; an input file
 * the task left unchanged is not sent back.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readSync } from "node:fs";
import { join } from "node:path";
import { removeJobFolder } from "../runtime/jobs";
import type { EndReason, ExitEvent, RunRequestBody, SkippedResult } from "../runtime/serve/protocol";
import type { TaskResult } from "../runtime/task";

/** Bounds of what is returned: file contents in all, entries looked at, folder depth. */
export const RESULT_LIMITS = { bytes: 8 * 1024 * 1024, entries: 10_000, depth: 32 } as const;

export interface Results {
  readonly results: Record<string, string>;
  readonly binaryResults: Record<string, string>;
  readonly skipped: SkippedResult[];
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Reads the job folder `dir`; `inputs` are the files the request put there (name → content). */
export function readResults(dir: string, inputs: Readonly<Record<string, string>>): Results {
  const out: Results = { results: {}, binaryResults: {}, skipped: [] };
  let budget: number = RESULT_LIMITS.bytes;
  let seen = 0;
  const pending: { rel: string; depth: number }[] = [{ rel: "", depth: 0 }];
  while (pending.length > 0) {
    const { rel, depth } = pending.pop() as { rel: string; depth: number };
    let names: string[];
    try {
      names = readdirSync(join(dir, rel)).sort();
    } catch (e) {
      if (rel === "") return out;
      out.skipped.push({
        path: rel,
        reason: `not readable (${(e as NodeJS.ErrnoException).code ?? "error"})`,
      });
      continue;
    }
    for (const name of names) {
      const path = rel === "" ? name : `${rel}/${name}`;
      if (++seen > RESULT_LIMITS.entries) {
        out.skipped.push({ path, reason: `past ${RESULT_LIMITS.entries} entries; the rest is not returned` });
        return out;
      }
      const st = lstatSafe(join(dir, path));
      if (st === undefined) continue;
      if (st.isDirectory()) {
        if (depth + 1 > RESULT_LIMITS.depth)
          out.skipped.push({ path, reason: `deeper than ${RESULT_LIMITS.depth} folders` });
        else pending.push({ rel: path, depth: depth + 1 });
        continue;
      }
      if (!st.isFile()) {
        out.skipped.push({ path, reason: st.isSymbolicLink() ? "a link" : "not a regular file" });
        continue;
      }
      if (st.size > budget) {
        out.skipped.push({
          path,
          reason: `${st.size} bytes: past the ${RESULT_LIMITS.bytes} bytes returned in all`,
        });
        continue;
      }
      const bytes = readPlain(join(dir, path), budget);
      if (bytes === undefined) {
        out.skipped.push({ path, reason: "changed while read, or not readable" });
        continue;
      }
      const given = inputs[path];
      if (given !== undefined && Buffer.from(given).equals(bytes)) continue;
      budget -= bytes.length;
      try {
        out.results[path] = utf8.decode(bytes);
      } catch {
        out.binaryResults[path] = bytes.toString("base64");
      }
    }
  }
  return out;
}

function lstatSafe(path: string) {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

/** A regular file's bytes, at most `max`, read without following a link; undefined when it is not one. */
function readPlain(path: string, max: number): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > max) return undefined;
    const buf = Buffer.alloc(st.size);
    let at = 0;
    while (at < buf.length) {
      const n = readSync(fd, buf, at, buf.length - at, at);
      if (n === 0) break;
      at += n;
    }
    return buf.subarray(0, at);
  } finally {
    closeSync(fd);
  }
}

/** The exit event of a task that ran; its job folder is read for results, then removed. */
export function exitEvent(
  result: TaskResult,
  body: RunRequestBody,
  agent: string | null,
  jobRoot: string,
): ExitEvent {
  const found =
    result.removed || result.jobDir === ""
      ? { results: {}, binaryResults: {}, skipped: [] }
      : readResults(result.jobDir, body.files ?? {});
  removeJobFolder(jobRoot, result.id);
  const reason: EndReason = result.removed
    ? "off"
    : result.stoppedByCap
      ? "cap"
      : result.limits.includes("timeout")
        ? "timeout"
        : result.limits.includes("oom")
          ? "oom"
          : "exit";
  return {
    type: "exit",
    id: result.id,
    template: body.template,
    container: result.container,
    exitCode: result.exitCode,
    reason,
    limits: result.limits,
    killedByLauncher: result.killedByLauncher,
    stoppedByCap: result.stoppedByCap,
    removed: result.removed === true,
    durationMs: result.durationMs,
    chargeUsd: result.chargeUsd ?? null,
    agent,
    ...found,
    dropped: result.liveDropped ?? { stdout: 0, stderr: 0 },
    ...(result.egress === undefined ? {} : { egress: result.egress }),
    ...(result.broker === undefined ? {} : { broker: result.broker }),
  };
}
