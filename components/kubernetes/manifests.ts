/**
 * The Kubernetes shape of a sandbox project, as plain objects (typed with the SDK's input types, no resource is
 * created here): the decisions live here, the component only wires.
 * Quantities use binary units: the spec's MB are MiB, as Docker's are.
 */
import type * as k8s from "@pulumi/kubernetes";
import type { Budget } from "../spec/budget";
import { budgetArithmetic, trimNumber, usd } from "../spec/budget";
import { LABELS, type LaunchSpec, projectLabels } from "../spec/launch";

/** The Pod Security Admission version the namespace pins (the cluster's own minor when it is older). */
export const PSA_VERSION = "v1.36";

/** Namespaces a project must never use: they belong to the cluster. */
export const RESERVED_NAMESPACES = ["default", "kube-system", "kube-public", "kube-node-lease"];

/** RuntimeClass names the stronger runtimes are usually installed under. */
export const RUNTIME_CLASSES = { runsc: "gvisor", kata: "kata" } as const;

/** Seconds a finished task Job is kept for its logs before the cluster deletes it (and frees its quota slot). */
export const JOB_TTL_SECONDS = 300;

/** Seconds past the in-container deadline before the Job's own deadline ends the pod. */
export const DEADLINE_GRACE_SECONDS = 30;

/** The label a task pod carries when its template sends traffic through the proxy. */
export const EGRESS_LABEL = "sandbox.egress";

/** Labels of the project namespace: the project's own plus Pod Security Admission `restricted`, pinned. */
export function namespaceLabels(project: string): Record<string, string> {
  return {
    ...projectLabels(project, "network"),
    "pod-security.kubernetes.io/enforce": "restricted",
    "pod-security.kubernetes.io/enforce-version": PSA_VERSION,
    "pod-security.kubernetes.io/audit": "restricted",
    "pod-security.kubernetes.io/audit-version": PSA_VERSION,
    "pod-security.kubernetes.io/warn": "restricted",
    "pod-security.kubernetes.io/warn-version": PSA_VERSION,
  };
}

/** `1.5` vCPU as a CPU quantity in millicores: `1500m`. */
export function cpuQuantity(vcpu: number): string {
  return `${Math.round(vcpu * 1000)}m`;
}

/** MiB as a quantity: `512Mi`. */
export function mibQuantity(mib: number): string {
  return `${Math.round(mib)}Mi`;
}

/** What a quota admits, derived from the budget: everything at once costs at most the cap. */
export interface QuotaPlan {
  /** Tasks (pods, and Jobs) at once. */
  readonly tasks: number;
  /** Total vCPU limits the namespace may hold. */
  readonly vcpu: number;
  /** Total memory limits in MiB. */
  readonly memoryMib: number;
  /** Total ephemeral storage in MiB. */
  readonly diskMib: number;
  /** Worst-case monthly spend of everything the quota admits. */
  readonly worstCaseUsd: number;
  /** The arithmetic, for outputs and messages. */
  readonly arithmetic: string;
}

/**
 * The quota for `tasks` slots of the largest template. The quota bounds the namespace's total CPU and memory
 * limits, so its worst case is (total vCPU × $/vCPU-h + total GB × $/GB-h) × hours, which is the plan's worst
 * case: at most the cap. A disabled project gets a zero quota: nothing new can start.
 */
export function quotaPlan(
  tasks: number,
  largest: { vcpu: number; memoryMb: number; diskMb: number },
  budget: Budget,
): QuotaPlan {
  // Millicores and MiB are what the API stores; round down so the quota never admits more than was priced.
  const vcpu = Math.floor(tasks * largest.vcpu * 1000) / 1000;
  const memoryMib = Math.floor(tasks * largest.memoryMb);
  const worstCaseUsd =
    (vcpu * budget.usdPerVcpuHour + (memoryMib / 1024) * budget.usdPerGbHour) * budget.hoursPerMonth;
  const arithmetic =
    tasks === 0
      ? `quota 0 (the project is disabled or the cap admits no task) = $0.00 ≤ cap ${usd(budget.monthlyCapUsd)}`
      : `quota ${budgetArithmetic(tasks, largest, budget)}: limits.cpu ${trimNumber(vcpu)}, limits.memory ${memoryMib}Mi ≤ cap ${usd(budget.monthlyCapUsd)}`;
  return { tasks, vcpu, memoryMib, diskMib: tasks * largest.diskMb, worstCaseUsd, arithmetic };
}

/** The ResourceQuota's `hard` map for a plan. */
export function quotaHard(plan: QuotaPlan): Record<string, string> {
  return {
    "limits.cpu": cpuQuantity(plan.vcpu),
    "limits.memory": mibQuantity(plan.memoryMib),
    "limits.ephemeral-storage": mibQuantity(plan.diskMib),
    "requests.cpu": cpuQuantity(plan.vcpu),
    "requests.memory": mibQuantity(plan.memoryMib),
    "requests.ephemeral-storage": mibQuantity(plan.diskMib),
    pods: String(plan.tasks),
    "count/pods": String(plan.tasks),
    "count/jobs.batch": String(plan.tasks),
  };
}

/** The LimitRange: a container without limits gets `defaults`; one above the largest template is rejected. */
export function limitRangeSpec(
  defaults: { vcpu: number; memoryMb: number; diskMb: number },
  max: { vcpu: number; memoryMb: number; diskMb: number },
) {
  const q = (r: { vcpu: number; memoryMb: number; diskMb: number }) => ({
    cpu: cpuQuantity(r.vcpu),
    memory: mibQuantity(r.memoryMb),
    "ephemeral-storage": mibQuantity(r.diskMb),
  });
  const d = {
    vcpu: Math.min(defaults.vcpu, max.vcpu),
    memoryMb: Math.min(defaults.memoryMb, max.memoryMb),
    diskMb: Math.min(defaults.diskMb, max.diskMb),
  };
  return {
    limits: [
      { type: "Container", default: q(d), defaultRequest: q(d), max: q(max) },
      { type: "Pod", max: q(max) },
    ],
  };
}

/** Default deny: every pod of the namespace, no ingress and no egress at all. */
export function defaultDenySpec() {
  return { podSelector: {}, policyTypes: ["Ingress", "Egress"], ingress: [], egress: [] };
}

/** Proxy mode: pods labelled for the proxy may reach the proxy's pods on its port, and nothing else. */
export function proxyEgressSpec(proxyPort: number) {
  return {
    podSelector: { matchLabels: { [EGRESS_LABEL]: "proxy" } },
    policyTypes: ["Egress"],
    egress: [
      {
        to: [{ podSelector: { matchLabels: { [LABELS.role]: "proxy" } } }],
        ports: [{ protocol: "TCP", port: proxyPort }],
      },
    ],
  };
}

/**
 * The in-container deadline for Kubernetes. The command runs as the container's PID 1, and the kernel ignores
 * SIGKILL sent to PID 1 from inside its namespace, so busybox's `timeout` (which signals from a child) could not
 * end it. A shell stays PID 1 and runs `timeout` as its child, which the deadline can kill.
 */
export function podDeadlineCommand(spec: LaunchSpec, command: readonly string[] = spec.command): string[] {
  return ["sh", "-c", `timeout -s KILL ${spec.timeoutSeconds} "$@" & wait $!`, "sh", ...command];
}

/** The hardened pod spec of one task of a template: every wall the Docker backend builds, as Kubernetes has it. */
export function hardenedPodSpec(
  spec: LaunchSpec,
  serviceAccount: string,
  command?: readonly string[],
): k8s.types.input.core.v1.PodSpec {
  const [uid, gid] = spec.user.split(":").map(Number) as [number, number];
  const limits = {
    cpu: cpuQuantity(spec.resources.vcpu),
    memory: mibQuantity(spec.resources.memoryMb),
    "ephemeral-storage": mibQuantity(spec.resources.diskMb),
  };
  // The proxy variables name the proxy's Service in the namespace (a Docker network alias on Docker).
  const env = Object.entries(spec.env).map(([name, value]) => ({ name, value }));
  const podSpec: k8s.types.input.core.v1.PodSpec = {
    restartPolicy: "Never",
    serviceAccountName: serviceAccount,
    automountServiceAccountToken: false,
    enableServiceLinks: false,
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
    containers: [
      {
        name: "task",
        image: spec.image,
        command: podDeadlineCommand(spec, command),
        workingDir: spec.jobFolder.containerPath,
        env,
        securityContext: {
          allowPrivilegeEscalation: false,
          privileged: false,
          readOnlyRootFilesystem: true,
          runAsNonRoot: true,
          runAsUser: uid,
          runAsGroup: gid,
          capabilities: { drop: [...spec.capDrop] },
          seccompProfile: { type: "RuntimeDefault" },
        },
        resources: { requests: limits, limits },
        volumeMounts: [
          { name: "tmp", mountPath: spec.tmpfs.path },
          { name: "job", mountPath: spec.jobFolder.containerPath },
        ],
      },
    ],
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
      name: `${spec.project}-${spec.template}-${taskId}`.slice(0, 63).replace(/-+$/, ""),
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
