import type Dockerode from "dockerode";
import { type LaunchSpec, PER_TASK_NETWORK, taskContainerName } from "../components/model";
import { isNotFound } from "./docker/client";
import { taskContainer } from "./docker/taskContainer";
import { prepareJobFolder, removeJobFolder } from "./jobs";
import type { Preflight } from "./launch-errors";
import type { Ledger } from "./ledger";
import { ownerAlive, type ProcessOwner, thisProcess } from "./orphan-watch";
import { gateEntrypoint, makeGate } from "./pool-gate";

/**
 * The members of the warm pool (runtime/pool.ts): what one is, its create body, its cost, and what a dead holder
 * left.
 *
 * A member is a cold launch started early. Its create body is the one recipe's (`taskContainer`) for its own task
 * id, byte for byte, but for its entrypoint (the gate), its name while it waits (`<project>-pool-<id>`) and one label
 * naming the process that holds it; it passes the same preflight on that body before it is created. Because the
 * command, the files and the agent arrive with the claim, one pool serves every launch of its template: any
 * command, any deadline up to the template's. A launch with an explicit task id, standard input or a network of its
 * own per task (proxy mode, broker routes) runs cold; a new version of the template drains the old members.
 *
 * A waiting member costs what a running task costs: it holds one of the project's slots (the launcher lends them,
 * {@link PoolHolder}), and with a ledger its wait is a run of the project's (no agent), admitted under the cap before
 * the member is created and charged until it is claimed (its slot then passes to the task's run) or removed. Members
 * older than the template's `pool.maxIdleSeconds` are replaced. Every member carries the project's labels and its
 * job folder the toolkit's marker, so the off switch finds what a crashed holder left; the next pool of the project
 * removes members whose holder is gone.
 */

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

export interface Waiting {
  readonly member: PoolMember;
  /** Its create body (name aside), to tell whether a launch's spec still makes the same member. */
  readonly body: string;
  readonly since: number;
}

export interface Shelf {
  spec: LaunchSpec;
  readonly members: Waiting[];
  /** Bumped when the shelf is drained: a member created for an older generation is removed, never shelved. */
  generation: number;
  refill?: Promise<void>;
  /** The image's entrypoint, read once. */
  entrypoint?: Promise<readonly string[]>;
  /** Why the template cannot wait behind a gate (no shell in its image): its launches run cold. */
  gateless?: string;
}

/**
 * Whether the meter stops the shelf's waits: the month's spend reached the project's cap for runs (every wait is a
 * run of the project's, no agent's, so one reading answers for the shelf). A hard stop: members cost what running
 * tasks cost, and the meter stops those at the cap (runtime/supervise.ts).
 */
async function capReached(shelf: Shelf): Promise<boolean> {
  const w = shelf.members.find(
    (m) => m.member.idleRun !== undefined && m.member.holder?.ledger !== undefined,
  );
  const ledger = w?.member.holder?.ledger;
  if (w?.member.idleRun === undefined || ledger === undefined) return false;
  const stopAt = await ledger.stopTime(w.member.idleRun);
  return stopAt !== undefined && ledger.now() >= stopAt;
}

/** A template whose launches get a network of their own cannot wait in a pool. */
export function checkPoolable(spec: LaunchSpec): void {
  if (spec.network === PER_TASK_NETWORK)
    throw new RangeError(
      `WarmPool: template "${spec.template}" gets a network of its own per task at launch (proxy mode or broker routes), so it is launched cold (egress mode none is pooled)`,
    );
}

/** The image's entrypoint, which a claimed command runs under as a cold launch's does. */
export async function imageEntrypoint(docker: Dockerode, image: string): Promise<readonly string[]> {
  const e: unknown = (await docker.getImage(image).inspect()).Config.Entrypoint;
  return typeof e === "string" ? [e] : Array.isArray(e) ? (e as string[]) : [];
}

/** The members that leave a shelf now (taken off it): all at the cap, else those that waited past `maxIdleMs`. */
export async function leaving(
  shelf: Shelf,
  maxIdleMs: number,
): Promise<{ members: Waiting[]; stoppedBy?: "cap" }> {
  if (await capReached(shelf).catch(() => false))
    return { members: shelf.members.splice(0), stoppedBy: "cap" };
  const now = Date.now();
  const old = shelf.members.filter((w) => now - w.since > maxIdleMs);
  for (const w of old) shelf.members.splice(shelf.members.indexOf(w), 1);
  return { members: old };
}

/** The engine's answers to a rename whose source is gone (404) or whose target exists (409): claimed elsewhere. */
export const lostRace = (e: unknown) => {
  const code = (e as { statusCode?: number }).statusCode;
  return code === 404 || code === 409;
};

/**
 * Whether a member still runs and, when its gate ended before any claim, why: the image has no `sh` (exit 127), or
 * its shell could not read the channel.
 */
export async function memberState(
  member: PoolMember,
  image: string,
): Promise<{ readonly running: boolean; readonly ended?: string }> {
  const state = await member.container.inspect().then(
    (i) => i.State,
    () => undefined,
  );
  if (state === undefined) return { running: false };
  if (state.Running) return { running: true };
  return {
    running: false,
    ended:
      state.ExitCode === 127
        ? `image ${image} has no sh for the pool's gate`
        : `the pool's gate in image ${image} ended before its claim (exit ${state.ExitCode})`,
  };
}

export interface WarmPoolOptions {
  /** Members per template whose spec names no `pool` (a whole number from 1). Defaults to none: such a template is not pooled. */
  readonly size?: number;
  /** Seconds a member of such a template may wait before it is replaced. Defaults to 600. */
  readonly maxIdleSeconds?: number;
  /** The rule check of every member's body before it is created: the launcher's own (`policyPreflight()`). */
  readonly preflight: Preflight;
  /** A background refill that failed (the launch that triggered it ran anyway). Defaults to ignoring it. */
  readonly onError?: (error: unknown, spec: LaunchSpec) => void;
}

/** What a launch asks for, as far as the pool is concerned. */
export interface PoolRequest {
  readonly id?: string;
  readonly stdin?: unknown;
}

/** Refuses options a pool cannot work with, naming the option, its value and what is allowed. */
export function checkPoolOptions(options: WarmPoolOptions): void {
  const { size, maxIdleSeconds } = options;
  if (
    size !== undefined &&
    (typeof size !== "number" || !Number.isInteger(size) || size < 1 || size > 10000)
  ) {
    throw new TypeError(`WarmPool: size ${String(size)} must be a whole number from 1 to 10000`);
  }
  const idle = maxIdleSeconds;
  if (idle !== undefined && (typeof idle !== "number" || !Number.isInteger(idle) || idle < 1)) {
    throw new TypeError(`WarmPool: maxIdleSeconds ${String(idle)} must be a whole number of seconds from 1`);
  }
  if (typeof options.preflight !== "function") {
    throw new TypeError("WarmPool: preflight must be the launcher's rule check (policyPreflight())");
  }
}
