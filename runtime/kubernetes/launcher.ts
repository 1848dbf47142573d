/**
 * Tasks on a Kubernetes cluster: one Job per task, made by `taskJob()` from the template's launch spec after checking
 * that the template's PodTemplate in the cluster is that spec (its spec hash), so what runs is what `up` deployed and
 * the policy pack judged. The task's files travel in a ConfigMap of the task, copied into the job folder (an
 * `emptyDir`) by an init container hardened like the task; the result is read from the pod's status and log; the Job
 * (foreground propagation: its pod first) and the ConfigMap are deleted afterwards. Concurrency is held twice: by the
 * launcher's slots and by the namespace's ResourceQuota, whose refusal is reported as such.
 */
import { randomBytes } from "node:crypto";
import { taskJob } from "../../components/kubernetes/pod";
import {
  POLICY_GATE,
  POLICY_GATE_FAILED,
  POLICY_GATE_SECONDS,
} from "../../components/kubernetes/policy-gate";
import {
  LABELS,
  type LaunchSpec,
  podTemplateName,
  TASK_OUTPUT_MAX_BYTES,
  taskServiceAccountName,
} from "../../components/model";
import { LaunchRefused } from "../launch-errors";
import type { LimitHit, TaskRequest, TaskResult } from "../launcher";
import { Slots } from "../limits";
import { apiMessage, apiStatus, type KubeApis, orAbsent } from "./api";
import { podPidsHits } from "./pod-pids";
import { checkRuntimeClass, missingHandler } from "./runtime-class";
import { collectTaskFiles, MAX_TASK_FILES_BYTES, SEED_MOUNT, seedScript, type TaskFile } from "./task-files";

/** Seconds a pod may wait to be created and scheduled before the launch is given up (quota, no node, no image). */
export const START_TIMEOUT_SECONDS = 60;

/** Container states that mean the image will never be there: nothing is pulled from a registry. */
const IMAGE_MISSING = new Set(["ErrImageNeverPull", "ErrImagePull", "ImagePullBackOff", "InvalidImageName"]);

export interface KubeLauncherOptions {
  /** Tasks allowed at once; extra tasks wait for a slot. Defaults to each spec's `maxConcurrentTasks`. */
  readonly maxConcurrent?: number;
  /** Seconds past the template's deadline before the launcher deletes the Job itself. Defaults to 15. */
  readonly graceSeconds?: number;
  /** How often the pod is read, in ms. Defaults to 250. */
  readonly pollMs?: number;
  readonly onEvent?: (e: { type: "start" | "exit"; id: string; running: number }) => void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// biome-ignore lint/suspicious/noExplicitAny: pod and job objects as the client returns them, read field by field
type Obj = any;

/** Runs tasks as Jobs in a project's namespace. */
export class KubeLauncher {
  private slots?: Slots;
  private readonly live = new Map<string, string>();
  private stopping = false;
  private readonly runtimesSeen = new Set<string>();

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
    if (request.agent !== undefined) {
      throw new LaunchRefused(spec.template, [
        "agents are metered by the ledger, which runs Docker tasks only; Kubernetes tasks take no --agent",
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
    await this.checkDeployed(spec);
    // Once per runtime and launcher: a class seen is not looked up again on every launch.
    if (!this.runtimesSeen.has(spec.runtime)) {
      await checkRuntimeClass(this.apis, spec);
      this.runtimesSeen.add(spec.runtime);
    }
    this.slots ??= new Slots(this.options.maxConcurrent ?? spec.maxConcurrentTasks);
    await this.slots.acquire();
    try {
      return await this.runAdmitted(spec, request, id, files);
    } finally {
      this.slots.release();
    }
  }

  /** The template's PodTemplate must be in the cluster and be this spec: `up` deployed what is about to run. */
  private async checkDeployed(spec: LaunchSpec): Promise<void> {
    const name = podTemplateName(spec.project, spec.template);
    const stored = await orAbsent(() =>
      this.apis.core.readNamespacedPodTemplate({ name, namespace: this.namespace }),
    ).catch((e) => {
      throw new LaunchRefused(spec.template, [
        `cannot read PodTemplate ${this.namespace}/${name} from ${this.apis.server}: ${apiMessage(e)}`,
      ]);
    });
    if (stored === undefined) {
      throw new LaunchRefused(spec.template, [
        `PodTemplate ${this.namespace}/${name} is not in the cluster: deploy the stack (\`up\`) first`,
      ]);
    }
    const hash = stored.metadata?.labels?.[LABELS.specHash];
    if (hash !== spec.specHash) {
      throw new LaunchRefused(spec.template, [
        `PodTemplate ${this.namespace}/${name} holds spec ${hash ?? "(none)"}, the config says ${spec.specHash}: run \`up\` so the cluster has what the config says`,
      ]);
    }
  }

  private async runAdmitted(
    spec: LaunchSpec,
    request: TaskRequest,
    id: string,
    files: readonly TaskFile[],
  ): Promise<TaskResult> {
    const started = Date.now();
    const job = taskJob(spec, this.namespace, id, taskServiceAccountName(spec.project), request.command);
    const jobName = job.metadata.name;
    const labels = job.metadata.labels;
    const podSpec = job.spec.template.spec as Obj;
    if (files.length > 0) {
      const task = podSpec.containers[0];
      // After the policy gate: the task's files are put in place once its network policy holds.
      podSpec.initContainers = [
        ...(podSpec.initContainers ?? []),
        {
          name: "seed",
          image: spec.image,
          command: ["sh", "-c", seedScript(files, spec.jobFolder.containerPath)],
          securityContext: task.securityContext,
          resources: task.resources,
          volumeMounts: [
            { name: "job", mountPath: spec.jobFolder.containerPath },
            { name: "seed", mountPath: SEED_MOUNT, readOnly: true },
          ],
        },
      ];
      podSpec.volumes.push({ name: "seed", configMap: { name: jobName, defaultMode: 0o444 } });
      await this.apis.core.createNamespacedConfigMap({
        namespace: this.namespace,
        body: {
          metadata: { name: jobName, namespace: this.namespace, labels },
          binaryData: Object.fromEntries(files.map((f, i) => [`f${i}`, f.data.toString("base64")])),
        },
      });
    }
    this.live.set(jobName, id);
    try {
      try {
        await this.apis.batch.createNamespacedJob({ namespace: this.namespace, body: job as Obj });
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
      return await this.supervise(spec, id, jobName, started);
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
  ): Promise<TaskResult> {
    const pollMs = this.options.pollMs ?? 250;
    const deadline =
      started + (spec.timeoutSeconds + (this.options.graceSeconds ?? 15) + START_TIMEOUT_SECONDS) * 1000;
    const startBy = started + START_TIMEOUT_SECONDS * 1000;
    let killedByLauncher = false;
    let pod: Obj | undefined;
    let pidsHits = 0;
    for (;;) {
      const pods = await this.apis.core.listNamespacedPod({
        namespace: this.namespace,
        labelSelector: `batch.kubernetes.io/job-name=${jobName}`,
      });
      pod = pods.items[0];
      if (pod?.metadata?.uid) pidsHits = Math.max(pidsHits, podPidsHits(pod.metadata.uid) ?? 0);
      const phase = pod?.status?.phase;
      if (phase === "Succeeded" || phase === "Failed") break;
      const job: Obj = await orAbsent(() =>
        this.apis.batch.readNamespacedJob({ name: jobName, namespace: this.namespace }),
      );
      const failed = (job?.status?.conditions ?? []).find(
        (c: Obj) => (c.type === "Failed" || c.type === "FailureTarget") && c.status === "True",
      );
      if (failed !== undefined && (pod === undefined || failed.reason === "DeadlineExceeded")) break;
      if (pod === undefined) {
        const refusal = await this.creationRefusal(jobName);
        if (refusal !== undefined) throw new LaunchRefused(spec.template, [refusal]);
        if (Date.now() > startBy)
          throw new LaunchRefused(spec.template, [
            `the cluster made no pod for Job ${jobName} in ${START_TIMEOUT_SECONDS} s`,
          ]);
      } else if (phase === "Pending") {
        const waiting = [
          ...(pod.status?.initContainerStatuses ?? []),
          ...(pod.status?.containerStatuses ?? []),
        ]
          .map((s: Obj) => s.state?.waiting)
          .find((w: Obj) => w !== undefined && IMAGE_MISSING.has(w.reason));
        if (waiting !== undefined) {
          throw new LaunchRefused(spec.template, [
            `image "${spec.image}" is not on the cluster's node (${waiting.reason}: ${waiting.message ?? ""}); the toolkit never pulls one: load it into the node's runtime`,
          ]);
        }
        if (spec.runtime !== "runc" && pod.spec?.nodeName !== undefined) {
          const missing = await missingHandler(this.apis, this.namespace, pod);
          if (missing !== undefined) {
            throw new LaunchRefused(spec.template, [
              `the node ${pod.spec.nodeName} cannot run RuntimeClass "${pod.spec.runtimeClassName}" (runtime ${spec.runtime}): ${missing}; configure its handler in the node's container runtime, or run the template with runtime runc`,
            ]);
          }
        }
        if (Date.now() > startBy && pod.spec?.nodeName === undefined) {
          const why = (pod.status?.conditions ?? []).find((c: Obj) => c.type === "PodScheduled")?.message;
          throw new LaunchRefused(spec.template, [
            `no node took the task's pod in ${START_TIMEOUT_SECONDS} s${why ? `: ${why}` : ""}`,
          ]);
        }
      }
      if (Date.now() > deadline) {
        killedByLauncher = true;
        break;
      }
      await sleep(pollMs);
    }
    const durationMs = Date.now() - started;
    const status = (pod?.status?.containerStatuses ?? []).find((s: Obj) => s.name === "task");
    const inits: Obj[] = pod?.status?.initContainerStatuses ?? [];
    const init = inits.find((s: Obj) => s.name === "seed");
    const gate = inits.find((s: Obj) => s.name === POLICY_GATE);
    const terminated = status?.state?.terminated;
    const log =
      pod === undefined
        ? ""
        : await this.apis.core
            .readNamespacedPodLog({
              name: pod.metadata.name,
              namespace: this.namespace,
              container: "task",
              // The kubelet rotates the log; whatever it keeps, the launcher reads a bounded amount.
              limitBytes: TASK_OUTPUT_MAX_BYTES,
            })
            .then((t) => String(t))
            .catch(() => "");
    const job: Obj = await orAbsent(() =>
      this.apis.batch.readNamespacedJob({ name: jobName, namespace: this.namespace }),
    );
    const deadlineExceeded = (job?.status?.conditions ?? []).some(
      (c: Obj) => c.reason === "DeadlineExceeded" && c.status === "True",
    );
    const exitCode: number | null = typeof terminated?.exitCode === "number" ? terminated.exitCode : null;
    const timedOut =
      killedByLauncher ||
      deadlineExceeded ||
      ((exitCode === 137 || exitCode === 124) && durationMs >= spec.timeoutSeconds * 1000);
    const limits: LimitHit[] = [];
    if (timedOut) limits.push("timeout");
    if (terminated?.reason === "OOMKilled") limits.push("oom");
    if (pidsHits > 0 || /can't fork|Resource temporarily unavailable/.test(log)) limits.push("pids");
    const initFailed = init?.state?.terminated !== undefined && init.state.terminated.exitCode !== 0;
    const gateFailed = gate?.state?.terminated !== undefined && gate.state.terminated.exitCode !== 0;
    return {
      id,
      container: pod?.metadata?.name ?? jobName,
      exitCode,
      // The cluster keeps one log per container: stdout and stderr interleaved, as written.
      stdout: log,
      stderr: gateFailed
        ? `${POLICY_GATE_FAILED} within ${POLICY_GATE_SECONDS} s (the cluster's API server still answered the pod); the task did not start\n`
        : initFailed
          ? `the task's files could not be put in its job folder (init step exit ${init.state.terminated.exitCode})\n`
          : "",
      limits,
      killedByLauncher,
      stoppedByCap: false,
      durationMs,
      jobDir: "",
    };
  }

  /** Why the Job controller could not create the pod, from the Job's events (quota, admission), if it said. */
  private async creationRefusal(jobName: string): Promise<string | undefined> {
    const events = await this.apis.core
      .listNamespacedEvent({
        namespace: this.namespace,
        fieldSelector: `involvedObject.kind=Job,involvedObject.name=${jobName}`,
      })
      .catch(() => undefined);
    const failed = (events?.items ?? []).find((e: Obj) => e.reason === "FailedCreate");
    if (failed === undefined) return undefined;
    const message = String(failed.message ?? "");
    return /exceeded quota/.test(message)
      ? `the namespace's ResourceQuota refused the task's pod (the budget's concurrency is used up): ${message}`
      : `the cluster refused the task's pod: ${message}`;
  }

  /** Deletes the Job (its pod first) and the task's ConfigMap; waits until the pod is gone. */
  private async remove(jobName: string, configMap: boolean): Promise<void> {
    await orAbsent(() =>
      this.apis.batch.deleteNamespacedJob({
        name: jobName,
        namespace: this.namespace,
        propagationPolicy: "Foreground",
        gracePeriodSeconds: 0,
      }),
    ).catch(() => undefined);
    if (configMap)
      await orAbsent(() =>
        this.apis.core.deleteNamespacedConfigMap({ name: jobName, namespace: this.namespace }),
      ).catch(() => undefined);
    // Foreground deletion: the garbage collector removes the pods, then the Job itself; both are waited for, so
    // that nothing of the task is listed once `run` returns.
    const until = Date.now() + 30_000;
    while (Date.now() < until) {
      const [pods, job] = await Promise.all([
        this.apis.core
          .listNamespacedPod({
            namespace: this.namespace,
            labelSelector: `batch.kubernetes.io/job-name=${jobName}`,
          })
          .catch(() => undefined),
        orAbsent(() => this.apis.batch.readNamespacedJob({ name: jobName, namespace: this.namespace })).then(
          (j) => j !== undefined,
          () => true,
        ),
      ]);
      if (pods !== undefined && pods.items.length === 0 && !job) return;
      await sleep(250);
    }
  }

  /** Objects of a task still in the namespace (Jobs, pods, ConfigMaps labelled with its id). */
  async leftovers(taskId: string): Promise<string[]> {
    const selector = { namespace: this.namespace, labelSelector: `${LABELS.task}=${taskId}` };
    const [jobs, pods, maps] = await Promise.all([
      this.apis.batch.listNamespacedJob(selector),
      this.apis.core.listNamespacedPod(selector),
      this.apis.core.listNamespacedConfigMap(selector),
    ]);
    return [
      ...jobs.items.map((j: Obj) => `job/${j.metadata.name}`),
      ...pods.items.map((p: Obj) => `pod/${p.metadata.name}`),
      ...maps.items.map((m: Obj) => `configmap/${m.metadata.name}`),
    ];
  }

  /** Deletes every Job this launcher started; new launches are refused from now on. */
  async shutdown(): Promise<string[]> {
    this.stopping = true;
    const names = [...this.live.keys()];
    await Promise.all(names.map((n) => this.remove(n, true)));
    return names;
  }
}
