/**
 * What came of a Kubernetes task, read once it ended: its exit code and reason from the pod's status, its log (one
 * stream: the cluster keeps one log per container), the limits it hit, why its set-up steps failed, and the proxy's
 * and broker's records of it.
 */
import {
  POLICY_GATE,
  POLICY_GATE_FAILED,
  POLICY_GATE_SECONDS,
} from "../../components/kubernetes/policy-gate";
import { type LaunchSpec, TASK_OUTPUT_MAX_BYTES } from "../../components/model";
import type { LimitHit, TaskResult } from "../task";
import { type KubeApis, orAbsent } from "./api";
import { taskBrokerCalls, taskEgress } from "./unit-logs";

// biome-ignore lint/suspicious/noExplicitAny: pod and job objects as the client returns them, read field by field
type Obj = any;

export async function taskResult(
  apis: KubeApis,
  namespace: string,
  spec: LaunchSpec,
  task: {
    readonly id: string;
    readonly jobName: string;
    readonly pod: Obj | undefined;
    readonly started: number;
    readonly killedByLauncher: boolean;
    readonly stoppedByCap: boolean;
    readonly pidsHits: number;
  },
): Promise<TaskResult> {
  const { id, jobName, pod, started, killedByLauncher, stoppedByCap, pidsHits } = task;
  const durationMs = Date.now() - started;
  const status = (pod?.status?.containerStatuses ?? []).find((s: Obj) => s.name === "task");
  const inits: Obj[] = pod?.status?.initContainerStatuses ?? [];
  const init = inits.find((s: Obj) => s.name === "seed");
  const gate = inits.find((s: Obj) => s.name === POLICY_GATE);
  const terminated = status?.state?.terminated;
  const log =
    pod === undefined
      ? ""
      : await apis.core
          .readNamespacedPodLog({
            name: pod.metadata.name,
            namespace: namespace,
            container: "task",
            // The kubelet rotates the log; whatever it keeps, the launcher reads a bounded amount.
            limitBytes: TASK_OUTPUT_MAX_BYTES,
          })
          .then((t) => String(t))
          .catch(() => "");
  const job: Obj = await orAbsent(() =>
    apis.batch.readNamespacedJob({ name: jobName, namespace: namespace }),
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
  if (timedOut && !stoppedByCap) limits.push("timeout");
  if (terminated?.reason === "OOMKilled") limits.push("oom");
  if (pidsHits > 0 || /can't fork|Resource temporarily unavailable/.test(log)) limits.push("pids");
  // The project's proxy and broker serve every template: the task's own lines are its pod's address's.
  const podIp: string | undefined = pod?.status?.podIP;
  const none = () => [];
  const egress =
    spec.egress.mode === "proxy" && podIp !== undefined
      ? await taskEgress(apis, namespace, podIp, started, spec.egress.allow).catch(none)
      : undefined;
  const calls =
    spec.broker !== undefined && podIp !== undefined
      ? await taskBrokerCalls(apis, namespace, podIp, started).catch(none)
      : undefined;
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
    stoppedByCap,
    durationMs,
    jobDir: "",
    ...(egress === undefined ? {} : { egress: { network: namespace, decisions: egress } }),
    ...(calls === undefined ? {} : { broker: { calls } }),
  };
}
