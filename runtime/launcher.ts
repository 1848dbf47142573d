import { randomBytes } from "node:crypto";
import type Dockerode from "dockerode";
import { decisionReason, type LaunchSpec } from "../components/model";
import { findBroker, taskCalls } from "./broker";
import { isNotFound, noneIfGone } from "./docker/client";
import { attachInput } from "./docker/stdin";
import { taskContainer } from "./docker/taskContainer";
import { hashTree, jobDiskState, prepareJobFolder, removeJobFolder } from "./jobs";
import { ImageMissing, isImageMissing, LaunchRefused, type Preflight, RuntimeMissing } from "./launch-errors";
import { Ledger } from "./ledger";
import { Slots } from "./limits";
import { dockerOrphans } from "./orphans";
import type { PoolHolder, WarmPool } from "./pool";
import { claimScript, type Gate } from "./pool-gate";
import { findProxy, taskDecisions } from "./proxy";
import { superviseTask } from "./supervise";
import { handResult, type TaskLauncher, type TaskRequest, type TaskResult } from "./task";
import { closeTaskNetwork, openTaskNetwork, type TaskNetwork, withPeerHosts } from "./task-network";
import { watchTask } from "./watchdog";

export type { Preflight } from "./launch-errors";
export { ImageMissing, isImageMissing, LaunchRefused, RuntimeMissing } from "./launch-errors";
export { pidsLimitHits, Slots } from "./limits";
export type { LimitHit, TaskRequest, TaskResult } from "./task";

export interface LauncherOptions {
  /** Tasks allowed at once; extra tasks wait for a slot. Defaults to each spec's `maxConcurrentTasks`. */
  readonly maxConcurrent?: number;
  /** Seconds past the template's deadline before the launcher kills the container itself. Defaults to 5. */
  readonly graceSeconds?: number;
  /** The rule check every launch goes through before a container is created. */
  readonly preflight: Preflight;
  /**
   * The task's template's own running proxy for a proxy-mode task. Defaults to the running container labelled as
   * that template's proxy (started by `up`, or by `ensureProxy`); without one a proxy-mode launch is refused.
   */
  readonly proxy?: (spec: LaunchSpec) => Promise<Dockerode.Container | undefined>;
  /** The template's own running broker for a task with broker routes; defaults like `proxy`, to the labelled one. */
  readonly broker?: (spec: LaunchSpec) => Promise<Dockerode.Container | undefined>;
  /**
   * The warm pool (runtime/pool.ts): a launch it can serve takes a member created in advance instead of creating its
   * container; anything else runs cold. The container is the same either way. Defaults to none (every launch cold).
   */
  readonly pool?: WarmPool;
  /**
   * The ledger (runtime/ledger/index.ts): every launch is admitted by it under the budget's cap and the agents' limits,
   * recorded before its container is created or started, stopped at the cap, and charged when it ends. Runs a dead
   * launcher left open are reconciled at the first launch. Required: `false` runs every task unmetered and
   * unrecorded, on purpose (a launcher that names none is refused at construction).
   */
  readonly ledger: Ledger | false;
  /**
   * Called when a task starts, when its result is in hand (its output and exit code read, its container not yet
   * removed) and when it ends (container removed). For progress output, tests and benchmarks.
   */
  readonly onEvent?: (event: { type: "start" | "result" | "end"; id: string; running: number }) => void;
}

/**
 * Launches tasks, one fresh container each, from validated launch specs. Every launch passes the preflight rules
 * first; the container gets the template's full hardened host config plus `PidsLimit`; two deadlines apply (the
 * in-container `timeout` and the launcher's kill); the container is always removed, also when the launcher is
 * interrupted ({@link Launcher.shutdown}).
 */
export class Launcher implements TaskLauncher {
  /** One set of slots per project: the budget's concurrency is a per-project limit. */
  private readonly slots: Map<string, Slots> = new Map();
  private readonly live = new Map<string, Dockerode.Container>();
  /** Runs this launcher opened in the ledger and has not closed. */
  private readonly openRuns = new Set<string>();
  private reconciled: Promise<unknown> | undefined;
  private stopping = false;
  /** The watchdog entries of the tasks running now (runtime/watchdog.ts), by task id. */
  private readonly unwatches = new Map<string, () => void>();

  /** What this launcher lends its pool: its slots and its ledger. */
  private readonly poolHolder: PoolHolder;

  /** The ledger every launch goes through, or none when the options say `ledger: false`. */
  private readonly ledger: Ledger | undefined;

  constructor(
    private readonly docker: Dockerode,
    private readonly options: LauncherOptions,
  ) {
    const given: unknown = (options as { ledger?: unknown }).ledger;
    if (given !== false && !(given instanceof Ledger)) {
      throw new TypeError(
        `Launcher: options.ledger is ${given === undefined ? "missing" : "not a Ledger"}; pass the project's Ledger (openLedger from the runtime entry point) so every task is admitted under the cap and recorded, or ledger: false to run unmetered on purpose`,
      );
    }
    this.ledger = given === false ? undefined : given;
    // Waiting members hold this launcher's slots, and its ledger charges their waits to the project.
    this.poolHolder = {
      trySlot: (spec) => {
        try {
          return this.slotsFor(spec).tryAcquire();
        } catch {
          return false;
        }
      },
      releaseSlot: (spec) => this.slotsFor(spec).release(),
      ...(this.ledger === undefined ? {} : { ledger: this.ledger }),
    };
    options.pool?.attach(this.poolHolder);
  }

  /** Containers this launcher has created and not yet removed. */
  get running(): number {
    return this.live.size;
  }

  private slotsFor(spec: LaunchSpec): Slots {
    const limit = this.options.maxConcurrent ?? spec.maxConcurrentTasks;
    if (limit < 1) {
      throw new LaunchRefused(spec.template, [
        `project "${spec.project}" allows 0 tasks at once (it is disabled or its budget admits none)`,
      ]);
    }
    let s = this.slots.get(spec.project);
    if (!s) {
      s = new Slots(limit);
      this.slots.set(spec.project, s);
    }
    return s;
  }

  /** Runs one task to its end and removes its container. Waits for a slot when the limit is reached. */
  async run(spec: LaunchSpec, request: TaskRequest = {}): Promise<TaskResult> {
    if (this.stopping) throw new LaunchRefused(spec.template, ["the launcher is shutting down"]);
    const id = request.id ?? `${Date.now().toString(36)}-${randomBytes(3).toString("hex")}`;
    if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(id)) {
      throw new LaunchRefused(spec.template, [`task id "${id}" must be lower-case letters, digits and -`]);
    }
    const { name, jobDir, network, body } = taskContainer(spec, id, {
      ...(request.command ? { command: request.command } : {}),
      ...(request.stdin === undefined ? {} : { stdin: true }),
    });
    const violations = this.options.preflight(body, spec);
    const ledger = this.ledger;
    if (violations.length > 0) {
      const refused = new LaunchRefused(spec.template, violations);
      await ledger?.alert({
        kind: "launch-refused",
        message: refused.message,
        agent: request.agent ?? null,
        runId: id,
      });
      throw refused;
    }
    await this.requireImage(spec);
    await this.requireRuntime(spec);
    if (ledger !== undefined) {
      this.reconciled ??= ledger.reconcile(dockerOrphans(this.docker, spec.jobFolder.hostRoot));
      await this.reconciled;
    }

    const slots = this.slotsFor(spec);
    const pool = this.options.pool;
    // A started member holds its slot for the task; a member whose gate is gone leaves its slot to this launch.
    let member = this.stopping ? undefined : await pool?.claim(spec, request);
    const gate: Gate | undefined = member === undefined ? undefined : await pool?.open(spec, member);
    // The channel leaves the job folder before anything of the task's is written into it.
    gate?.detach();
    // The slot the launch runs on: a member of this launcher's passes its own (also when its gate was gone and the
    // launch runs cold); one made under another launcher, or before any, gives its slot back and the launch takes one.
    const passed = member !== undefined && member.holder === this.poolHolder;
    if (member !== undefined && !passed) member.holder?.releaseSlot(spec);
    if (!passed && !slots.tryAcquire()) {
      // Queued first, then a waiting member (of any template) gives its slot up: no launch waits on an idle member.
      const turn = slots.acquire();
      void pool?.evict(spec.project, this.poolHolder).catch(() => undefined);
      await turn;
    }
    if (gate === undefined) member = undefined;
    const started = Date.now();
    let container: Dockerode.Container | undefined;
    let taskNet: TaskNetwork | undefined;
    let unwatch: (() => void) | undefined;
    // A pooled member was made by the same recipe for its own id, and judged by the same preflight on its body.
    let task = { id, name, jobDir };
    try {
      if (member !== undefined) {
        task = { id: member.id, name: member.name, jobDir: member.jobDir };
        container = member.container;
        this.live.set(task.name, container);
      }
      // The run's row, written before its container is created (or, pooled, started).
      await ledger?.admit({
        id: task.id,
        template: spec.template,
        specHash: spec.specHash,
        agent: request.agent,
        command: request.command ?? spec.command,
        container: task.name,
        size: { vcpu: spec.resources.vcpu, memoryMb: spec.resources.memoryMb },
        maxSeconds: spec.timeoutSeconds + (this.options.graceSeconds ?? 5),
        ...(member?.idleRun === undefined ? {} : { replaces: member.idleRun }),
      });
      if (ledger !== undefined) this.openRuns.add(task.id);
      if (network !== undefined)
        taskNet = await openTaskNetwork(this.docker, await this.peers(spec), spec, id, network);
      prepareJobFolder(
        spec.jobFolder.hostRoot,
        task.id,
        spec.project,
        spec.user,
        request.files ?? {},
        request.seeds,
        { template: spec.template, diskMb: spec.resources.diskMb },
      );
      const jobDisk = jobDiskState(spec.jobFolder.hostRoot, task.id);
      if (ledger !== undefined) await ledger.recordFiles(task.id, hashTree(task.jobDir));
      if (container === undefined) {
        const created =
          taskNet === undefined ? body : withPeerHosts(body, spec, taskNet, this.options.preflight);
        try {
          container = await this.docker.createContainer(created);
        } catch (e) {
          // Removed between the check and the create: the same answer as before the slot.
          if (isImageMissing(e)) throw new ImageMissing(spec.image, spec.template);
          throw e;
        }
        this.live.set(name, container);
      }
      this.options.onEvent?.({ type: "start", id: task.id, running: slots.active });
      // The deadline outlives this process: a watchdog stops the container there if this launcher is gone.
      const maxSeconds = spec.timeoutSeconds + (this.options.graceSeconds ?? 5);
      unwatch = watchTask(this.docker, spec.jobFolder.hostRoot, {
        id: task.id,
        container,
        jobDir: task.jobDir,
        deadline: started + maxSeconds * 1000,
        timeoutSeconds: spec.timeoutSeconds,
        maxSeconds,
      });
      this.unwatches.set(task.id, unwatch);
      const input = request.stdin === undefined ? undefined : await attachInput(container);
      // A pooled member runs already: its gate execs the cold launch's command line (its image's entrypoint first).
      if (gate !== undefined && member !== undefined) {
        await gate.send(claimScript([...member.entrypoint, ...(body.Cmd as string[])], spec.env));
      } else await container.start();
      if (request.stdin !== undefined) input?.feed(request.stdin);
      let result = await superviseTask(
        container,
        spec,
        { id: task.id, name: task.name, jobDir: task.jobDir, started },
        {
          graceSeconds: this.options.graceSeconds ?? 5,
          ledger: this.ledger,
          ...(request.onOutput === undefined ? {} : { onOutput: request.onOutput }),
        },
      );
      input?.close();
      result = { ...result, jobDisk };
      // The proxy and the broker may be gone with the task (the off switch): their records of it went with them.
      if (taskNet?.proxy !== undefined) {
        const decisions = (
          await noneIfGone(taskDecisions(taskNet.proxy.container, taskNet.subnet, started))
        ).map((d) => ({ ...d, reason: decisionReason(d, spec.egress.allow) }));
        result = { ...result, egress: { network: taskNet.name, decisions } };
      }
      if (taskNet?.broker !== undefined) {
        const calls = await noneIfGone(taskCalls(taskNet.broker.container, taskNet.subnet, started));
        result = { ...result, broker: { calls } };
      }
      if (ledger !== undefined && this.openRuns.delete(task.id)) {
        // Charged to now, not to when another process lets go of the ledger.
        const closed = await ledger.complete(
          task.id,
          {
            exitCode: result.exitCode,
            limits: result.limits,
            killedByLauncher: result.killedByLauncher,
            ...(result.stoppedByCap ? { stoppedBy: "cap" as const } : {}),
            ...(result.removed ? { stoppedBy: "off" as const } : {}),
            egress: result.egress?.decisions ?? [],
            broker: result.broker?.calls ?? [],
          },
          "done",
          ledger.now(),
        );
        result = { ...result, chargeUsd: closed.chargeUsd ?? 0 };
      }
      this.options.onEvent?.({ type: "result", id: task.id, running: slots.active });
      handResult(request, result);
      return result;
    } catch (e) {
      await gate?.abandon();
      // A member whose task was refused: its wait is charged as it ended (a no-op once handed over).
      if (member?.idleRun !== undefined)
        await ledger?.complete(member.idleRun, { exitCode: null }).catch(() => undefined);
      if (ledger !== undefined && this.openRuns.delete(task.id)) {
        await ledger.complete(task.id, { exitCode: null, error: e instanceof Error ? e.message : String(e) });
      }
      throw e;
    } finally {
      unwatch?.();
      this.unwatches.delete(task.id);
      if (container) await this.remove(task.name, container);
      if (taskNet) await closeTaskNetwork(this.docker, taskNet);
      if (request.removeJobDir) removeJobFolder(spec.jobFolder.hostRoot, task.id);
      slots.release();
      pool?.refill(spec);
      this.options.onEvent?.({ type: "end", id: task.id, running: slots.active });
    }
  }

  /** The proxy and the broker a networked task's own network holds, as its template needs them. */
  private async peers(
    spec: LaunchSpec,
  ): Promise<{ proxy?: Dockerode.Container; broker?: Dockerode.Container }> {
    const find = (role: "proxy" | "broker") =>
      (
        this.options[role] ??
        ((x: LaunchSpec) => (role === "proxy" ? findProxy : findBroker)(this.docker, x.project, x.template))
      )(spec);
    return {
      ...(spec.egress.mode === "proxy" ? { proxy: await find("proxy") } : {}),
      ...(spec.broker !== undefined ? { broker: await find("broker") } : {}),
    };
  }

  private runtimes: Promise<string[]> | undefined;

  /** Refuses a launch whose runtime the engine does not have, before anything is created. */
  private async requireRuntime(spec: LaunchSpec): Promise<void> {
    if (spec.runtime === "runc") return;
    const ask = () =>
      this.docker
        .info()
        .then((i: { Runtimes?: Record<string, unknown> }) => Object.keys(i.Runtimes ?? {}).sort());
    this.runtimes ??= ask();
    let available = await this.runtimes;
    if (!available.includes(spec.runtime)) {
      // Registered since this launcher asked (toolchain/runsc.sh reloads the engine): ask once more.
      this.runtimes = ask();
      available = await this.runtimes;
      if (!available.includes(spec.runtime)) throw new RuntimeMissing(spec.runtime, spec.template, available);
    }
  }

  /** Refuses a launch whose image is not on the engine before anything is created (no pull, no 404 later). */
  private async requireImage(spec: LaunchSpec): Promise<void> {
    try {
      await this.docker.getImage(spec.image).inspect();
    } catch (e) {
      if (isNotFound(e)) throw new ImageMissing(spec.image, spec.template);
      throw e;
    }
  }

  private async remove(name: string, container: Dockerode.Container): Promise<void> {
    for (let attempt = 0; attempt < 20; attempt++) {
      try {
        await container.remove({ force: true, v: true });
        break;
      } catch (e) {
        if (isNotFound(e)) break;
        // 409: removal already in progress; wait for it.
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    this.live.delete(name);
  }

  /**
   * Kills and removes every container this launcher started, and closes its warm pool (its members are removed);
   * new launches are refused from now on.
   */
  async shutdown(): Promise<string[]> {
    this.stopping = true;
    const names = [...this.live.keys()];
    // Their containers go now: the watchdog has nothing of theirs to stop.
    for (const unwatch of this.unwatches.values()) unwatch();
    await Promise.all([
      ...[...this.live.entries()].map(([n, c]) => this.remove(n, c)),
      this.options.pool?.close(),
    ]);
    // Runs whose containers were just removed: charged to now, recorded as interrupted.
    for (const id of [...this.openRuns]) {
      this.openRuns.delete(id);
      await this.ledger?.complete(id, {
        exitCode: null,
        stoppedBy: "interrupted",
        error: "the launcher was shut down",
      });
    }
    return names;
  }
}
