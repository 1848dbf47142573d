/**
 * Valid fixtures, one per resource kind, written from the Docker and Kubernetes API references and the public
 * checklists: each one passes every rule. Tests copy one and break a single field.
 */

export const DOCKER = "docker:index/container:Container";

/** A hardened `docker.Container`: the toolkit's default template, written by hand. */
export function safeContainer(): Record<string, unknown> {
  return {
    image: "sandbox-busybox@sha256:0a0ca1b8c1f8d2b8ad6a2e4b4b0a3f2b0f45c1c6c3e8a1d1b7a9e5d3c2b1a0f9",
    name: "task-1",
    command: ["timeout", "-s", "KILL", "600", "sh", "/job/run.sh"],
    user: "1000:1000",
    capabilities: { drops: ["ALL"] },
    securityOpts: ["no-new-privileges:true"],
    readOnly: true,
    tmpfs: { "/tmp": "rw,noexec,nosuid,size=64m" },
    memory: 512,
    memorySwap: 512,
    cpus: "1",
    restart: "no",
    networkMode: "none",
    mounts: [
      { type: "bind", source: "/var/lib/sandbox-projects/demo/jobs/1", target: "/job", readOnly: false },
    ],
    envs: ["LANG=C.UTF-8", "TASK_ID=1", "HOME=/job"],
    labels: [
      { label: "sandbox.project", value: "demo" },
      { label: "sandbox.role", value: "task" },
    ],
    rm: false,
    mustRun: false,
  };
}

/** A restricted-PSA container with every sandbox setting. */
export function safeK8sContainer(name = "task"): Record<string, unknown> {
  return {
    name,
    image: "registry.example/sandbox@sha256:0a0ca1b8c1f8d2b8ad6a2e4b4b0a3f2b0f45c1c6c3e8a1d1b7a9e5d3c2b1a0f9",
    command: ["sh", "/job/run.sh"],
    env: [
      { name: "LANG", value: "C.UTF-8" },
      { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
    ],
    resources: { limits: { cpu: "500m", memory: "512Mi" }, requests: { cpu: "100m", memory: "128Mi" } },
    securityContext: {
      allowPrivilegeEscalation: false,
      privileged: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      runAsUser: 1000,
      runAsGroup: 1000,
      capabilities: { drop: ["ALL"] },
      seccompProfile: { type: "RuntimeDefault" },
    },
    volumeMounts: [
      { name: "job", mountPath: "/job" },
      { name: "tmp", mountPath: "/tmp" },
    ],
  };
}

/** A pod spec for a one-shot task. */
export function safePodSpec(): Record<string, unknown> {
  return {
    restartPolicy: "Never",
    automountServiceAccountToken: false,
    securityContext: {
      runAsNonRoot: true,
      runAsUser: 1000,
      runAsGroup: 1000,
      fsGroup: 1000,
      seccompProfile: { type: "RuntimeDefault" },
    },
    containers: [safeK8sContainer()],
    volumes: [
      { name: "job", emptyDir: { sizeLimit: "1Gi" } },
      { name: "tmp", emptyDir: { medium: "Memory", sizeLimit: "64Mi" } },
    ],
  };
}

const META = { labels: { "sandbox.project": "demo", "sandbox.role": "task" } };

/** Pod carriers: type token -> props built around a pod spec (and pod template metadata). */
export interface Carrier {
  readonly type: string;
  readonly kind: string;
  /** Where the pod spec sits, as keys. */
  readonly specPath: readonly string[];
  readonly build: (
    spec: Record<string, unknown>,
    podMeta?: Record<string, unknown>,
  ) => Record<string, unknown>;
}

const template = (spec: Record<string, unknown>, podMeta: Record<string, unknown> = META) => ({
  metadata: podMeta,
  spec,
});
const job = (spec: Record<string, unknown>, podMeta?: Record<string, unknown>) => ({
  backoffLimit: 0,
  activeDeadlineSeconds: 600,
  ttlSecondsAfterFinished: 300,
  template: template(spec, podMeta),
});

/** Every carrier, including old API versions and agent-sandbox kinds. */
export const CARRIERS: readonly Carrier[] = [
  {
    type: "kubernetes:core/v1:Pod",
    kind: "Pod",
    specPath: ["spec"],
    build: (spec, m = META) => ({ metadata: { name: "task", ...m }, spec }),
  },
  {
    type: "kubernetes:core/v1:PodTemplate",
    kind: "PodTemplate",
    specPath: ["template", "spec"],
    build: (spec, m) => ({ metadata: { name: "tpl" }, template: template(spec, m) }),
  },
  {
    type: "kubernetes:batch/v1:Job",
    kind: "Job",
    specPath: ["spec", "template", "spec"],
    build: (spec, m) => ({ metadata: META, spec: job(spec, m) }),
  },
  {
    type: "kubernetes:batch/v1:CronJob",
    kind: "CronJob",
    specPath: ["spec", "jobTemplate", "spec", "template", "spec"],
    build: (spec, m) => ({
      metadata: META,
      spec: { schedule: "*/5 * * * *", jobTemplate: { spec: job(spec, m) } },
    }),
  },
  {
    type: "kubernetes:batch/v1beta1:CronJob",
    kind: "CronJob",
    specPath: ["spec", "jobTemplate", "spec", "template", "spec"],
    build: (spec, m) => ({ spec: { schedule: "0 * * * *", jobTemplate: { spec: job(spec, m) } } }),
  },
  {
    type: "kubernetes:batch/v2alpha1:CronJob",
    kind: "CronJob",
    specPath: ["spec", "jobTemplate", "spec", "template", "spec"],
    build: (spec, m) => ({ spec: { schedule: "0 * * * *", jobTemplate: { spec: job(spec, m) } } }),
  },
  ...["apps/v1", "apps/v1beta1", "apps/v1beta2", "extensions/v1beta1"].map(
    (gv): Carrier => ({
      type: `kubernetes:${gv}:Deployment`,
      kind: "Deployment",
      specPath: ["spec", "template", "spec"],
      build: (spec, m) => ({
        metadata: META,
        spec: { replicas: 1, selector: { matchLabels: { app: "t" } }, template: template(spec, m) },
      }),
    }),
  ),
  ...["StatefulSet", "ReplicaSet"].map(
    (kind): Carrier => ({
      type: `kubernetes:apps/v1:${kind}`,
      kind,
      specPath: ["spec", "template", "spec"],
      build: (spec, m) => ({
        spec: { replicas: "1", selector: { matchLabels: { app: "t" } }, template: template(spec, m) },
      }),
    }),
  ),
  ...["apps/v1", "apps/v1beta2", "extensions/v1beta1"].map(
    (gv): Carrier => ({
      type: `kubernetes:${gv}:DaemonSet`,
      kind: "DaemonSet",
      specPath: ["spec", "template", "spec"],
      build: (spec, m) => ({
        spec: { selector: { matchLabels: { app: "t" } }, template: template(spec, m) },
      }),
    }),
  ),
  {
    type: "kubernetes:core/v1:ReplicationController",
    kind: "ReplicationController",
    specPath: ["spec", "template", "spec"],
    build: (spec, m) => ({ spec: { replicas: 1, template: template(spec, m) } }),
  },
  {
    type: "kubernetes:agents.x-k8s.io/v1beta1:Sandbox",
    kind: "Sandbox",
    specPath: ["spec", "podTemplate", "spec"],
    build: (spec, m) => ({ spec: { podTemplate: template(spec, m) } }),
  },
  {
    type: "kubernetes:extensions.agents.x-k8s.io/v1beta1:SandboxTemplate",
    kind: "SandboxTemplate",
    specPath: ["spec", "podTemplate", "spec"],
    build: (spec, m) => ({ spec: { podTemplate: template(spec, m) } }),
  },
];

/** The carrier for a Kind (first match). */
export function carrier(kind: string): Carrier {
  const c = CARRIERS.find((x) => x.kind === kind);
  if (c === undefined) throw new Error(`no fixture carrier ${kind}`);
  return c;
}

export const SERVICE = "kubernetes:core/v1:Service";

export function safeService(): Record<string, unknown> {
  return {
    metadata: { name: "internal" },
    spec: { type: "ClusterIP", selector: { app: "proxy" }, ports: [{ port: 3128, targetPort: 3128 }] },
  };
}

/** A deep copy, so a test can break one field. */
export function copy<T>(x: T): T {
  return structuredClone(x);
}

/** The first container of a pod spec (fixtures always have one). */
export function first(spec: Record<string, unknown>, list = "containers"): Record<string, unknown> {
  const l = spec[list] as Record<string, unknown>[] | undefined;
  const c = l?.[0];
  if (c === undefined) throw new Error(`fixture has no ${list}`);
  return c;
}

export function sc(c: Record<string, unknown>): Record<string, unknown> {
  return c.securityContext as Record<string, unknown>;
}
