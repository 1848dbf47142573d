/**
 * Generated Kubernetes workloads for the benchmarks: deterministic (a seeded generator), a mix of pod carriers
 * (Pod, Deployment, StatefulSet, Job, CronJob) with one to three containers, each starting from a hardened task and
 * breaking some walls at random, so that every rule has both passing and failing input.
 */

/** A small deterministic generator (mulberry32). */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const KINDS = ["Pod", "Deployment", "StatefulSet", "Job", "CronJob"] as const;
const API: Record<(typeof KINDS)[number], string> = {
  Pod: "v1",
  Deployment: "apps/v1",
  StatefulSet: "apps/v1",
  Job: "batch/v1",
  CronJob: "batch/v1",
};

function container(name: string, r: () => number, p: number): Record<string, unknown> {
  const sc: Record<string, unknown> = {
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    runAsNonRoot: true,
    runAsUser: 1000,
    capabilities: { drop: ["ALL"] },
    seccompProfile: { type: "RuntimeDefault" },
  };
  const c: Record<string, unknown> = {
    name,
    image: `registry.example/task-${Math.floor(r() * 50)}:1`,
    command: ["sh", "/job/run.sh"],
    env: [{ name: "LANG", value: "C.UTF-8" }],
    resources: { limits: { cpu: "500m", memory: "512Mi" } },
    securityContext: sc,
    volumeMounts: [{ name: "job", mountPath: "/job" }],
  };
  const hit = () => r() < p;
  if (hit()) sc.privileged = true;
  if (hit()) sc.allowPrivilegeEscalation = true;
  if (hit()) sc.capabilities = { drop: ["NET_RAW"] };
  if (hit()) sc.capabilities = { drop: ["ALL"], add: ["NET_ADMIN"] };
  if (hit()) sc.runAsUser = 0;
  if (hit()) sc.readOnlyRootFilesystem = false;
  if (hit()) sc.seccompProfile = { type: "Unconfined" };
  if (hit()) sc.procMount = "Unmasked";
  if (hit()) c.resources = {};
  if (hit()) c.ports = [{ containerPort: 8080, hostPort: 8080 }];
  if (hit())
    (c.env as unknown[]).push({ name: "API_TOKEN", valueFrom: { secretKeyRef: { name: "t", key: "k" } } });
  if (hit()) (c.env as unknown[]).push({ name: "DB_PASSWORD", value: "hunter2" });
  if (hit()) (c.volumeMounts as unknown[]).push({ name: "sock", mountPath: "/var/run/docker.sock" });
  if (hit()) (c.volumeMounts as unknown[]).push({ name: "etc", mountPath: "/host-etc", readOnly: true });
  return c;
}

/** One workload; `p` is the chance of each single violation. */
export function workload(i: number, r: () => number, p = 0.04): Record<string, unknown> {
  const kind = KINDS[Math.floor(r() * KINDS.length)] ?? "Pod";
  const n = 1 + Math.floor(r() * 3);
  const spec: Record<string, unknown> = {
    restartPolicy: kind === "Deployment" || kind === "StatefulSet" ? "Always" : "Never",
    automountServiceAccountToken: false,
    securityContext: {
      runAsNonRoot: true,
      runAsUser: 1000,
      fsGroup: 1000,
      seccompProfile: { type: "RuntimeDefault" },
    },
    containers: Array.from({ length: n }, (_, k) => container(`c${k}`, r, p)),
    volumes: [
      { name: "job", emptyDir: { sizeLimit: "1Gi" } },
      { name: "sock", hostPath: { path: "/var/run/docker.sock", type: "Socket" } },
      { name: "etc", hostPath: { path: "/etc" } },
    ],
  };
  const hit = () => r() < p;
  if (hit()) spec.hostNetwork = true;
  if (hit()) spec.hostPID = true;
  if (hit()) spec.hostIPC = true;
  if (hit()) spec.automountServiceAccountToken = true;
  if (hit())
    (spec.securityContext as Record<string, unknown>).sysctls = [{ name: "net.ipv4.ip_forward", value: "1" }];
  if (hit() && kind !== "Deployment" && kind !== "StatefulSet") spec.restartPolicy = "OnFailure";
  // Volumes nobody mounts would be judged too (they are set up on the node); keep only the used ones.
  const used = new Set(
    (spec.containers as { volumeMounts: { name: string }[] }[]).flatMap((c) =>
      c.volumeMounts.map((m) => m.name),
    ),
  );
  spec.volumes = (spec.volumes as { name: string }[]).filter((v) => used.has(v.name));
  const name = `w${String(i).padStart(5, "0")}`;
  const metadata = { name, labels: { "sandbox.project": "bench", "sandbox.role": "task" } };
  const template = { metadata: { labels: metadata.labels }, spec };
  const job = { backoffLimit: 0, activeDeadlineSeconds: 600, ttlSecondsAfterFinished: 300, template };
  const body =
    kind === "Pod"
      ? { spec }
      : kind === "Job"
        ? { spec: job }
        : kind === "CronJob"
          ? { spec: { schedule: "*/5 * * * *", jobTemplate: { spec: job } } }
          : { spec: { replicas: 1, selector: { matchLabels: { app: name } }, template } };
  return { apiVersion: API[kind], kind, metadata, ...body };
}

export function workloads(n: number, seed = 9): Record<string, unknown>[] {
  const r = random(seed);
  return Array.from({ length: n }, (_, i) => workload(i, r));
}

/** `kubernetes:<group>/<version>:<Kind>` for a manifest. */
export function typeOf(m: Record<string, unknown>): string {
  const api = String(m.apiVersion);
  return api.includes("/") ? `kubernetes:${api}:${m.kind}` : `kubernetes:core/${api}:${m.kind}`;
}
