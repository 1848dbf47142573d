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

/** The hardened pod spec of one task of a template: every wall the Docker backend builds, as Kubernetes has it. */
export function hardenedPodSpec(
  spec: LaunchSpec,
  serviceAccount: string,
  command?: readonly string[],
): k8s.types.input.core.v1.PodSpec {
  const { uid, gid } = parseUser(spec.user);
  const limits = {
    cpu: cpuQuantity(spec.resources.vcpu),
    memory: mibQuantity(spec.resources.memoryMb),
    "ephemeral-storage": mibQuantity(spec.resources.diskMb),
  };
  // The proxy variables and the broker's address name their Services by cluster address (a Docker network alias on
  // Docker); service links are on for that in proxy mode or with broker routes (the namespace holds no other Service).
  const env = podEnv(spec);
  const task: k8s.types.input.core.v1.Container = {
    name: "task",
    image: spec.image,
    command: deadline(spec.timeoutSeconds, command ?? spec.command, "command"),
    workingDir: spec.jobFolder.containerPath,
    env,
    securityContext: restrictedContainer(uid, gid, spec.capDrop),
    resources: { requests: limits, limits },
    volumeMounts: [
      { name: "tmp", mountPath: spec.tmpfs.path },
      { name: "job", mountPath: spec.jobFolder.containerPath },
    ],
  };
  const podSpec: k8s.types.input.core.v1.PodSpec = {
    restartPolicy: "Never",
    ...restrictedPod(serviceAccount, uid, gid, needsServiceLinks(spec)),
    // No task code runs before the pod's network policy holds (components/kubernetes/policy-gate.ts).
    initContainers: [policyGateContainer(task)],
    containers: [task],
    volumes: [
      { name: "tmp", emptyDir: { medium: "Memory", sizeLimit: mibQuantity(spec.tmpfs.sizeMb) } },
      { name: "job", emptyDir: { sizeLimit: mibQuantity(spec.resources.diskMb) } },
    ],
  };
  if (spec.runtime !== "runc") podSpec.runtimeClassName = RUNTIME_CLASSES[spec.runtime];
  return podSpec;
}

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
      template: { metadata: { labels }, spec: hardenedPodSpec(spec, serviceAccount, command) },
    },
  };
}
