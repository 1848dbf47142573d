import type Dockerode from "dockerode";
import { type LaunchSpec, taskContainerName } from "../components/model";
import { isNotFound } from "./docker/client";
import { taskContainer } from "./docker/taskContainer";
import { prepareJobFolder, removeJobFolder } from "./jobs";
import type { Ledger } from "./ledger";
import { ownerAlive, type ProcessOwner, thisProcess } from "./orphan-watch";
import { gateEntrypoint, makeGate } from "./pool-gate";

/** The members of the warm pool (runtime/pool.ts): what one is, its create body, and what a dead holder left. */

/** A task container waiting, started behind its gate, for one task. */
export interface PoolMember {
  /** The task id it was created for: it names its job folder, and its container once claimed. */
  readonly id: string;
  /** The container's name on the engine once claimed: the cold launch's name for `id`. */
  readonly name: string;
  /** The host folder mounted as its job folder: empty but for the gate's channel until the claim. */
  readonly jobDir: string;
  readonly container: Dockerode.Container;
  /** The image's entrypoint, which the claimed command runs under, as a cold launch's does. */
  readonly entrypoint: readonly string[];
  /** The ledger's run of its wait (charged to the project), when the holder keeps a ledger. */
  readonly idleRun?: string;
  /**
   * The launcher whose slot it holds (none for a member made before any launcher took the pool): a claim by that
   * launcher passes the slot to the task; any other claim gives it back and takes a slot of its own.
   */
  readonly holder?: PoolHolder;
}

/** What the launcher that uses the pool lends it: the project's slots and its ledger. */
export interface PoolHolder {
  /** Takes one of the project's slots for a member, without waiting; false when none is free. */
  trySlot(spec: LaunchSpec): boolean;
  releaseSlot(spec: LaunchSpec): void;
  readonly ledger?: Ledger;
}

/** The label naming the process that holds a waiting member. */
export const POOL_HOLDER_LABEL = "sandbox.pool-holder";

/** The waiting name of member `id` (the claim renames it to the task's name). */
export function poolMemberName(project: string, id: string): string {
  return `${project}-pool-${id}`;
}

/** The ledger id of member `id`'s wait: never a task id (those have no dot). */
export function idleRunId(id: string): string {
  return `pool.${id}`;
}

/** Member `id`'s create body: the cold launch's for that id, behind the gate, labelled with its holder. */
export function memberBody(spec: LaunchSpec, id: string): Dockerode.ContainerCreateOptions {
  const { body } = taskContainer(spec, id);
  return {
    ...body,
    Entrypoint: gateEntrypoint(spec.jobFolder.containerPath),
    Cmd: [],
    Labels: { ...body.Labels, [POOL_HOLDER_LABEL]: JSON.stringify(thisProcess()) },
  };
}

/** A member's body as compared between launches: its holder label aside (the same template, another process). */
export function bodyOf(body: Dockerode.ContainerCreateOptions): Dockerode.ContainerCreateOptions {
  const { [POOL_HOLDER_LABEL]: _holder, ...labels } = body.Labels ?? {};
  return { ...body, Labels: labels };
}

/**
 * Removes the project's waiting members whose holder process is gone (killed with SIGKILL, its pool never closed),
 * with their job folders; their waits are the ledger's to reconcile, as any run a dead launcher left open.
 */
export async function sweepStaleMembers(docker: Dockerode, spec: LaunchSpec): Promise<void> {
  const all = await docker.listContainers({
    all: true,
    filters: { label: [`sandbox.project=${spec.project}`, POOL_HOLDER_LABEL] },
  });
  for (const c of all) {
    let owner: ProcessOwner | undefined;
    try {
      owner = JSON.parse(c.Labels[POOL_HOLDER_LABEL] ?? "") as ProcessOwner;
    } catch {
      owner = undefined;
    }
    const waitingName = (c.Names[0] ?? "").startsWith(`/${spec.project}-pool-`);
    if (!waitingName || (owner !== undefined && ownerAlive(owner))) continue;
    await docker
      .getContainer(c.Id)
      .remove({ force: true, v: true })
      .catch(() => undefined);
    const id = c.Labels["sandbox.task"];
    if (id !== undefined && /^[a-z0-9][a-z0-9-]{0,62}$/.test(id))
      removeJobFolder(spec.jobFolder.hostRoot, id);
  }
}

/**
 * Creates and starts member `id` of the template of `spec` behind its gate, with its job folder and, under a ledger,
 * its wait admitted as a run of the project's; undefined when the project has no free slot or its ledger admits no
 * wait now. What a failure half-way made is removed, its slot freed.
 */
export async function startMember(
  docker: Dockerode,
  spec: LaunchSpec,
  id: string,
  body: Dockerode.ContainerCreateOptions,
  entrypoint: readonly string[],
  holder: PoolHolder | undefined,
  maxIdleSeconds: number,
): Promise<PoolMember | undefined> {
  if (holder !== undefined && !holder.trySlot(spec)) return undefined;
  const ledger = holder?.ledger;
  const member = { id, name: taskContainerName(spec.project, id), jobDir: taskContainer(spec, id).jobDir };
  let idleRun: string | undefined;
  try {
    if (ledger !== undefined) {
      idleRun = idleRunId(id);
      await ledger.admit({
        id: idleRun,
        template: spec.template,
        specHash: spec.specHash,
        command: ["(pool member: waiting for a claim)"],
        container: poolMemberName(spec.project, id),
        size: { vcpu: spec.resources.vcpu, memoryMb: spec.resources.memoryMb },
        maxSeconds: maxIdleSeconds + 60,
      });
    }
  } catch (e) {
    holder?.releaseSlot(spec);
    // The cap or the concurrency admits no wait now: the pool stays as it is; a launch will say why.
    if ((e as { reason?: string }).reason !== undefined) return undefined;
    throw e;
  }
  // By name until it is created; by the engine's id after, which a claim's rename does not change.
  let waiting: PoolMember = {
    ...member,
    container: docker.getContainer(poolMemberName(spec.project, id)),
    entrypoint,
    ...(idleRun ? { idleRun } : {}),
    ...(holder ? { holder } : {}),
  };
  try {
    // The marker first (prepareJobFolder writes it before the folder): a crash here leaves what `off` finds.
    prepareJobFolder(spec.jobFolder.hostRoot, id, spec.project, spec.user, {}, [], {
      template: spec.template,
      diskMb: spec.resources.diskMb,
    });
    makeGate(member.jobDir, spec.user);
    const container = await docker.createContainer({
      ...body,
      name: poolMemberName(spec.project, id),
    });
    waiting = { ...waiting, container };
    await container.start();
  } catch (e) {
    await removeMember(spec, waiting).catch(() => undefined);
    if (idleRun !== undefined)
      await holder?.ledger?.complete(idleRun, { exitCode: null }).catch(() => undefined);
    holder?.releaseSlot(spec);
    throw e;
  }
  return waiting;
}

export async function removeContainer(member: PoolMember): Promise<void> {
  try {
    await member.container.remove({ force: true, v: true });
  } catch (e) {
    if (!isNotFound(e) && !/in progress/.test(String(e))) throw e;
  }
}

/** Removes a member's container and its job folder. */
export async function removeMember(spec: LaunchSpec, member: PoolMember): Promise<void> {
  await removeContainer(member);
  removeJobFolder(spec.jobFolder.hostRoot, member.id);
}
