/**
 * A started task container watched to its end: the launcher's own deadline (the template's plus a grace), the process
 * limit's hits, the meter's stop at the cap (with a ledger) and the result read back from the engine.
 */
import type Dockerode from "dockerode";
import { type LaunchSpec, TASK_OUTPUT_MAX_BYTES } from "../components/model";
import { demuxLogs, isNotFound } from "./docker/client";
import { followOutput, type OutputSink } from "./docker/follow";
import type { Ledger } from "./ledger";
import { pidsLimitHits } from "./limits";
import type { LimitHit, TaskResult } from "./task";

/** Waits for the task's container to end, enforcing the deadline and the cap, and reads its result. */
export async function superviseTask(
  container: Dockerode.Container,
  spec: LaunchSpec,
  task: { readonly id: string; readonly name: string; readonly jobDir: string; readonly started: number },
  options: {
    readonly graceSeconds: number;
    readonly ledger: Ledger | undefined;
    /** Where the task's output goes as it is written (bounded per stream); none by default. */
    readonly onOutput?: OutputSink;
  },
): Promise<TaskResult> {
  const { id, name, jobDir, started } = task;
  let pidsHits = 0;
  const ledger = options.ledger;
  const deadlineMs = (spec.timeoutSeconds + options.graceSeconds) * 1000;
  // A kill counts only when it landed: the engine refuses to kill a container that has already ended (a timer that
  // fires late, after the task exited in time, kills nothing).
  const kill = (): Promise<boolean> =>
    container.kill({ signal: "SIGKILL" }).then(
      () => true,
      () => false,
    );
  let deadlineKill: Promise<boolean> | undefined;
  let capKill: Promise<boolean> | undefined;
  const killer = setTimeout(() => {
    deadlineKill = kill();
  }, deadlineMs);
  let ticks = 0;
  // One reading of the ledger at a time: a slow one is not overtaken by the next.
  let metering = false;
  const meter = async (l: Ledger): Promise<void> => {
    try {
      // The meter: stop the run when the month's spend reaches the cap; the thresholds each second. Never waiting
      // for another process's lock, which would stop every timer of this launcher.
      const stopAt = await l.stopTime(id);
      if (stopAt !== undefined && l.now() >= stopAt && capKill === undefined) capKill = kill();
      if (++ticks % 5 === 0) await l.tick({ wait: false });
    } catch {
      // A busy ledger this tick: the next one reads it again.
    } finally {
      metering = false;
    }
  };
  const poll = setInterval(() => {
    const hits = pidsLimitHits(container.id);
    if (hits !== undefined) pidsHits = Math.max(pidsHits, hits);
    if (ledger === undefined || capKill !== undefined || metering) return;
    metering = true;
    void meter(ledger);
  }, 200);
  const live =
    options.onOutput === undefined
      ? undefined
      : followOutput(container, options.onOutput, TASK_OUTPUT_MAX_BYTES);
  try {
    // The off switch (or anyone) may remove the container under the task: it ended there, killed (137).
    const waited = (await container.wait().catch((e: unknown) => {
      if (isNotFound(e)) return { StatusCode: 137 };
      throw e;
    })) as { StatusCode: number };
    const { StatusCode } = waited;
    // What the engine still had in flight reaches the live view before the result; a stream that does not end soon
    // after the container did is let go. The wait's timer is cleared once the stream ended: left running, it kept a
    // finished front's process alive for its 2 s.
    if (live !== undefined) {
      let letGo: NodeJS.Timeout | undefined;
      await Promise.race([
        live.done,
        new Promise((r) => {
          letGo = setTimeout(r, 2000);
        }),
      ]);
      clearTimeout(letGo);
    }
    // A short task may exit between two polls: its pids cgroup, when still there, has the last word.
    pidsHits = Math.max(pidsHits, pidsLimitHits(container.id) ?? 0);
    // Gone (404), or being removed and no longer giving its logs (409): the off switch took it.
    const gone = (e: unknown) => isNotFound(e) || (e as { statusCode?: number }).statusCode === 409;
    let info: Dockerode.ContainerInspectInfo | undefined;
    let raw: Buffer | undefined;
    try {
      info = await container.inspect();
      raw = (await container.logs({ stdout: true, stderr: true, follow: false })) as Buffer;
    } catch (e) {
      if (!gone(e)) throw e;
      info = undefined;
    }
    if (info === undefined || raw === undefined) {
      // Removed before its result was read: what it printed went with it (shown live, when it was followed).
      return {
        id,
        container: name,
        exitCode: StatusCode,
        stdout: "",
        stderr: "",
        limits: [],
        killedByLauncher: false,
        stoppedByCap: false,
        removed: true,
        durationMs: Date.now() - started,
        jobDir,
        ...(live === undefined ? {} : { liveDropped: { ...live.dropped } }),
      };
    }
    const logs = demuxLogs(raw);
    const killedByLauncher = (await deadlineKill) === true;
    const stoppedByCap = (await capKill) === true;
    // How long the task ran, by the engine's own clock: a launcher held up meanwhile does not lengthen it. The
    // in-container deadline is judged on the launcher's clock from before the start (the engine's start time comes a
    // moment after the process began, so a task killed at its deadline may show a few milliseconds less).
    const wallMs = Date.now() - started;
    const engineMs = Date.parse(info.State.FinishedAt) - Date.parse(info.State.StartedAt);
    const durationMs = Number.isFinite(engineMs) && engineMs >= 0 ? engineMs : wallMs;
    const timedOut =
      killedByLauncher ||
      ((StatusCode === 137 || StatusCode === 124) && wallMs >= spec.timeoutSeconds * 1000);
    const limits: LimitHit[] = [];
    if (timedOut && !stoppedByCap) limits.push("timeout");
    if (info.State.OOMKilled) limits.push("oom");
    if (pidsHits > 0 || /can't fork|Resource temporarily unavailable/.test(logs.stderr)) limits.push("pids");
    return {
      id,
      container: name,
      exitCode: StatusCode,
      stdout: logs.stdout,
      stderr: logs.stderr,
      limits,
      killedByLauncher,
      stoppedByCap,
      durationMs,
      jobDir,
      ...(live === undefined ? {} : { liveDropped: { ...live.dropped } }),
    };
  } finally {
    live?.stop();
    clearTimeout(killer);
    clearInterval(poll);
  }
}
