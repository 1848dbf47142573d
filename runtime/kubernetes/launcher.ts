/**
 * Tasks on a Kubernetes cluster: one Job per task, made by `taskJob()` from the template's launch spec after checking
 * that the template's PodTemplate in the cluster is that spec (its spec hash), so what runs is what `up` deployed and
 * the policy pack judged. The task's files travel in a ConfigMap of the task, copied into the job folder (an
 * `emptyDir`) by an init container hardened like the task; the result is read from the pod's status and log; the Job
 * (foreground propagation: its pod first) and the ConfigMap are deleted afterwards. Concurrency is held twice: by the
 * launcher's slots and by the namespace's ResourceQuota, whose refusal is reported as such.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { holdsResults, taskJob } from "../../components/kubernetes/pod";
import { type LaunchSpec, taskJobName, taskServiceAccountName } from "../../components/model";
import { LaunchRefused } from "../launch-errors";
import type { Ledger } from "../ledger";
import { Slots } from "../limits";
import { handResult, type TaskLauncher, type TaskRequest, type TaskResult } from "../task";
import { apiMessage, apiStatus, type KubeApis } from "./api";
import { podPidsHits } from "./pod-pids";
import { type PodWatch, podWatch } from "./pod-watch";
import { readOutPod, readyToRead } from "./readout";
import { checkRuntimeClass } from "./runtime-class";
import { START_TIMEOUT_SECONDS, StartChecks } from "./start-checks";
import { collectTaskFiles, MAX_TASK_FILES_BYTES, seedTaskFiles, type TaskFile } from "./task-files";
import {
  checkDeployed,
  createJob,
  kubeOrphans,
  ranSeconds,
  removeTaskObjects,
  taskLeftovers,
} from "./task-objects";
import { taskResult } from "./task-result";

export interface KubeLauncherOptions {
  /** Tasks allowed at once; extra tasks wait for a slot. Defaults to each spec's `maxConcurrentTasks`. */
  readonly maxConcurrent?: number;
  /** Seconds past the template's deadline before the launcher deletes the Job itself. Defaults to 15. */
  readonly graceSeconds?: number;
  /**
   * At most this long between two looks at a task's clocks (its deadline, the meter), in ms; a change of its pod
   * (from the namespace's watch) wakes it at once. Defaults to 1000. No API request is made on this timer.
   */
  readonly pollMs?: number;
  /**
   * Each task's steps: `start` once its Job is created, `running` when its pod is first seen running, `exit` once it
   * is removed. `running` counts the tasks whose Jobs exist.
   */
  readonly onEvent?: (e: { type: "start" | "running" | "exit"; id: string; running: number }) => void;
  /**
   * The project's ledger: every launch admitted under the cap and the agents' limits before its Job is created,
   * stopped when the month's spend reaches the cap, and charged what its task container ran on the node. Runs a dead
   * launcher left open are reconciled (by their Jobs) at the first launch. Without one, nothing is metered and a
   * launch for an agent is refused.
   */
  readonly ledger?: Ledger;
  /**
   * Where a task's job folder comes back to, `<jobRoot>/<id>`, when its request asks for it (`collect`): read out of
   * the pod through its holder before the pod goes (runtime/kubernetes/readout.ts).
   */
  readonly jobRoot?: string;
}

const _sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// biome-ignore lint/suspicious/noExplicitAny: pod and job objects as the client returns them, read field by field
type Obj = any;

/** Runs tasks as Jobs in a project's namespace. */
export class KubeLauncher implements TaskLauncher {
  private slots?: Slots;
  private readonly live = new Map<string, string>();
  private stopping = false;
  private readonly runtimesSeen = new Set<string>();
  /** Runs this launcher opened in the ledger and has not closed. */
  private readonly openRuns = new Set<string>();
  /** Jobs whose task container ended on its own (and is read out): their pod goes at once (removeTaskObjects). */
  private readonly ended = new Map<string, string>();
  private reconciled: Promise<unknown> | undefined;

  constructor(
    private readonly apis: KubeApis,
    private readonly namespace: string,
    private readonly options: KubeLauncherOptions = {},
  ) {}

  /** Tasks running now. */
  get running(): number {
    return this.live.size;
  }

  /** Runs one task to its end and removes its objects. Throws LaunchRefused when the cluster will not run it. */
  async run(spec: LaunchSpec, request: TaskRequest = {}): Promise<TaskResult> {
    if (this.stopping) throw new LaunchRefused(spec.template, ["the launcher is shutting down"]);
    const ledger = this.options.ledger;
    if (request.collect === true && this.options.jobRoot === undefined) {
      throw new LaunchRefused(spec.template, [
        "the task's job folder was asked for, and this launcher has no jobRoot to bring it back to",
      ]);
    }
    if (request.collect === true && !holdsResults(spec)) {
      throw new LaunchRefused(spec.template, [
        `the job folder comes back from a Kubernetes pod through its holder, which runs beside runc and gVisor tasks only; template "${spec.template}" runs under ${spec.runtime}: print what you need, or write it where your own storage is`,
      ]);
    }
    if (request.agent !== undefined && ledger === undefined) {
      throw new LaunchRefused(spec.template, [
        "a task for an agent is admitted by the project's ledger, and this launcher has none",
      ]);
    }
    const id = request.id ?? `${Date.now().toString(36)}-${randomBytes(3).toString("hex")}`;
    const { files, skipped } = collectTaskFiles(request);
    const bytes = files.reduce((n, f) => n + f.data.length, 0);
    if (bytes > MAX_TASK_FILES_BYTES) {
      throw new LaunchRefused(spec.template, [
        `the task's files come to ${bytes} bytes; on Kubernetes they travel in one ConfigMap of at most ${MAX_TASK_FILES_BYTES} bytes`,
      ]);
    }
    if (skipped.length > 0) {
      throw new LaunchRefused(spec.template, [
        `only regular files are carried into a Kubernetes task; not a regular file: ${skipped.join(", ")}`,
      ]);
    }
    await checkDeployed(this.apis, this.namespace, spec);
    // Once per runtime and launcher: a class seen is not looked up again on every launch.
    if (!this.runtimesSeen.has(spec.runtime)) {
      await checkRuntimeClass(this.apis, spec);
      this.runtimesSeen.add(spec.runtime);
    }
    if (ledger !== undefined) {
      this.reconciled ??= ledger.reconcile(kubeOrphans(this.apis, this.namespace));
      await this.reconciled;
    }
    this.slots ??= new Slots(this.options.maxConcurrent ?? spec.maxConcurrentTasks);
    await this.slots.acquire();
    const watch = this.watch();
    try {
      // The watch is open before the Job exists: its pod's first state is not missed.
      await watch.use();
      // The run's row, written before its Job is created: a refusal (BudgetRefused) creates nothing.
      await ledger?.admit({
        id,
        template: spec.template,
        specHash: spec.specHash,
        agent: request.agent,
        command: request.command ?? spec.command,
        container: taskJobName(spec.project, spec.template, id),
        size: { vcpu: spec.resources.vcpu, memoryMb: spec.resources.memoryMb },
        maxSeconds: spec.timeoutSeconds + (this.options.graceSeconds ?? 15),
      });
      if (ledger !== undefined) this.openRuns.add(id);
      let pod: Obj | undefined;
      try {
        const result = await this.runAdmitted(spec, request, id, files, (p) => {
          pod = p;
        });
        const charged = await this.charge(result, pod);
        handResult(request, charged);
        return charged;
      } catch (e) {
        if (ledger !== undefined && this.openRuns.delete(id)) {
          const error = e instanceof Error ? e.message : String(e);
          await ledger.complete(id, { exitCode: null, error, usedSeconds: ranSeconds(pod, ledger.now()) });
        }
        throw e;
      }
    } finally {
      watch.release();
      this.slots.release();
    }
  }

  private async runAdmitted(
    spec: LaunchSpec,
    request: TaskRequest,
    id: string,
    files: readonly TaskFile[],
    onPod: (pod: Obj) => void,
  ): Promise<TaskResult> {
    const started = Date.now();
    const job = taskJob(spec, this.namespace, id, taskServiceAccountName(spec.project), request.command);
    const jobName = job.metadata.name;
    const labels = job.metadata.labels;
    const podSpec = job.spec.template.spec as Obj;
    if (files.length > 0)
      await seedTaskFiles(this.apis, this.namespace, spec, podSpec, jobName, labels, files);
    this.live.set(jobName, id);
    try {
      try {
        await createJob(this.apis, this.namespace, job as Obj);
      } catch (e) {
        // The Job quota holds the budget's concurrency too (a Job counts from creation to deletion).
        const message = apiMessage(e);
        if (apiStatus(e) === 403 && /exceeded quota/.test(message)) {
          throw new LaunchRefused(spec.template, [
            `the namespace's ResourceQuota refused the task's Job (the budget's concurrency is used up): ${message}`,
          ]);
        }
        throw e;
      }
      this.options.onEvent?.({ type: "start", id, running: this.live.size });
      return await this.supervise(spec, id, jobName, started, onPod, request.collect === true);
    } finally {
      await this.remove(jobName, files.length > 0);
      this.live.delete(jobName);
      this.options.onEvent?.({ type: "exit", id, running: this.live.size });
    }
  }

  private async supervise(
    spec: LaunchSpec,
    id: string,
    jobName: string,
    started: number,
    onPod: (pod: Obj) => void,
    collect: boolean,
  ): Promise<TaskResult> {
    const ledger = this.options.ledger;
    const watch = this.watch();
    let stoppedByCap = false;
    let lastTick = started;
    const deadline =
      started + (spec.timeoutSeconds + (this.options.graceSeconds ?? 15) + START_TIMEOUT_SECONDS) * 1000;
    const startChecks = new StartChecks(this.apis, this.namespace, spec, jobName, started);
    let killedByLauncher = false;
    let pod: Obj | undefined;
    let pidsHits = 0;
    // The pod's changes come from the namespace's watch; the launcher asks the API server only what a change calls
    // for (why no pod came, a runtime's handler), never on a timer.
    let seen = false;
    let ran = false;
    for (;;) {
      pod = watch.pod(jobName);
      if (pod !== undefined) {
        seen = true;
        onPod(pod);
      }
      if (pod?.metadata?.uid) pidsHits = Math.max(pidsHits, podPidsHits(pod.metadata.uid) ?? 0);
      const phase = pod?.status?.phase;
      if (!ran && phase !== undefined && phase !== "Pending") {
        ran = true;
        this.options.onEvent?.({ type: "running", id, running: this.live.size });
      }
      if (phase === "Succeeded" || phase === "Failed") break;
      // The task container ended, and its pod's holder keeps the pod (the task's stderr and files) to be read.
      if (readyToRead(pod)) break;
      // Deleted under the task (the Job's own deadline, the off switch): it ended there.
      if (pod === undefined && seen) break;
      if (!ran) await startChecks.check(pod);
      if (Date.now() > deadline) {
        killedByLauncher = true;
        break;
      }
      // The meter: the run stops when the month's spend reaches the cap (its Job deleted); the thresholds each second.
      let wake = this.options.pollMs ?? 1000;
      if (ledger !== undefined) {
        try {
          // Never waiting for another process's lock on the ledger, which would stop every timer of this launcher.
          if (Date.now() - lastTick >= 1000) {
            lastTick = Date.now();
            await ledger.tick({ wait: false });
          }
          const stopAt = await ledger.stopTime(id);
          if (stopAt !== undefined && ledger.now() >= stopAt) {
            stoppedByCap = true;
            await this.remove(jobName, false);
            break;
          }
          if (stopAt !== undefined) wake = Math.min(wake, Math.max(10, stopAt - ledger.now()));
        } catch {
          // A busy ledger this time: the next wake reads it again.
        }
      }
      await watch.next(jobName, Math.min(wake, Math.max(10, deadline - Date.now())));
    }
    const phase = pod?.status?.phase;
    const podName: string | undefined = pod?.metadata?.name;
    if (!killedByLauncher && !stoppedByCap && podName !== undefined) {
      if (phase === "Succeeded" || phase === "Failed" || readyToRead(pod)) this.ended.set(jobName, podName);
    }
    // Read out of the pod while its holder still holds it: the task's stderr, and its job folder when asked for.
    const dest = collect ? join(this.options.jobRoot ?? "", id) : undefined;
    const readout = await readOutPod(
      this.apis,
      this.namespace,
      pod,
      dest === undefined
        ? undefined
        : {
            containerPath: spec.jobFolder.containerPath,
            dest,
            maxBytes: spec.resources.diskMb * 1024 * 1024,
          },
    );
    return taskResult(this.apis, this.namespace, spec, {
      readout,
      dest,
      id,
      jobName,
      pod,
      started,
      killedByLauncher,
      stoppedByCap,
      pidsHits,
    });
  }

  private remove(jobName: string, configMap: boolean): Promise<void> {
    const watch = this.watch();
    const endedPod = this.ended.get(jobName);
    this.ended.delete(jobName);
    const podGone = async (until: number) => {
      while (watch.pod(jobName) !== undefined && Date.now() < until)
        await watch.next(jobName, until - Date.now());
    };
    return removeTaskObjects(
      this.apis,
      this.namespace,
      jobName,
      configMap,
      watch.active ? podGone : undefined,
      endedPod,
    );
  }

  /** The namespace's shared watch of task pods (runtime/kubernetes/pod-watch.ts). */
  private watch(): PodWatch {
    return podWatch(this.apis.config, this.apis.core, this.apis.server, this.namespace);
  }

  /** Objects of a task still in the namespace (Jobs, pods, ConfigMaps labelled with its id). */
  leftovers(taskId: string): Promise<string[]> {
    return taskLeftovers(this.apis, this.namespace, taskId);
  }

  /** Closes the run in the ledger: charged what its task container ran on the node, by the kubelet's clock. */
  private async charge(result: TaskResult, pod: Obj | undefined): Promise<TaskResult> {
    const ledger = this.options.ledger;
    if (ledger === undefined || !this.openRuns.delete(result.id)) return result;
    const closed = await ledger.complete(
      result.id,
      {
        exitCode: result.exitCode,
        limits: result.limits,
        killedByLauncher: result.killedByLauncher,
        ...(result.stoppedByCap ? { stoppedBy: "cap" as const } : {}),
        egress: result.egress?.decisions ?? [],
        broker: result.broker?.calls ?? [],
        usedSeconds: ranSeconds(pod, ledger.now()),
      },
      "done",
      ledger.now(),
    );
    return { ...result, chargeUsd: closed.chargeUsd ?? 0 };
  }

  /** Deletes every Job this launcher started; new launches are refused from now on. */
  async shutdown(): Promise<string[]> {
    this.stopping = true;
    const names = [...this.live.keys()];
    await Promise.all(names.map((n) => this.remove(n, true)));
    // Runs whose Jobs were just deleted: charged to now, recorded as interrupted.
    for (const id of [...this.openRuns]) {
      this.openRuns.delete(id);
      await this.options.ledger?.complete(id, {
        exitCode: null,
        stoppedBy: "interrupted",
        error: "the launcher was shut down",
      });
    }
    return names;
  }
}
