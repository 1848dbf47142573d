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

const byProject = (project: string) => ({ label: [`${LABELS.project}=${project}`] });

/**
 * The off switch: removes every container (running or not), then every network and volume, that carries the
 * project's label. Safe to run twice (the second run removes nothing) and safe while tasks are mid-run: running
 * containers are killed and removed, so nothing of the project is left behind. With `jobRoot`, the project's job
 * folders there go too, after the containers that had them mounted.
 */
export async function offSwitch(
  docker: Dockerode,
  project: string,
  options: { readonly jobRoot?: string } = {},
): Promise<OffReport> {
  const containers: string[] = [];
  for (const c of await docker.listContainers({ all: true, filters: byProject(project) })) {
    try {
      await docker.getContainer(c.Id).remove({ force: true, v: true });
      containers.push((c.Names[0] ?? c.Id).replace(/^\//, ""));
    } catch (e) {
      if (!isNotFound(e) && !/already in progress/.test(String(e))) throw e;
    }
  }
  const networks: string[] = [];
  for (const n of await docker.listNetworks({ filters: byProject(project) })) {
    try {
      await docker.getNetwork(n.Id).remove();
      networks.push(n.Name);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
  const volumes: string[] = [];
  const listed = await docker.listVolumes({ filters: byProject(project) });
  for (const v of listed.Volumes ?? []) {
    try {
      await docker.getVolume(v.Name).remove({ force: true });
      volumes.push(v.Name);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
  const report = {
    project,
    containers: containers.sort(),
    networks: networks.sort(),
    volumes: volumes.sort(),
  };
  if (options.jobRoot === undefined) return report;
  return { ...report, jobFolders: removeProjectJobFolders(options.jobRoot, project) };
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
