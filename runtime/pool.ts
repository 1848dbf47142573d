import { randomBytes } from "node:crypto";
import type Dockerode from "dockerode";
import { type LaunchSpec, PER_TASK_NETWORK } from "../components/model";
import { LaunchRefused } from "./launch-errors";
import { type Gate, GateClosed, openGate } from "./pool-gate";
import {
  bodyOf,
  checkPoolable,
  checkPoolOptions,
  imageEntrypoint,
  leaving,
  lostRace,
  memberBody,
  memberState,
  type PoolHolder,
  type PoolMember,
  type PoolRequest,
  removeContainer,
  removeMember,
  type Shelf,
  startMember,
  sweepStaleMembers,
  type Waiting,
  type WarmPoolOptions,
} from "./pool-members";

export {
  idleRunId,
  memberBody,
  POOL_HOLDER_LABEL,
  type PoolHolder,
  type PoolMember,
  type PoolRequest,
  poolMemberName,
  type WarmPoolOptions,
} from "./pool-members";

/**
 * The warm pool (Docker): per template, up to its `pool.size` task containers created and **started** before any task
 * claims them, each waiting behind a gate (runtime/pool-gate.ts) that runs no task code. A claim hands one member to
 * one task: the launcher renames it to the task's name (the engine lets one rename of a name succeed, so a member is
 * used at most once even across processes), writes the task's files into its job folder and sends the gate the cold
 * launch's command line, deadline wrapper included, which the gate's shell `exec`s. The member is removed after its
 * task, never reused.
 *
 * What a member is and what it costs: runtime/pool-members.ts; docs/runtime.md has the whole story.
 */

/**
 * Keeps members ready per template and hands each to one task. Used by a long-lived {@link Launcher} (a service that
 * launches many tasks): `new Launcher(docker, { preflight, ledger, pool: new WarmPool(docker, { preflight }) })`.
 * `close()` removes every member.
 */
export class WarmPool {
  private readonly shelves = new Map<string, Shelf>();
  private readonly pending = new Set<Promise<unknown>>();
  /** Projects whose members left by a gone holder were removed. */
  private readonly swept = new Map<string, Promise<void>>();
  private holder: PoolHolder | undefined;
  /** The gates of waiting members, opened (or opening) as soon as each started. */
  private readonly gates = new Map<PoolMember, Promise<Gate>>();
  private timer: NodeJS.Timeout | undefined;
  /** A pass of `expire` is under way (one at a time: a slow ledger is not overtaken). */
  private expiring = false;
  private closed = false;

  constructor(
    private readonly docker: Dockerode,
    private readonly options: WarmPoolOptions,
  ) {
    checkPoolOptions(options);
  }

  /**
   * Called by each launcher given this pool: members hold that launcher's slots, and its ledger records their waits.
   * Members made before (under no launcher, or another) are replaced. Give a pool to one launcher, then warm it.
   */
  attach(holder: PoolHolder): void {
    if (this.holder === holder) return;
    this.holder = holder;
    // Members waiting on no slot of this launcher's would run beside its tasks uncounted: replaced under its slots.
    for (const shelf of this.shelves.values()) {
      const foreign = shelf.members.filter((w) => w.member.holder !== holder);
      if (foreign.length === 0) continue;
      shelf.members.splice(0, shelf.members.length, ...shelf.members.filter((w) => !foreign.includes(w)));
      this.track(
        Promise.all(foreign.map((w) => this.retire(shelf.spec, w.member)))
          .then(() => this.refill(shelf.spec))
          .catch((e: unknown) => this.options.onError?.(e, shelf.spec)),
      );
    }
  }

  /** Members waiting now for the template of `spec` (for tests and progress output). */
  waiting(spec: LaunchSpec): number {
    return this.shelves.get(shelfKey(spec))?.members.length ?? 0;
  }

  /** Members the pool keeps for the template of `spec`: its `pool.size`, else the pool's size, else none. */
  sizeFor(spec: LaunchSpec): number {
    return Math.min(spec.pool?.size ?? this.options.size ?? 0, spec.maxConcurrentTasks);
  }

  /**
   * Fills the pool for the template of `spec` and waits until it holds its size of members (fewer when the project's
   * slots or its cap run out first). A member refused by the preflight refuses the warm-up (nothing is created).
   */
  async warm(spec: LaunchSpec): Promise<void> {
    if (this.closed) throw new Error("WarmPool: the pool is closed");
    checkPoolable(spec);
    const wanted = spec.pool?.size ?? this.options.size ?? 0;
    if (wanted > spec.maxConcurrentTasks) {
      throw new RangeError(
        `WarmPool: size ${wanted} is more than project "${spec.project}" allows at once ` +
          `(maxConcurrentTasks ${spec.maxConcurrentTasks}); a pool holds at most the budget's concurrency`,
      );
    }
    await this.sweep(spec);
    await this.fill(this.shelfFor(spec), true);
  }

  /**
   * Hands a started member of the template of `spec`, renamed to its task's name, or undefined when none can serve
   * the launch (it then runs cold; the pool then refills in the background). The member keeps its slot for the task.
   */
  async claim(spec: LaunchSpec, request: PoolRequest = {}): Promise<PoolMember | undefined> {
    if (this.closed || request.id !== undefined || request.stdin !== undefined) return undefined;
    if (spec.network === PER_TASK_NETWORK || this.sizeFor(spec) < 1) return undefined;
    const shelf = this.shelfFor(spec);
    if (shelf.gateless !== undefined) return undefined;
    while (shelf.members.length > 0) {
      const waiting = shelf.members.shift() as Waiting;
      const { member } = waiting;
      if (JSON.stringify(bodyOf(memberBody(spec, member.id))) !== waiting.body) {
        // Same template version, another shape: leave the pool as it is, launch cold.
        shelf.members.unshift(waiting);
        return undefined;
      }
      try {
        await member.container.rename({ name: member.name });
      } catch (e) {
        // Claimed by another process or removed by the off switch: never ours again, but its slot, its wait and
        // the gate's writer are.
        this.dropGate(member);
        this.release(shelf.spec, member);
        if (!lostRace(e)) {
          await removeMember(shelf.spec, member).catch(() => undefined);
          throw e;
        }
        continue;
      }
      // No refill here: making a member runs the job disk's tools synchronously, which would hold up this task's
      // start. The launcher refills once the task's result is in hand (`refill`).
      return member;
    }
    this.background(shelf);
    return undefined;
  }

  /**
   * Opens a claimed member's gate (runtime/pool-gate.ts). When the gate is gone (an image with no `sh`, a stopped
   * member), the member is removed and its wait closed, its slot kept for the launch, which then runs cold.
   */
  async open(spec: LaunchSpec, member: PoolMember): Promise<Gate | undefined> {
    try {
      return await (this.gates.get(member) ?? this.openGate(spec, member));
    } catch (e) {
      if (!(e instanceof GateClosed)) throw e;
      await this.closeWait(member);
      await removeContainer(member).catch(() => undefined);
      return undefined;
    } finally {
      this.gates.delete(member);
    }
  }

  /**
   * Opens a member's gate: done as soon as the member starts, so that a claim finds it open (the gate's shell reads
   * once a writer is there, and the pool holds that writer until the claim writes or the member is removed).
   */
  private openGate(spec: LaunchSpec, member: PoolMember): Promise<Gate> {
    return openGate(member.jobDir, async () => {
      const { running, ended } = await memberState(member, spec.image);
      const shelf = this.shelves.get(shelfKey(spec));
      // A gate that ended before its claim will end in every member: the template runs cold from now on.
      if (ended !== undefined && shelf !== undefined && shelf.gateless === undefined) {
        shelf.gateless = ended;
        // Its other members cannot open either (one being made now is removed when it is done).
        this.track(this.drain(shelf).catch(() => undefined));
        this.options.onError?.(new GateClosed(`${ended}; its launches run cold`), spec);
      }
      return running;
    });
  }

  /** A slot came free in the project of `spec` (a task ended): refill its templates' members in the background. */
  refill(spec: LaunchSpec): void {
    if (this.closed) return;
    // After the caller's own continuation (a launch's return): making a member holds the event loop a while.
    this.track(
      new Promise<void>((resolve) =>
        setImmediate(() => {
          if (!this.closed)
            for (const shelf of this.shelves.values())
              if (shelf.spec.project === spec.project) this.background(shelf);
          resolve();
        }),
      ),
    );
  }

  /** Removes the oldest member of `project` holding a slot of `holder`'s, for a launch that waits; false when none. */
  async evict(project: string, holder: PoolHolder): Promise<boolean> {
    let oldest: { shelf: Shelf; waiting: Waiting } | undefined;
    for (const shelf of this.shelves.values()) {
      if (shelf.spec.project !== project) continue;
      // Only a member holding one of this launcher's slots frees one for its launch.
      const first = shelf.members.find((w) => w.member.holder === holder);
      if (first && (!oldest || first.since < oldest.waiting.since)) oldest = { shelf, waiting: first };
    }
    if (oldest === undefined) return false;
    oldest.shelf.members.splice(oldest.shelf.members.indexOf(oldest.waiting), 1);
    await this.retire(oldest.shelf.spec, oldest.waiting.member);
    return true;
  }

  /** Removes every waiting member and its job folder; the pool creates no more. Safe to call twice. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    const shelves = [...this.shelves.values()];
    await Promise.all(shelves.map((s) => s.refill?.catch(() => undefined)));
    await Promise.all(shelves.map((s) => this.drain(s)));
    await this.settled();
  }

  /** Waits for every background refill and removal to settle (for tests and benchmarks). */
  async settled(): Promise<void> {
    // A refill or a removal may start another (a removal refills): wait until a pass started nothing new.
    while (true) {
      const refills = [...this.shelves.values()].map((s) => s.refill);
      const pending = [...this.pending];
      await Promise.all([...refills.map((r) => r?.catch(() => undefined)), ...pending]);
      const now = [...this.shelves.values()].map((s) => s.refill);
      const same = now.length === refills.length && now.every((r, i) => r === refills[i]);
      if (same && [...this.pending].every((p) => pending.includes(p))) return;
    }
  }

  private track(p: Promise<unknown>): void {
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
  }

  private shelfFor(spec: LaunchSpec): Shelf {
    const key = shelfKey(spec);
    const existing = this.shelves.get(key);
    if (existing && existing.spec.specHash === spec.specHash) return existing;
    const shelf: Shelf = { spec, members: [], generation: 0 };
    this.shelves.set(key, shelf);
    // A new version of the template: the old members are removed, never claimed; refill with the new one.
    if (existing) this.track(this.drain(existing).catch((e: unknown) => this.options.onError?.(e, spec)));
    this.timer ??= setInterval(() => void this.expire(), 1000).unref();
    return shelf;
  }

  private background(shelf: Shelf): void {
    if (this.swept.get(shelf.spec.project) === undefined)
      this.track(this.sweep(shelf.spec).catch(() => undefined));
    void this.fill(shelf, false).catch((e: unknown) => this.options.onError?.(e, shelf.spec));
  }

  /** Creates members, one at a time, until the shelf holds its size or no slot is free. One refill per shelf at a time. */
  private fill(shelf: Shelf, rethrow: boolean): Promise<void> {
    const previous = shelf.refill ?? Promise.resolve();
    const run = previous
      .catch(() => undefined)
      .then(async () => {
        while (
          !this.closed &&
          shelf.gateless === undefined &&
          this.shelves.get(shelfKey(shelf.spec)) === shelf &&
          shelf.members.length < this.sizeFor(shelf.spec)
        ) {
          if (!(await this.create(shelf))) return;
        }
      });
    shelf.refill = run;
    return rethrow ? run : run.catch((e: unknown) => this.options.onError?.(e, shelf.spec));
  }

  /** Creates and starts one member; false when the project has no free slot or its ledger admits no wait. */
  private async create(shelf: Shelf): Promise<boolean> {
    const { spec } = shelf;
    const generation = shelf.generation;
    const id = `${Date.now().toString(36)}-${randomBytes(3).toString("hex")}`;
    const body = memberBody(spec, id);
    const violations = this.options.preflight(body, spec);
    if (violations.length > 0) throw new LaunchRefused(spec.template, violations);
    shelf.entrypoint ??= imageEntrypoint(this.docker, spec.image);
    const entrypoint = await shelf.entrypoint;
    const waiting = await startMember(
      this.docker,
      spec,
      id,
      body,
      entrypoint,
      this.holder,
      this.maxIdle(spec),
    );
    if (waiting === undefined) return false;
    const opening = this.openGate(spec, waiting);
    this.track(opening.catch(() => undefined));
    this.gates.set(waiting, opening);
    if (this.closed || shelf.generation !== generation || this.shelves.get(shelfKey(spec)) !== shelf) {
      await this.retire(spec, waiting);
      return true;
    }
    shelf.members.push({ member: waiting, body: JSON.stringify(bodyOf(body)), since: Date.now() });
    return true;
  }

  private maxIdle(spec: LaunchSpec): number {
    return spec.pool?.maxIdleSeconds ?? this.options.maxIdleSeconds ?? 600;
  }

  /**
   * Each second, one pass at a time: a shelf's members leave at the cap (no refill: the cap admits none), else those
   * that waited longer than their template allows are replaced.
   */
  private async expire(): Promise<void> {
    if (this.expiring) return;
    this.expiring = true;
    try {
      for (const shelf of this.shelves.values()) {
        const { members, stoppedBy } = await leaving(shelf, this.maxIdle(shelf.spec) * 1000);
        if (members.length === 0) continue;
        this.track(
          Promise.all(members.map((w) => this.retire(shelf.spec, w.member, stoppedBy)))
            .then(() => stoppedBy ?? this.refill(shelf.spec))
            .catch((e: unknown) => this.options.onError?.(e, shelf.spec)),
        );
      }
    } finally {
      this.expiring = false;
    }
  }

  /** Removes members of the project whose holder process is gone, once per project. */
  private sweep(spec: LaunchSpec): Promise<void> {
    const known = this.swept.get(spec.project);
    if (known !== undefined) return known;
    const run = sweepStaleMembers(this.docker, spec);
    this.swept.set(spec.project, run);
    return run;
  }

  private async drain(shelf: Shelf): Promise<void> {
    shelf.generation++;
    const members = shelf.members.splice(0);
    await Promise.all(members.map(({ member }) => this.retire(shelf.spec, member)));
  }

  /** A member leaves the pool unclaimed: its container and job folder go, its wait is charged, its slot freed. */
  private async retire(spec: LaunchSpec, member: PoolMember, stoppedBy?: "cap"): Promise<void> {
    this.dropGate(member);
    try {
      await removeMember(spec, member);
    } finally {
      this.release(spec, member, stoppedBy);
    }
  }

  /** Closes the writer the pool held open for a member's gate: the gate then reads nothing and its shell ends. */
  private dropGate(member: PoolMember): void {
    void this.gates.get(member)?.then(
      (g) => g.abandon(),
      () => undefined,
    );
    this.gates.delete(member);
  }

  private release(spec: LaunchSpec, member: PoolMember, stoppedBy?: "cap"): void {
    this.track(this.closeWait(member, stoppedBy).catch(() => undefined));
    member.holder?.releaseSlot(spec);
  }

  private async closeWait(member: PoolMember, stoppedBy?: "cap"): Promise<void> {
    if (member.idleRun !== undefined)
      await member.holder?.ledger?.complete(member.idleRun, {
        exitCode: null,
        ...(stoppedBy ? { stoppedBy } : {}),
      });
  }
}

function shelfKey(spec: LaunchSpec): string {
  return `${spec.project}/${spec.template}`;
}
