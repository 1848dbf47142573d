/**
 * The Kubernetes shape of a sandbox project, as plain objects (typed with the SDK's input types, no resource is
 * created here): the decisions live here, the component only wires.
 * Quantities use binary units: the spec's MB are MiB, as Docker's are.
 */
import type * as k8s from "@pulumi/kubernetes";
import {
  allowEntry,
  type Budget,
  budgetArithmetic,
  DEFAULT_PORTS,
  LABELS,
  type LaunchSpec,
  PROXY_CONFIG_DIR,
  PROXY_RUN_DIR,
  type ProxyListener,
  type ProxySpec,
  projectLabels,
  REFUSED_DESTINATIONS,
  trimNumber,
  usd,
} from "../model";

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
  const vcpu = Math.floor(Math.round(tasks * largest.vcpu * 1_000_000) / 1000) / 1000;
  const memoryMib = Math.floor(tasks * largest.memoryMb);
  const worstCaseUsd =
    (vcpu * budget.usdPerVcpuHour + (memoryMib / 1024) * budget.usdPerGbHour) * budget.hoursPerMonth;
  const arithmetic =
    tasks === 0
      ? `quota 0 (the project is disabled or the cap admits no task) = $0.00 ≤ cap ${usd(budget.monthlyCapUsd)}`
      : `quota ${budgetArithmetic(tasks, largest, budget)}: limits.cpu ${trimNumber(vcpu)}, limits.memory ${memoryMib}Mi ≤ cap ${usd(budget.monthlyCapUsd)}`;
  return { tasks, vcpu, memoryMib, diskMib: tasks * largest.diskMb, worstCaseUsd, arithmetic };
}

/** What the always-on proxy pod takes from the namespace's quota (on top of the task slots). */
export interface QuotaExtra {
  readonly vcpu: number;
  readonly memoryMib: number;
  readonly diskMib: number;
  readonly pods: number;
}

/** The proxy's share of the quota: one pod of its limits, so it never takes a task's slot. */
export function proxyQuotaExtra(proxy: ProxySpec): QuotaExtra {
  return {
    vcpu: proxy.resources.vcpu,
    memoryMib: proxy.resources.memoryMb,
    diskMib: PROXY_DISK_MIB,
    pods: 1,
  };
}

/** Ephemeral storage of the proxy pod (it writes nothing but its runtime files, which are memory). */
export const PROXY_DISK_MIB = 64;

/**
 * The ResourceQuota's `hard` map for a plan, plus the always-on proxy pod when the project has one (Jobs are only
 * tasks: the proxy is a Deployment).
 */
export function quotaHard(plan: QuotaPlan, extra?: QuotaExtra): Record<string, string> {
  const e = extra ?? { vcpu: 0, memoryMib: 0, diskMib: 0, pods: 0 };
  const vcpu = Math.round((plan.vcpu + e.vcpu) * 1000) / 1000;
  return {
    "limits.cpu": cpuQuantity(vcpu),
    "limits.memory": mibQuantity(plan.memoryMib + e.memoryMib),
    "limits.ephemeral-storage": mibQuantity(plan.diskMib + e.diskMib),
    "requests.cpu": cpuQuantity(vcpu),
    "requests.memory": mibQuantity(plan.memoryMib + e.memoryMib),
    "requests.ephemeral-storage": mibQuantity(plan.diskMib + e.diskMib),
    pods: String(plan.tasks + e.pods),
    "count/pods": String(plan.tasks + e.pods),
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

/**
 * Proxy mode: a template's pods (labelled `sandbox.egress=proxy` and with the template's name) may reach the proxy's
 * pods on that template's port, and nothing else: no DNS, no API server, no metadata, no other pod.
 */
export function proxyEgressSpec(listener: ProxyListener) {
  return {
    podSelector: { matchLabels: { [EGRESS_LABEL]: "proxy", [LABELS.template]: listener.template } },
    policyTypes: ["Egress"],
    egress: [
      {
        to: [{ podSelector: { matchLabels: { [LABELS.role]: "proxy" } } }],
        ports: [{ protocol: "TCP", port: listener.port }],
      },
    ],
  };
}

/** The labels that select the proxy's pods. */
export function proxySelector(project: string): Record<string, string> {
  return { [LABELS.project]: project, [LABELS.role]: "proxy" };
}

/** Every port an allowlist entry of the proxy may be reached on outside: 80 and 443, plus entries' own ports. */
export function proxyUpstreamPorts(proxy: ProxySpec): number[] {
  const ports = new Set<number>([DEFAULT_PORTS.http, DEFAULT_PORTS.tls]);
  for (const l of proxy.listeners)
    for (const e of l.allow) {
      const { port } = allowEntry(e);
      if (port !== undefined) ports.add(port);
    }
  return [...ports].sort((a, b) => a - b);
}

/**
 * The proxy's own policy: in, only proxy-mode task pods on the listener ports; out, the cluster's DNS (to resolve
 * allowed names) and any address outside the refused ranges on the allowed ports. The refused ranges are also refused
 * by the proxy itself after resolution; the policy is the second wall.
 */
export function proxyNetworkPolicySpec(proxy: ProxySpec) {
  const v4 = REFUSED_DESTINATIONS.filter((c) => !c.includes(":"));
  const v6 = REFUSED_DESTINATIONS.filter((c) => c.includes(":")).map((c) =>
    c.includes("/") ? c : `${c}/128`,
  );
  return {
    podSelector: { matchLabels: proxySelector(proxy.project) },
    policyTypes: ["Ingress", "Egress"],
    ingress: [
      {
        from: [{ podSelector: { matchLabels: { [EGRESS_LABEL]: "proxy" } } }],
        ports: proxy.listeners.map((l) => ({ protocol: "TCP", port: l.port })),
      },
    ],
    egress: [
      {
        to: [
          {
            namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "kube-system" } },
            podSelector: { matchLabels: { "k8s-app": "kube-dns" } },
          },
        ],
        ports: [
          { protocol: "UDP", port: 53 },
          { protocol: "TCP", port: 53 },
        ],
      },
      {
        to: [{ ipBlock: { cidr: "0.0.0.0/0", except: v4 } }, { ipBlock: { cidr: "::/0", except: v6 } }],
        ports: proxyUpstreamPorts(proxy).map((port) => ({ protocol: "TCP", port })),
      },
    ],
  };
}

/** The ConfigMap that holds the proxy's generated configuration (the image reads it from its config folder). */
export function proxyConfigMap(proxy: ProxySpec) {
  return {
    metadata: { name: `${proxy.name}-config`, namespace: proxy.project, labels: { ...proxy.labels } },
    data: { "squid.conf": proxy.config },
  };
}

/** The proxy's Service: a cluster address for its listener ports, named `<project>-proxy`. */
export function proxyServiceSpec(proxy: ProxySpec) {
  return {
    type: "ClusterIP",
    selector: proxySelector(proxy.project),
    ports: proxy.listeners.map((l) => ({
      name: `t-${l.port}`,
      protocol: "TCP",
      port: l.port,
      targetPort: l.port,
    })),
  };
}

/**
 * The proxy's Deployment: one replica, hardened like a task pod (non-root 13:13, read-only root with a memory
 * tmpfs for Squid's runtime files, every capability dropped, no escalation, RuntimeDefault seccomp, requests =
 * limits, no service-account token). The configuration's hash is a pod annotation, so a changed allowlist rolls it.
 */
export function proxyDeploymentSpec(proxy: ProxySpec, serviceAccount: string, enabled = true) {
  const [uid, gid] = proxy.user.split(":").map(Number) as [number, number];
  const limits = {
    cpu: cpuQuantity(proxy.resources.vcpu),
    memory: mibQuantity(proxy.resources.memoryMb),
    "ephemeral-storage": mibQuantity(PROXY_DISK_MIB),
  };
  const labels = { ...proxy.labels, ...proxySelector(proxy.project) };
  return {
    // A disabled project (the hard stop) runs no proxy either.
    replicas: enabled ? 1 : 0,
    selector: { matchLabels: proxySelector(proxy.project) },
    template: {
      metadata: { labels, annotations: { "sandbox.proxy/config-hash": proxy.configHash } },
      spec: {
        ...restrictedPod(serviceAccount, uid, gid, false),
        containers: [
          {
            name: "proxy",
            image: proxy.image,
            ports: proxy.listeners.map((l) => ({
              name: `t-${l.port}`,
              containerPort: l.port,
              protocol: "TCP",
            })),
            securityContext: restrictedContainer(uid, gid, ["ALL"]),
            resources: { requests: limits, limits },
            readinessProbe: { tcpSocket: { port: proxy.listeners[0]?.port ?? 3128 }, periodSeconds: 5 },
            volumeMounts: [
              { name: "run", mountPath: PROXY_RUN_DIR },
              { name: "tmp", mountPath: "/tmp" },
              { name: "config", mountPath: PROXY_CONFIG_DIR, readOnly: true },
            ],
          },
        ],
        volumes: [
          { name: "run", emptyDir: { medium: "Memory", sizeLimit: mibQuantity(proxy.resources.tmpfsMb) } },
          { name: "tmp", emptyDir: { medium: "Memory", sizeLimit: mibQuantity(proxy.resources.tmpfsMb) } },
          { name: "config", configMap: { name: `${proxy.name}-config` } },
        ],
      },
    },
  };
}

/**
 * The variable kubelet sets in a pod for a Service of its namespace (service links): `demo-proxy` gives
 * `DEMO_PROXY_SERVICE_HOST`, the Service's cluster address. Tasks name the proxy by it, so they need no DNS.
 */
export function serviceHostVariable(service: string): string {
  return `${service.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_SERVICE_HOST`;
}

/**
 * A task's environment on Kubernetes: the proxy variables name the proxy's Service by its cluster address
 * (`$(…_SERVICE_HOST)`, expanded by kubelet), because the task's policy allows no DNS.
 */
export function podEnv(spec: LaunchSpec): { name: string; value: string }[] {
  const host = spec.egress.proxyHost;
  return Object.entries(spec.env).map(([name, value]) => ({
    name,
    value:
      host !== undefined && spec.egress.mode === "proxy" && value.startsWith(`http://${host}:`)
        ? value.replace(`http://${host}:`, `http://$(${serviceHostVariable(host)}):`)
        : value,
  }));
}

/**
 * The in-container deadline for Kubernetes. The command runs as the container's PID 1, and the kernel ignores
 * SIGKILL sent to PID 1 from inside its namespace, so busybox's `timeout` (which signals from a child) could not
 * end it. A shell stays PID 1 and runs `timeout` as its child, which the deadline can kill.
 */
export function podDeadlineCommand(spec: LaunchSpec, command: readonly string[] = spec.command): string[] {
  return ["sh", "-c", `timeout -s KILL ${spec.timeoutSeconds} "$@" & wait $!`, "sh", ...command];
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
  const [uid, gid] = spec.user.split(":").map(Number) as [number, number];
  const limits = {
    cpu: cpuQuantity(spec.resources.vcpu),
    memory: mibQuantity(spec.resources.memoryMb),
    "ephemeral-storage": mibQuantity(spec.resources.diskMb),
  };
  // The proxy variables name the proxy's Service by its cluster address (a Docker network alias on Docker); in
  // proxy mode service links are on for that (the namespace holds no other Service).
  const env = podEnv(spec);
  const podSpec: k8s.types.input.core.v1.PodSpec = {
    restartPolicy: "Never",
    ...restrictedPod(serviceAccount, uid, gid, spec.egress.mode === "proxy"),
    containers: [
      {
        name: "task",
        image: spec.image,
        command: podDeadlineCommand(spec, command),
        workingDir: spec.jobFolder.containerPath,
        env,
        securityContext: restrictedContainer(uid, gid, spec.capDrop),
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
