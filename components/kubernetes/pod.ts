/**
 * A task's pod on Kubernetes: the hardened pod spec every PodTemplate and Job holds (typed with the SDK's input
 * types, no resource is created here), its labels and environment, the in-container deadline, and the Job of one task.
 */
import type * as k8s from "@pulumi/kubernetes";
import { deadline, type LaunchSpec, parseUser, taskJobName } from "../model";
import { policyGateContainer } from "./policy-gate";
import { cpuQuantity, mibQuantity } from "./quantities";

/** RuntimeClass names the stronger runtimes are usually installed under. */
export const RUNTIME_CLASSES = { runsc: "gvisor", kata: "kata" } as const;

/** Seconds a finished task Job is kept for its logs before the cluster deletes it (and frees its quota slot). */
export const JOB_TTL_SECONDS = 300;

/** Seconds past the in-container deadline before the Job's own deadline ends the pod. */
export const DEADLINE_GRACE_SECONDS = 30;

/**
 * The folder (an `emptyDir` of the pod) where a task's standard error goes: the cluster keeps one log per container,
 * stdout and stderr interleaved, so the task's stderr is written to a file there instead and its log is its stdout.
 */
export const STREAMS_PATH = "/run/sandbox";

/**
 * The task's standard error, in {@link STREAMS_PATH}: made empty by the pod's first init container, and the only
 * thing of that folder the task container mounts (a file, where the task can write nothing else).
 */
export const STDERR_FILE = `${STREAMS_PATH}/stderr`;

/**
 * The second container of a task pod: it runs no task code and only waits (until its pod is deleted, or the Job's
 * deadline), so that once the task container has ended the launcher can still read its stderr and its job folder
 * (`run --out`, `--keep`) out of the pod, by exec, before the pod goes. Hardened like the task, with limits of its own
 * that the namespace's quota holds on top of each task slot ({@link HOLDER_RESOURCES}).
 */
export const HOLDER = "results";

/**
 * Whether a template's task pods hold a {@link HOLDER}: on runc and gVisor. gVisor's own threads count against the
 * pod's process limit (the node's podPidsLimit): a pod with its task and the holder took 76 of them on the 2-core test
 * node, and under 64 runsc could not start the second container (`StartSubcontainer`: EOF, the sandbox gone). So a
 * runsc template on Kubernetes declares at least `RUNSC_POD_MIN_PIDS` (components/model/template.ts). Kata pods
 * keep one container: no node here runs Kata, so a second container beside its task is unproven; their stderr stays in
 * their log with their stdout, and their job folder goes with them.
 */
export function holdsResults(spec: Pick<LaunchSpec, "runtime">): boolean {
  return spec.runtime === "runc" || spec.runtime === "runsc";
}

/** The holder's limits: enough for `sh`, `cat` and `tar` reading the task's files out; its log stays empty. */
export const HOLDER_RESOURCES = { vcpu: 0.1, memoryMb: 32, diskMb: 64 } as const;

/** The label a task pod carries when its template sends traffic through the proxy. */
export const EGRESS_LABEL = "sandbox.egress";

/**
 * The variable kubelet sets in a pod for a Service of its namespace (service links): `demo-proxy` gives
 * `DEMO_PROXY_SERVICE_HOST`, the Service's cluster address. Tasks name the proxy by it, so they need no DNS.
 */
export function serviceHostVariable(service: string): string {
  return `${service.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_SERVICE_HOST`;
}

/**
 * A task's environment on Kubernetes: the proxy variables and the broker's address name their Services by cluster
 * address (`$(…_SERVICE_HOST)`, expanded by kubelet), because the task's policy allows no DNS.
 */
export function podEnv(spec: LaunchSpec): { name: string; value: string }[] {
  const hosts = [spec.egress.mode === "proxy" ? spec.egress.proxyHost : undefined, spec.broker?.host].filter(
    (h): h is string => h !== undefined,
  );
  return Object.entries(spec.env).map(([name, value]) => {
    const host = hosts.find((h) => value.startsWith(`http://${h}:`));
    return {
      name,
      value:
        host === undefined
          ? value
          : value.replace(`http://${host}:`, `http://$(${serviceHostVariable(host)}):`),
    };
  });
}

/** True when a task's pod reaches a Service of its namespace (the proxy, the broker), so needs service links. */
export function needsServiceLinks(spec: LaunchSpec): boolean {
  return spec.egress.mode === "proxy" || spec.broker !== undefined;
}

/**
 * The pod-level walls every pod of a project gets: a dedicated service account without a token, no service links
 * (unless the pod needs its proxy's Service address), no host namespaces, non-root ids, the runtime's seccomp profile.
 */
export function restrictedPod(serviceAccount: string, uid: number, gid: number, serviceLinks: boolean) {
  return {
    serviceAccountName: serviceAccount,
    automountServiceAccountToken: false,
    enableServiceLinks: serviceLinks,
    hostNetwork: false,
    hostPID: false,
    hostIPC: false,
    securityContext: {
      runAsNonRoot: true,
      runAsUser: uid,
      runAsGroup: gid,
      fsGroup: gid,
      seccompProfile: { type: "RuntimeDefault" },
    },
  };
}

/** The container-level walls: no escalation, not privileged, read-only root, non-root, the drop set, seccomp. */
export function restrictedContainer(uid: number, gid: number, drop: readonly string[]) {
  return {
    allowPrivilegeEscalation: false,
    privileged: false,
    readOnlyRootFilesystem: true,
    runAsNonRoot: true,
    runAsUser: uid,
    runAsGroup: gid,
    capabilities: { drop: [...drop] },
    seccompProfile: { type: "RuntimeDefault" },
  };
}

/**
 * The hardened pod spec of one task of a template: every wall the Docker backend builds, as Kubernetes has it. Without
 * `hold` (the stack's probe Job, whose result is its log), or off runc ({@link holdsResults}), the pod has no
 * {@link HOLDER} and ends with its task.
 */
export function hardenedPodSpec(
  spec: LaunchSpec,
  serviceAccount: string,
  command?: readonly string[],
  hold = true,
): k8s.types.input.core.v1.PodSpec {
  const holds = hold && holdsResults(spec);
  const { uid, gid } = parseUser(spec.user);
  const limits = {
    cpu: cpuQuantity(spec.resources.vcpu),
    memory: mibQuantity(spec.resources.memoryMb),
    "ephemeral-storage": mibQuantity(spec.resources.diskMb),
  };
  // The proxy variables and the broker's address name their Services by cluster address (a Docker network alias on
  // Docker); service links are on for that in proxy mode or with broker routes (the namespace holds no other Service).
  const env = podEnv(spec);
  // With a holder, the deadline's shell sends the task's stderr to its file before it starts the task.
  const wrapped = deadline(spec.timeoutSeconds, command ?? spec.command, "command");
  const [sh = "sh", c = "-c", script = "", ...args] = wrapped;
  const task: k8s.types.input.core.v1.Container = {
    name: "task",
    image: spec.image,
    command: holds ? [sh, c, `exec 2>${STDERR_FILE}; ${script}`, ...args] : wrapped,
    workingDir: spec.jobFolder.containerPath,
    env,
    securityContext: restrictedContainer(uid, gid, spec.capDrop),
    resources: { requests: limits, limits },
    volumeMounts: [
      { name: "tmp", mountPath: spec.tmpfs.path },
      { name: "job", mountPath: spec.jobFolder.containerPath },
      ...(holds ? [{ name: "streams", mountPath: STDERR_FILE, subPath: "stderr" }] : []),
    ],
  };
  const holdLimits = {
    cpu: cpuQuantity(HOLDER_RESOURCES.vcpu),
    memory: mibQuantity(HOLDER_RESOURCES.memoryMb),
    "ephemeral-storage": mibQuantity(HOLDER_RESOURCES.diskMb),
  };
  const holder: k8s.types.input.core.v1.Container = {
    name: HOLDER,
    image: spec.image,
    // Waits, and ends at once when its pod is deleted (a shell's trap runs when `wait` is interrupted).
    command: [
      "sh",
      "-c",
      `trap 'exit 0' TERM; sleep ${spec.timeoutSeconds + DEADLINE_GRACE_SECONDS} & wait $!`,
    ],
    securityContext: restrictedContainer(uid, gid, spec.capDrop),
    resources: { requests: holdLimits, limits: holdLimits },
    volumeMounts: [
      { name: "job", mountPath: spec.jobFolder.containerPath, readOnly: true },
      { name: "streams", mountPath: STREAMS_PATH, readOnly: true },
    ],
  };
  const podSpec: k8s.types.input.core.v1.PodSpec = {
    restartPolicy: "Never",
    ...restrictedPod(serviceAccount, uid, gid, needsServiceLinks(spec)),
    // No task code runs before the pod's network policy holds (components/kubernetes/policy-gate.ts).
    initContainers: [
      policyGateContainer(
        task,
        holds ? { volume: "streams", folder: STREAMS_PATH, file: "stderr" } : undefined,
      ),
    ],
    // The holder first: the node starts it before the task, so that a task using up the pod's process limit (a fork
    // bomb) cannot keep it from starting; it keeps two processes (`sh`, `sleep`) under that limit.
    containers: holds ? [holder, task] : [task],
    volumes: [
      { name: "tmp", emptyDir: { medium: "Memory", sizeLimit: mibQuantity(spec.tmpfs.sizeMb) } },
      { name: "job", emptyDir: { sizeLimit: mibQuantity(spec.resources.diskMb) } },
      // The task's stderr: counted, like its log, in the pod's ephemeral storage.
      ...(holds ? [{ name: "streams", emptyDir: {} }] : []),
    ],
  };
  if (spec.runtime !== "runc") podSpec.runtimeClassName = RUNTIME_CLASSES[spec.runtime];
  return podSpec;
}

/** A task pod's annotations: `kubectl logs` and `kubectl exec` go to the task container, not the holder before it. */
export const TASK_POD_ANNOTATIONS = { "kubectl.kubernetes.io/default-container": "task" } as const;

/** Labels of a task pod: the project's labels plus, in proxy mode, the label the egress policy selects. */
export function taskPodLabels(spec: LaunchSpec): Record<string, string> {
  return spec.egress.mode === "proxy" ? { ...spec.labels, [EGRESS_LABEL]: "proxy" } : { ...spec.labels };
}

/**
 * A Job for one task: never restarted, never retried, one pod, the template's deadline plus a grace as the
 * platform's own deadline, and deleted a while after it finishes.
 */
export function taskJob(
  spec: LaunchSpec,
  namespace: string,
  taskId: string,
  serviceAccount: string,
  command?: readonly string[],
  holds = true,
) {
  if (!/^[a-z0-9]([a-z0-9-]{0,40}[a-z0-9])?$/.test(taskId)) {
    throw new Error(`task id "${taskId}" must be lower-case letters, digits and -, at most 42 characters`);
  }
  const labels = { ...taskPodLabels(spec), "sandbox.task": taskId };
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name: taskJobName(spec.project, spec.template, taskId),
      namespace,
      labels,
    },
    spec: {
      backoffLimit: 0,
      parallelism: 1,
      completions: 1,
      activeDeadlineSeconds: spec.timeoutSeconds + DEADLINE_GRACE_SECONDS,
      ttlSecondsAfterFinished: JOB_TTL_SECONDS,
      template: {
        metadata: { labels, annotations: { ...TASK_POD_ANNOTATIONS } },
        spec: hardenedPodSpec(spec, serviceAccount, command, holds),
      },
    },
  };
}
