import { randomBytes } from "node:crypto";
import type Dockerode from "dockerode";
import { type LaunchSpec, PER_TASK_NETWORK, taskContainerName } from "../components/model";
import { isNotFound } from "./docker/client";
import { taskContainer } from "./docker/taskContainer";
import { prepareJobFolder, removeJobFolder } from "./jobs";
import { LaunchRefused, type Preflight } from "./launch-errors";

/**
 * The warm pool (Docker): per template, up to `size` task containers created from the template and never started.
 * A created container holds no CPU, memory or process, so the budget's proof is unchanged: the launcher's slots
 * still bound the tasks that run.
 *
 * A member is exactly a cold launch made early. It is built by the one recipe (`taskContainer`) for a fresh task id,
 * so its create body is the body a cold launch of that id sends, byte for byte, except for its name while it waits
 * (`<project>-pool-<id>`); it passes the same preflight, on that same body, before it is created; its job folder
 * (`<jobRoot>/<id>`, with the toolkit's marker beside it) is made empty for it alone and filled with the task's
 * inputs when a task claims it. A claim renames the member to the cold launch's name (`<project>-task-<id>`): the
 * engine lets one rename of a name succeed, so a member is used at most once even across processes, and the task
 * runs under the same name, walls, command, environment, user and deadline as a cold one.
 *
 * What is pooled, and why only that: a member's command, environment and mounts are fixed when it is created, so a
 * member serves only a task whose body it already is. The pool keeps, per template, members of one shape: the
 * template's spec and one command (the template's own unless {@link WarmPool.warm} names another). A launch with
 * another command, an explicit task id (it names the container and the job folder), or a proxy-mode template (its
 * network is per task, made at launch) runs cold, as before. A launch whose template has another spec hash (a new
 * version of the template) drains the old members (removed, never started) and the pool refills with the new one.
 *
 * Every member carries the project's labels (`sandbox.project`, `sandbox.managed-by`, ...), and its job folder the
 * toolkit's marker, so the off switch finds what a crashed runtime left, whatever the crash interrupted.
 */

/** A task container waiting, created and never started, for one task. */
export interface PoolMember {
  /** The task id it was created for: it names its job folder, and its container once claimed. */
  readonly id: string;
  /** The container's name on the engine once claimed: the cold launch's name for `id`. */
  readonly name: string;
  /** The host folder mounted as its job folder, made empty when the member was created. */
  readonly jobDir: string;
  readonly container: Dockerode.Container;
}

export interface WarmPoolOptions {
  /**
   * Members kept per template (K): a whole number from 1, and at most the project's `maxConcurrentTasks` (checked
   * when a template is warmed).
   */
  readonly size: number;
  /** The rule check of every member's body before it is created: the launcher's own (`policyPreflight()`). */
  readonly preflight: Preflight;
  /** A background refill that failed (the launch that triggered it ran anyway). Defaults to ignoring it. */
  readonly onError?: (error: unknown, spec: LaunchSpec) => void;
}

/** What a launch asks for, as far as the pool is concerned. */
export interface PoolRequest {
  readonly id?: string;
  readonly command?: readonly string[];
}

interface Waiting {
  readonly member: PoolMember;
  /** The create body as the cold launch of `member.id` sends it (its task name included). */
  readonly body: string;
}

interface Shelf {
  spec: LaunchSpec;
  readonly command?: readonly string[];
  readonly members: Waiting[];
  /** Bumped when the shelf is drained: a member created for an older generation is removed, never shelved. */
  generation: number;
  refill?: Promise<void>;
}

/** The waiting name of member `id` (the claim renames it to the task's name). */
export function poolMemberName(project: string, id: string): string {
  return `${project}-pool-${id}`;
}

const sameCommand = (a: readonly string[] | undefined, b: readonly string[] | undefined) =>
  JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** The engine's answers to a rename whose source is gone (404) or whose target exists (409): claimed elsewhere. */
const lostRace = (e: unknown) => {
  const code = (e as { statusCode?: number }).statusCode;
  return code === 404 || code === 409;
};

/**
 * Keeps members ready per template and hands each to one task. Used by a long-lived {@link Launcher} (an agent or a
 * service that launches many tasks): `new Launcher(docker, { preflight, pool })`. `close()` removes every member.
 */
export class WarmPool {
  private readonly shelves = new Map<string, Shelf>();
  /** Drains running in the background. */
  private readonly draining = new Set<Promise<void>>();
  private closed = false;

  constructor(
    private readonly docker: Dockerode,
    private readonly options: WarmPoolOptions,
  ) {
    const { size } = options;
    if (typeof size !== "number" || !Number.isInteger(size) || size < 1 || size > 10000) {
      throw new TypeError(`WarmPool: size ${String(size)} must be a whole number from 1 to 10000`);
    }
    if (typeof options.preflight !== "function") {
      throw new TypeError("WarmPool: preflight must be the launcher's rule check (policyPreflight())");
    }
  }

  /** Members waiting now for the template of `spec` (for tests and progress output). */
  waiting(spec: LaunchSpec): number {
    return this.shelves.get(shelfKey(spec))?.members.length ?? 0;
  }

  /**
   * Fills the pool for the template of `spec` with members running `command` (the template's own by default), and
   * waits until it holds `size` of them. A member refused by the preflight refuses the warm-up (nothing is created).
   */
  async warm(spec: LaunchSpec, options: { readonly command?: readonly string[] } = {}): Promise<void> {
    this.check(spec);
    if (this.options.size > spec.maxConcurrentTasks) {
      throw new RangeError(
        `WarmPool: size ${this.options.size} is more than project "${spec.project}" allows at once ` +
          `(maxConcurrentTasks ${spec.maxConcurrentTasks}); a pool holds at most the budget's concurrency`,
      );
    }
    const shelf = this.shelfFor(spec, options.command);
    await this.fill(shelf, true);
  }

  /**
   * Hands a member whose body is exactly the one a cold launch of `request` would send, or undefined when there is
   * none (the launch then runs cold). The member is taken off the pool before any wait, and renamed on the engine to
   * its task's name, so no other claim, in this process or another, can have it. The pool refills in the background.
   */
  async claim(spec: LaunchSpec, request: PoolRequest = {}): Promise<PoolMember | undefined> {
    if (this.closed || request.id !== undefined || spec.network === PER_TASK_NETWORK) return undefined;
    const key = shelfKey(spec);
    let shelf = this.shelves.get(key);
    if (shelf === undefined) {
      // First launch of a template with its own command: warm it for the next ones.
      if (request.command === undefined && spec.maxConcurrentTasks >= 1) {
        shelf = this.shelfFor(spec, undefined);
        this.background(shelf);
      }
      return undefined;
    }
    if (shelf.spec.specHash !== spec.specHash) {
      // A new version of the template: the old members are removed, never started; refill with the new one.
      this.track(this.drain(shelf).catch((e: unknown) => this.options.onError?.(e, spec)));
      shelf.spec = spec;
      this.background(shelf);
      return undefined;
    }
    if (!sameCommand(shelf.command, request.command)) return undefined;
    const opts = request.command === undefined ? {} : { command: request.command };
    while (shelf.members.length > 0) {
      const waiting = shelf.members.shift() as Waiting;
      const { member } = waiting;
      if (JSON.stringify(taskContainer(spec, member.id, opts).body) !== waiting.body) {
        // Same template version, another shape (e.g. a shorter deadline): leave the pool as it is, launch cold.
        shelf.members.unshift(waiting);
        return undefined;
      }
      try {
        await member.container.rename({ name: member.name });
      } catch (e) {
        if (!lostRace(e)) {
          // Any other answer: the member is not handed out, and not kept either.
          await this.removeMember(shelf.spec, member).catch(() => undefined);
          throw e;
        }
        // Claimed by another process or removed by the off switch: never ours again. Its job folder is left to
        // whoever has it (the off switch removes it with the project's).
        continue;
      }
      this.background(shelf);
      return member;
    }
    this.background(shelf);
    return undefined;
  }

  /** Removes every waiting member and its job folder; the pool creates no more. Safe to call twice. */
  async close(): Promise<void> {
    this.closed = true;
    const shelves = [...this.shelves.values()];
    await Promise.all(shelves.map((s) => s.refill?.catch(() => undefined)));
    await Promise.all(shelves.map((s) => this.drain(s)));
    await Promise.all(this.draining);
  }

  /** Waits for every background refill and drain to settle (for tests and benchmarks). */
  async settled(): Promise<void> {
    await Promise.all([...this.shelves.values()].map((s) => s.refill?.catch(() => undefined)));
    await Promise.all(this.draining);
  }

  private track(drain: Promise<void>): void {
    this.draining.add(drain);
    void drain.finally(() => this.draining.delete(drain));
  }

  private check(spec: LaunchSpec): void {
    if (this.closed) throw new Error("WarmPool: the pool is closed");
    if (spec.network === PER_TASK_NETWORK) {
      throw new RangeError(
        `WarmPool: template "${spec.template}" sends traffic through the proxy; its network is made per task at launch, so it is launched cold (egress mode none is pooled)`,
      );
    }
  }

  private shelfFor(spec: LaunchSpec, command: readonly string[] | undefined): Shelf {
    const key = shelfKey(spec);
    const existing = this.shelves.get(key);
    if (existing && existing.spec.specHash === spec.specHash && sameCommand(existing.command, command))
      return existing;
    const shelf: Shelf = {
      spec,
      ...(command === undefined ? {} : { command: [...command] }),
      members: [],
      generation: 0,
    };
    this.shelves.set(key, shelf);
    if (existing) this.track(this.drain(existing).catch((e: unknown) => this.options.onError?.(e, spec)));
    return shelf;
  }

  private background(shelf: Shelf): void {
    void this.fill(shelf, false).catch((e: unknown) => this.options.onError?.(e, shelf.spec));
  }

  /** Creates members, one at a time, until the shelf holds its size. One refill per shelf runs at a time. */
  private fill(shelf: Shelf, rethrow: boolean): Promise<void> {
    const previous = shelf.refill ?? Promise.resolve();
    const run = previous
      .catch(() => undefined)
      .then(async () => {
        const size = Math.min(this.options.size, shelf.spec.maxConcurrentTasks);
        while (
          !this.closed &&
          this.shelves.get(shelfKey(shelf.spec)) === shelf &&
          shelf.members.length < size
        ) {
          await this.create(shelf);
        }
      });
    shelf.refill = run;
    return rethrow ? run : run.catch((e: unknown) => this.options.onError?.(e, shelf.spec));
  }

  private async create(shelf: Shelf): Promise<void> {
    const { spec } = shelf;
    const generation = shelf.generation;
    const id = `${Date.now().toString(36)}-${randomBytes(3).toString("hex")}`;
    const task = taskContainer(spec, id, shelf.command ? { command: shelf.command } : {});
    const violations = this.options.preflight(task.body, spec);
    if (violations.length > 0) throw new LaunchRefused(spec.template, violations);
    // The marker first (prepareJobFolder writes it before the folder): a crash here leaves what `off` finds.
    prepareJobFolder(spec.jobFolder.hostRoot, id, spec.project, spec.user, {}, [], {
      template: spec.template,
      diskMb: spec.resources.diskMb,
    });
    let container: Dockerode.Container;
    try {
      container = await this.docker.createContainer({ ...task.body, name: poolMemberName(spec.project, id) });
    } catch (e) {
      removeJobFolder(spec.jobFolder.hostRoot, id);
      throw e;
    }
    const member: PoolMember = {
      id,
      name: taskContainerName(spec.project, id),
      jobDir: task.jobDir,
      container,
    };
    if (this.closed || shelf.generation !== generation || this.shelves.get(shelfKey(spec)) !== shelf) {
      await this.removeMember(spec, member);
      return;
    }
    shelf.members.push({ member, body: JSON.stringify(task.body) });
  }

  private async drain(shelf: Shelf): Promise<void> {
    shelf.generation++;
    const members = shelf.members.splice(0);
    await Promise.all(members.map(({ member }) => this.removeMember(shelf.spec, member)));
  }

  private async removeMember(spec: LaunchSpec, member: PoolMember): Promise<void> {
    try {
      await member.container.remove({ force: true, v: true });
    } catch (e) {
      if (!isNotFound(e) && !/in progress/.test(String(e))) throw e;
    }
    removeJobFolder(spec.jobFolder.hostRoot, member.id);
  }
}

function shelfKey(spec: LaunchSpec): string {
  return `${spec.project}/${spec.template}`;
}
