/**
 * Reconciliation on a Docker engine (runtime/ledger/reconcile.ts): a dead launcher's container stopped and its times read,
 * then the container, the job folder, the task network and the watch entry removed. Every front verb that opens a
 * project's ledger reconciles with it ({@link reconcileOrphans}), not only the next launch.
 */
import type Dockerode from "dockerode";
import { LABELS } from "../components/model";
import { dockerClient, isNotFound } from "./docker/client";
import { removeJobFolder } from "./jobs";
import type { Ledger, RunRecord } from "./ledger";
import { deadRuns, type EngineTimes, type OrphanEngine, reconcileDeadRuns } from "./ledger/reconcile";
import { dropEntry, watchFile } from "./orphan-watch";
import { closeTaskNetwork } from "./task-network";

/** A time of the engine's (`0001-01-01T00:00:00Z` is its "never"), in ms since the epoch. */
function engineTime(text: string | undefined): number | undefined {
  const t = Date.parse(text ?? "");
  return Number.isFinite(t) && t > 0 ? t : undefined;
}

interface Inspected {
  State: { Running?: boolean; StartedAt?: string; FinishedAt?: string; ExitCode?: number };
}

/** Reconciliation's engine: the Docker engine `docker`, and the project's job root on this machine. */
export function dockerOrphans(docker: Dockerode, jobRoot: string): OrphanEngine {
  return {
    async stop(name: string): Promise<EngineTimes | undefined> {
      const c = docker.getContainer(name);
      const inspect = () =>
        c.inspect().then(
          (i) => i as unknown as Inspected,
          (e: unknown) => {
            if (isNotFound(e)) return undefined;
            throw e;
          },
        );
      let info = await inspect();
      if (info === undefined) return undefined;
      const running = info.State.Running === true;
      if (running) {
        // 404: gone meanwhile; 409: ended meanwhile. Either way its times are read below.
        await c.kill({ signal: "SIGKILL" }).catch((e: unknown) => {
          const status = (e as { statusCode?: number }).statusCode;
          if (status !== 404 && status !== 409) throw e;
        });
        await c.wait({ condition: "not-running" }).catch(() => undefined);
        info = (await inspect()) ?? info;
      }
      const finishedAt = engineTime(info.State.FinishedAt);
      const startedAt = engineTime(info.State.StartedAt);
      return {
        startedAt,
        // A container that still runs shows no end (reconciliation counts to now).
        finishedAt: info.State.Running === true ? undefined : finishedAt,
        exitCode: info.State.Running === true ? null : (info.State.ExitCode ?? null),
        stoppedNow: running,
      };
    },

    async remove(name: string): Promise<void> {
      for (let attempt = 0; ; attempt++) {
        try {
          await docker.getContainer(name).remove({ force: true, v: true });
          return;
        } catch (e) {
          if (isNotFound(e)) return;
          // 409: a removal already under way; wait for it.
          if (attempt >= 20 || (e as { statusCode?: number }).statusCode !== 409) throw e;
          await new Promise((r) => setTimeout(r, 250));
        }
      }
    },

    async cleanup(run: RunRecord): Promise<void> {
      removeJobFolder(jobRoot, run.id);
      dropEntry(watchFile(jobRoot, run.id));
      const nets = await docker.listNetworks({
        filters: { label: [`${LABELS.project}=${run.project}`, `${LABELS.task}=${run.id}`] },
      });
      for (const n of nets) {
        const network = docker.getNetwork(n.Id);
        // The proxy and the broker the task's network held are let go before it is removed.
        const held = ((await network.inspect()) as { Containers?: Record<string, unknown> }).Containers ?? {};
        for (const id of Object.keys(held)) {
          await network.disconnect({ Container: id, Force: true }).catch((e: unknown) => {
            if (!isNotFound(e) && !/is not connected/.test(String(e))) throw e;
          });
        }
        await closeTaskNetwork(docker, { name: n.Name, network, subnet: "" });
      }
    },
  };
}

/**
 * Reconciles the runs a dead launcher left open in `ledger` (a front verb calls it once it opened the ledger): only
 * when there are any does it reach the engine (`docker`, else the local one). An engine that does not answer leaves
 * them open, as they were, and `warn` says so; the next verb tries again. Returns the runs closed.
 */
export async function reconcileOrphans(
  ledger: Ledger,
  jobRoot: string,
  warn: (text: string) => void,
  docker?: Dockerode,
): Promise<RunRecord[]> {
  const dead = await deadRuns(ledger);
  if (dead.length === 0) return [];
  const what = `${dead.length} run(s) a launcher that died left open (${dead.map((d) => d.run.id).join(", ")})`;
  let engine: Dockerode;
  try {
    engine = docker ?? dockerClient();
    await engine.ping();
  } catch (e) {
    warn(
      `warning: ${what} are not reconciled yet: no Docker engine answers (${e instanceof Error ? e.message : String(e)}); the next verb with an engine reconciles them\n`,
    );
    return [];
  }
  try {
    return await reconcileDeadRuns(ledger, dockerOrphans(engine, jobRoot));
  } catch (e) {
    warn(
      `warning: ${what} could not all be reconciled: the Docker engine answered: ${e instanceof Error ? e.message : String(e)}; the next verb tries again\n`,
    );
    return [];
  }
}
