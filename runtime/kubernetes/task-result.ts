/**
 * What came of a Kubernetes task, read once it ended: its exit code and reason from the pod's status, its stdout (the
 * task container's log) and its stderr (read out through the pod's holder), the limits it hit, why its set-up steps or
 * its start failed, and the proxy's and broker's records of it.
 */
import { HOLDER } from "../../components/kubernetes/pod";
import {
  POLICY_GATE,
  POLICY_GATE_FAILED,
  POLICY_GATE_SECONDS,
} from "../../components/kubernetes/policy-gate";
import { type LaunchSpec, TASK_OUTPUT_MAX_BYTES } from "../../components/model";
import type { LimitHit, TaskResult } from "../task";
import { type KubeApis, orAbsent } from "./api";
import type { Readout } from "./readout";
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
    /** What was read out of the pod through its holder (none when the pod went first). */
    readonly readout: Readout | undefined;
    /** Where the job folder, asked for, was brought back to. */
    readonly dest: string | undefined;
  },
): Promise<TaskResult> {
  const { id, jobName, pod, started, killedByLauncher, stoppedByCap, pidsHits, readout } = task;
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
  const exitCode: number | null = typeof terminated?.exitCode === "number" ? terminated.exitCode : null;
  // Only a task that was killed (or never reported an exit) may have met the Job's own deadline: its Job says.
  const killed = exitCode === null || exitCode === 137;
  const job: Obj = killed
    ? await orAbsent(() => apis.batch.readNamespacedJob({ name: jobName, namespace: namespace }))
    : undefined;
  const deadlineExceeded = (job?.status?.conditions ?? []).some(
    (c: Obj) => c.reason === "DeadlineExceeded" && c.status === "True",
  );
  const timedOut =
    killedByLauncher ||
    deadlineExceeded ||
    ((exitCode === 137 || exitCode === 124) && durationMs >= spec.timeoutSeconds * 1000);
  const limits: LimitHit[] = [];
  if (timedOut && !stoppedByCap) limits.push("timeout");
  if (terminated?.reason === "OOMKilled") limits.push("oom");
  // A task container the node could not start (containerd's StartError; or under gVisor, the sandbox gone at once: the
  // task and its holder, which never ends by itself, both with exit 128): say so, and under gVisor, whose own threads
  // share the pod's process limit, what to look at.
  const holder = (pod?.status?.containerStatuses ?? []).find((s: Obj) => s.name === HOLDER);
  const neverStarted =
    terminated?.reason === "StartError" || (exitCode === 128 && holder?.state?.terminated?.exitCode === 128);
  const notStarted = neverStarted
    ? `sandbox: the task's container never started (${[terminated.reason, `exit ${exitCode}`, terminated.message].filter(Boolean).join(", ")})${spec.runtime === "runsc" ? `; under gVisor the pod's process limit (the node's podPidsLimit) also holds gVisor's own threads for the task and its results holder${pidsHits > 0 ? ", and the pod reached it" : ""}: the template declares ${spec.resources.pids}, is the node's limit as large?` : ""}\n`
    : "";
  // A pod that could not be read out says so where its stderr would be (with a job folder asked for, `jobProblem`).
  const unread =
    readout?.problem !== undefined && task.dest === undefined && !neverStarted
      ? `sandbox: the task's stderr could not be read from its pod: ${readout.problem}\n`
      : "";
  const stderr = `${readout?.stderr ?? ""}${unread}${notStarted}`;
  const forkFailed = /can't fork|Resource temporarily unavailable/;
  if (pidsHits > 0 || forkFailed.test(log) || forkFailed.test(stderr)) limits.push("pids");
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
  // The job folder, asked for, came back (all of it, or up to `jobProblem`) when the pod could be read out.
  const brought = task.dest !== undefined && readout !== undefined;
  const jobProblem =
    task.dest === undefined
      ? undefined
      : (readout?.problem ??
        (readout === undefined
          ? "the pod was gone, or its task never ran, before its job folder could be read"
          : undefined));
  const initFailed = init?.state?.terminated !== undefined && init.state.terminated.exitCode !== 0;
  const gateFailed = gate?.state?.terminated !== undefined && gate.state.terminated.exitCode !== 0;
  return {
    id,
    container: pod?.metadata?.name ?? jobName,
    exitCode,
    // The task's log is its stdout; its stderr was written to a file of the pod and read out through the pod's
    // holder (components/kubernetes/pod.ts). A pod without one (Kata) keeps both streams in its log.
    stdout: log,
    stderr: gateFailed
      ? `${POLICY_GATE_FAILED} within ${POLICY_GATE_SECONDS} s (the cluster's API server still answered the pod); the task did not start\n`
      : initFailed
        ? `the task's files could not be put in its job folder (init step exit ${init.state.terminated.exitCode})\n`
        : stderr,
    limits,
    killedByLauncher,
    stoppedByCap,
    durationMs,
    jobDir: brought ? (task.dest ?? "") : "",
    ...(readout?.notCopied === undefined ? {} : { notCopied: readout.notCopied }),
    ...(jobProblem === undefined ? {} : { jobProblem }),
    ...(egress === undefined ? {} : { egress: { network: namespace, decisions: egress } }),
    ...(calls === undefined ? {} : { broker: { calls } }),
  };
}
