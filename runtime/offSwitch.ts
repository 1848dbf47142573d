import type Dockerode from "dockerode";
import { LABELS } from "../components/model";
import { isNotFound } from "./docker/client";
import { removeProjectJobFolders } from "./jobs";

/** What the off switch removed, by kind. */
export interface OffReport {
  readonly project: string;
  readonly containers: readonly string[];
  readonly networks: readonly string[];
  readonly volumes: readonly string[];
  /**
   * With a job root: the job folders removed from it (only those the toolkit's marker names as the project's).
   */
  readonly jobFolders?: readonly string[];
}

/** One object the off switch could not remove, and the engine's (or the file system's) answer. */
export interface OffFailure {
  readonly kind: "container" | "network" | "volume" | "job folders";
  readonly name: string;
  readonly message: string;
}

/**
 * The off switch removed what it could but not everything: `report` lists what went, `failures` each object left
 * (once each). The message names every one of them.
 */
export class OffSwitchError extends Error {
  constructor(
    readonly report: OffReport,
    readonly failures: readonly OffFailure[],
  ) {
    super(
      `the off switch of project ${report.project} left ${failures.length} object(s) it could not remove:\n` +
        failures.map((f) => `  - ${f.kind} ${f.name}: ${f.message}`).join("\n"),
    );
    this.name = "OffSwitchError";
  }
}

export interface OffOptions {
  /** Also remove the project's job folders under this root (after the containers that had them mounted). */
  readonly jobRoot?: string;
  /**
   * How many removals are in flight at once ({@link OFF_CONCURRENCY} by default): a whole number ≥ 1, or
   * `Infinity` for all at once.
   */
  readonly concurrency?: number;
}

/**
 * Removals in flight at once: the `docker rm` CLI's own cap. Measured with bench/off.ts (bench/README.md) on 2
 * cores, Docker 20.10, 100 running task containers, against `docker rm -f` of the same set: 4 in flight took 1.51×,
 * 8 1.44×, 16 1.36×, 32 1.04×, 50 1.08×, all at once 0.95× to 1.23×. A running container's removal mostly waits
 * for its kill to be reported, so more in flight is faster until the engine is the limit; created containers
 * (no kill) were at par from 16 on. Bounded, so a project of thousands does not open thousands of connections.
 */
export const OFF_CONCURRENCY = 50;

/**
 * Sweeps of the project's containers: after removing what the first listing found, the off switch lists again, so
 * a container created meanwhile (a launch or a warm-pool refill racing the switch) goes too. A project whose
 * containers still keep appearing after this many sweeps is reported as a failure.
 */
export const OFF_SWEEPS = 5;

const byProject = (project: string) => ({ label: [`${LABELS.project}=${project}`] });

const messageOf = (e: unknown) =>
  (e instanceof Error ? e.message : String(e)).replace(/^\(HTTP code \d+\) [^-]*- /, "");

/** The engine's "removal already in progress" (another off switch, or `docker rm`, got there first). */
const inProgress = (e: unknown) =>
  (e as { statusCode?: number }).statusCode === 409 && /in progress/.test(String(e));

/** Runs `fn` on every item with at most `limit` in flight; `fn` must not throw. */
async function eachLimited<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

function checkOptions(project: unknown, concurrency: unknown): void {
  if (typeof project !== "string" || project === "" || /[\s=,]/.test(project)) {
    throw new TypeError(
      `offSwitch: project ${JSON.stringify(project)} must be a project name (a non-empty string without spaces, "=" or ",")`,
    );
  }
  if (
    typeof concurrency !== "number" ||
    !(concurrency === Number.POSITIVE_INFINITY || (Number.isInteger(concurrency) && concurrency >= 1))
  ) {
    throw new TypeError(
      `offSwitch: concurrency ${String(concurrency)} must be a whole number ≥ 1 or Infinity (default ${OFF_CONCURRENCY})`,
    );
  }
}

/**
 * The off switch: removes every container (running, created or exited), then every network and volume, that
 * carries the project's label, then, with `jobRoot`, the project's job folders there. Removals run concurrently
 * (at most `concurrency` in flight); a running container is killed and removed in one call (`force`), a created or
 * exited one is removed without a stop. Containers are swept until a listing finds none new ({@link OFF_SWEEPS}),
 * so a task or pool member created while the switch runs goes too.
 *
 * Safe to run twice (the second run removes nothing) and concurrently with another off switch: an object already
 * gone, or whose removal another caller started, is not an error. Any other failure does not stop the switch:
 * everything else is still removed, then one {@link OffSwitchError} names each object left (once).
 */
export async function offSwitch(
  docker: Dockerode,
  project: string,
  options: OffOptions = {},
): Promise<OffReport> {
  const concurrency = options.concurrency ?? OFF_CONCURRENCY;
  checkOptions(project, concurrency);
  const filters = byProject(project);
  const failures: OffFailure[] = [];
  const fail = (kind: OffFailure["kind"], name: string, e: unknown) =>
    failures.push({ kind, name, message: messageOf(e) });

  const containers: string[] = [];
  const seen = new Set<string>();
  let appearing: string[] = [];
  for (let sweep = 0; sweep <= OFF_SWEEPS; sweep++) {
    const found = (await docker.listContainers({ all: true, filters })).filter((c) => !seen.has(c.Id));
    appearing = found.map((c) => (c.Names[0] ?? c.Id).replace(/^\//, ""));
    if (found.length === 0 || sweep === OFF_SWEEPS) break;
    for (const c of found) seen.add(c.Id);
    await eachLimited(found, concurrency, async (c) => {
      const name = (c.Names[0] ?? c.Id).replace(/^\//, "");
      try {
        await docker.getContainer(c.Id).remove({ force: true, v: true });
        containers.push(name);
      } catch (e) {
        if (!isNotFound(e) && !inProgress(e)) fail("container", name, e);
      }
    });
  }
  for (const name of appearing) {
    fail(
      "container",
      name,
      `created while the off switch ran, after ${OFF_SWEEPS} sweeps; something keeps starting tasks of the project`,
    );
  }

  // Networks and volumes only after the containers: an endpoint or a mount still in use would refuse removal. The
  // two kinds do not hold each other, so they are listed and removed side by side (each within `concurrency`).
  const networks: string[] = [];
  const volumes: string[] = [];
  const [foundNetworks, foundVolumes] = await Promise.all([
    docker.listNetworks({ filters }),
    docker.listVolumes({ filters }),
  ]);
  await Promise.all([
    eachLimited(foundNetworks, concurrency, async (n) => {
      try {
        await docker.getNetwork(n.Id).remove();
        networks.push(n.Name);
      } catch (e) {
        if (!isNotFound(e)) fail("network", n.Name, e);
      }
    }),
    eachLimited(foundVolumes.Volumes ?? [], concurrency, async (v) => {
      try {
        await docker.getVolume(v.Name).remove({ force: true });
        volumes.push(v.Name);
      } catch (e) {
        if (!isNotFound(e) && !inProgress(e)) fail("volume", v.Name, e);
      }
    }),
  ]);

  let report: OffReport = {
    project,
    containers: containers.sort(),
    networks: networks.sort(),
    volumes: volumes.sort(),
  };
  if (options.jobRoot !== undefined) {
    let jobFolders: string[] = [];
    try {
      jobFolders = removeProjectJobFolders(options.jobRoot, project);
    } catch (e) {
      fail("job folders", options.jobRoot, e);
    }
    report = { ...report, jobFolders };
  }
  if (failures.length > 0) throw new OffSwitchError(report, failures);
  return report;
}

/** Everything of the project that still exists on the engine (for checks after the off switch). */
export async function projectLeftovers(docker: Dockerode, project: string): Promise<string[]> {
  const left: string[] = [];
  for (const c of await docker.listContainers({ all: true, filters: byProject(project) }))
    left.push(`container ${c.Names[0]}`);
  for (const n of await docker.listNetworks({ filters: byProject(project) })) left.push(`network ${n.Name}`);
  for (const v of (await docker.listVolumes({ filters: byProject(project) })).Volumes ?? [])
    left.push(`volume ${v.Name}`);
  return left;
}
