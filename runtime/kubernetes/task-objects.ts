/**
 * A task's objects in its namespace, as the Kubernetes launcher and reconciliation meet them: why the Job controller
 * could not make the pod, deleting the Job (its pod first) and its ConfigMap and waiting until they are gone, what of
 * a task is left, and the task container's times on the node.
 */
import { LABELS, type LaunchSpec, podTemplateName } from "../../components/model";
import { LaunchRefused } from "../launch-errors";
import type { EngineTimes, OrphanEngine } from "../ledger/reconcile";
import { apiMessage, apiStatus, type KubeApis, orAbsent } from "./api";

// biome-ignore lint/suspicious/noExplicitAny: pod and job objects as the client returns them, read field by field
type Obj = any;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Why the Job controller could not create the pod, from the Job's events (quota, admission), if it said. */
export async function creationRefusal(
  apis: KubeApis,
  namespace: string,
  jobName: string,
  waitedMs = Number.POSITIVE_INFINITY,
): Promise<string | undefined> {
  const events = await apis.core
    .listNamespacedEvent({
      namespace,
      fieldSelector: `involvedObject.kind=Job,involvedObject.name=${jobName}`,
    })
    .catch(() => undefined);
  // What the Job controller tries again by itself is no refusal: a pod that lost a race for the namespace's quota
  // ("the object has been modified"), and, for a while, a quota whose count of pods lags the pods deleted.
  const failed = (events?.items ?? []).find((e: Obj) => {
    if (e.reason !== "FailedCreate") return false;
    const message = String(e.message ?? "");
    if (/the object has been modified/.test(message)) return false;
    return !/exceeded quota/.test(message) || waitedMs >= QUOTA_LAG_MS;
  });
  if (failed === undefined) return undefined;
  const message = String(failed.message ?? "");
  return /exceeded quota/.test(message)
    ? `the namespace's ResourceQuota refused the task's pod (the budget's concurrency is used up): ${message}`
    : `the cluster refused the task's pod: ${message}`;
}

/** How long a launch waits for a ResourceQuota's count to catch up with the objects deleted before it is refused. */
export const QUOTA_LAG_MS = 10_000;

/**
 * Deletes the Job (its pod first) and the task's ConfigMap; waits until the pod and the Job are gone. With
 * `podGone` (the namespace's watch) the pod's end is awaited there, and only the Job is read until it goes. With
 * `endedPod`, the pod of a task that ended and was read out, that pod is deleted at once (see below).
 */
export async function removeTaskObjects(
  apis: KubeApis,
  namespace: string,
  jobName: string,
  configMap: boolean,
  podGone?: (untilMs: number) => Promise<void>,
  endedPod?: string,
): Promise<void> {
  if (endedPod !== undefined) {
    // A pod whose task container has ended and been read out runs no task code (only its holder waits): it goes at
    // once, without the kubelet's confirmation that its containers stopped, and its Job with it. Every other pod is
    // deleted gracefully below: it is gone from the API only once the node has stopped its containers.
    // The Job first: a Job being deleted makes no pod in place of the one that goes.
    await orAbsent(() =>
      apis.batch.deleteNamespacedJob({ name: jobName, namespace, propagationPolicy: "Background" }),
    ).catch(() => undefined);
    await orAbsent(() =>
      apis.core.deleteNamespacedPod({ name: endedPod, namespace, gracePeriodSeconds: 0 }),
    ).catch(() => undefined);
  } else {
    await orAbsent(() =>
      apis.batch.deleteNamespacedJob({
        name: jobName,
        namespace,
        propagationPolicy: "Foreground",
        gracePeriodSeconds: 0,
      }),
    ).catch(() => undefined);
  }
  if (configMap)
    await orAbsent(() => apis.core.deleteNamespacedConfigMap({ name: jobName, namespace })).catch(
      () => undefined,
    );
  // Foreground deletion: the garbage collector removes the pods, then the Job itself; both are waited for, so that
  // nothing of the task is listed once the launcher returns.
  const until = Date.now() + 30_000;
  // The pods are seen going on the launcher's watch when it has one; else they are listed.
  if (podGone !== undefined) await podGone(until);
  const podsLeft = async (): Promise<boolean> => {
    if (podGone !== undefined) return false;
    const pods = await apis.core
      .listNamespacedPod({ namespace, labelSelector: `batch.kubernetes.io/job-name=${jobName}` })
      .catch(() => undefined);
    return pods === undefined || pods.items.length > 0;
  };
  while (Date.now() < until) {
    const [pods, job] = await Promise.all([
      podsLeft(),
      orAbsent(() => apis.batch.readNamespacedJob({ name: jobName, namespace })).then(
        (j) => j !== undefined,
        () => true,
      ),
    ]);
    if (!pods && !job) return;
    await sleep(250);
  }
}

/** Objects of a task still in the namespace (Jobs, pods, ConfigMaps labelled with its id). */
export async function taskLeftovers(apis: KubeApis, namespace: string, taskId: string): Promise<string[]> {
  const selector = { namespace, labelSelector: `${LABELS.task}=${taskId}` };
  const [jobs, pods, maps] = await Promise.all([
    apis.batch.listNamespacedJob(selector),
    apis.core.listNamespacedPod(selector),
    apis.core.listNamespacedConfigMap(selector),
  ]);
  return [
    ...jobs.items.map((j: Obj) => `job/${j.metadata.name}`),
    ...pods.items.map((p: Obj) => `pod/${p.metadata.name}`),
    ...maps.items.map((m: Obj) => `configmap/${m.metadata.name}`),
  ];
}

/** The task container's times on the node (the kubelet's clock, to the second), from its pod's status. */
export function taskTimes(pod: Obj | undefined): { startedAt?: number; finishedAt?: number } {
  const status = (pod?.status?.containerStatuses ?? []).find((s: Obj) => s.name === "task");
  const time = (v: unknown) => {
    const t = v === undefined || v === null ? Number.NaN : Date.parse(String(v));
    return Number.isFinite(t) ? t : undefined;
  };
  const startedAt = time(status?.state?.terminated?.startedAt ?? status?.state?.running?.startedAt);
  const finishedAt = time(status?.state?.terminated?.finishedAt);
  return {
    ...(startedAt === undefined ? {} : { startedAt }),
    ...(finishedAt === undefined ? {} : { finishedAt }),
  };
}

/** The seconds a task ran on the node: from its container's start to its end (nothing when it never started). */
export function ranSeconds(pod: Obj | undefined, now: number): number {
  const { startedAt, finishedAt } = taskTimes(pod);
  if (startedAt === undefined) return 0;
  return Math.max(0, ((finishedAt ?? now) - startedAt) / 1000);
}

/**
 * Reconciliation's view of a namespace (runtime/ledger/reconcile.ts): a run's "container" is its Job; stopping it deletes the
 * Job (its pod first) after reading the task container's times; removing it deletes the Job and its ConfigMap.
 */
export function kubeOrphans(apis: KubeApis, namespace: string): OrphanEngine {
  return {
    async stop(jobName): Promise<EngineTimes | undefined> {
      const job = await orAbsent(() => apis.batch.readNamespacedJob({ name: jobName, namespace }));
      if (job === undefined) return undefined;
      const pods = await apis.core.listNamespacedPod({
        namespace,
        labelSelector: `batch.kubernetes.io/job-name=${jobName}`,
      });
      const pod: Obj = pods.items[0];
      const { startedAt, finishedAt } = taskTimes(pod);
      const status = (pod?.status?.containerStatuses ?? []).find((s: Obj) => s.name === "task");
      const code = status?.state?.terminated?.exitCode;
      const running = finishedAt === undefined && pod !== undefined;
      if (running) await removeTaskObjects(apis, namespace, jobName, true);
      return {
        startedAt,
        finishedAt: running ? Date.now() : finishedAt,
        exitCode: typeof code === "number" ? code : null,
        stoppedNow: running,
      };
    },
    remove: (jobName) => removeTaskObjects(apis, namespace, jobName, true),
    cleanup: async () => undefined,
  };
}

/** The template's PodTemplate must be in the cluster and be this spec: `up` deployed what is about to run. */
export async function checkDeployed(apis: KubeApis, namespace: string, spec: LaunchSpec): Promise<void> {
  const name = podTemplateName(spec.project, spec.template);
  const stored = await orAbsent(() =>
    apis.core.readNamespacedPodTemplate({ name, namespace: namespace }),
  ).catch((e) => {
    throw new LaunchRefused(spec.template, [
      `cannot read PodTemplate ${namespace}/${name} from ${apis.server}: ${apiMessage(e)}`,
    ]);
  });
  if (stored === undefined) {
    throw new LaunchRefused(spec.template, [
      `PodTemplate ${namespace}/${name} is not in the cluster: deploy the stack (\`up\`) first`,
    ]);
  }
  const hash = stored.metadata?.labels?.[LABELS.specHash];
  if (hash !== spec.specHash) {
    throw new LaunchRefused(spec.template, [
      `PodTemplate ${namespace}/${name} holds spec ${hash ?? "(none)"}, the config says ${spec.specHash}: run \`up\` so the cluster has what the config says`,
    ]);
  }
}

/** How many times a Job's creation is tried when the namespace's ResourceQuota was changed under it. */
const QUOTA_CONFLICT_TRIES = 8;

/**
 * Creates the task's Job. Launches at once in one namespace update its ResourceQuota's usage together, and the API
 * server answers one that lost the race 409 ("the object has been modified") after its own retries: nothing was
 * created, so the creation is tried again. And the quota counts a Job at once when it is created but frees it only
 * when its controller has seen it deleted: when tasks end and start quickly, a launch the ledger and the launcher's
 * own slots admitted may find the count still full for a moment, so an "exceeded quota" refusal is tried again for
 * up to {@link QUOTA_LAG_MS} before it stands.
 */
export async function createJob(apis: KubeApis, namespace: string, job: Obj): Promise<void> {
  const until = Date.now() + QUOTA_LAG_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      await apis.batch.createNamespacedJob({ namespace, body: job });
      return;
    } catch (e) {
      const message = apiMessage(e);
      const conflict = apiStatus(e) === 409 && /resourcequotas/.test(message);
      const lag = apiStatus(e) === 403 && /exceeded quota/.test(message) && Date.now() < until;
      if (!(conflict && attempt < QUOTA_CONFLICT_TRIES) && !lag) throw e;
      await new Promise((r) => setTimeout(r, Math.min(500, attempt * 25) + Math.floor(Math.random() * 25)));
    }
  }
}
