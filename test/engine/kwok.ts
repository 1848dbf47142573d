// Simulated nodes for the scale benchmark and its test: kwok (sigs.k8s.io/kwok, built by `toolchain/setup.sh kwok`)
// keeps `nodes` Node objects ready and takes their pods through their life without a container: a pod bound to one
// is Running at once, a Job's pod Succeeded a moment later (each container terminated with exit 0, started when it
// became Running), a pod being deleted is gone at once. Its kubelet-like server (logs) listens on loopback only; every
// node's address is 127.0.0.1, so nothing the API server dials leaves the machine.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { KubeResponse } from "./cluster";
import { freePort, type Proc, startProcess } from "./processes";

export interface SimulatedNodesOptions {
  /** The kwok binary. */
  readonly kwok: string;
  /** The kube-scheduler binary (kwok binds nothing). */
  readonly scheduler: string;
  /** How many nodes. */
  readonly nodes: number;
  /** How long a Job's pod runs, in ms: at least `runMs`, up to `runMs + jitterMs`. */
  readonly runMs?: number;
  readonly jitterMs?: number;
}

export interface SimulatedNodes {
  /** The nodes' names. */
  readonly names: readonly string[];
  /** What every simulated container's log holds (CRI format), as the API server returns it. */
  readonly logText: string;
}

/** What startCluster hands the simulated nodes. */
export interface SimulatedContext {
  readonly dir: string;
  readonly procs: Proc[];
  readonly api: (method: string, path: string, body?: unknown) => Promise<KubeResponse>;
  readonly waitFor: (what: string, check: () => Promise<boolean>, timeoutMs?: number) => Promise<void>;
  readonly admin: string;
}

/** What each simulated node offers. */
const ROOM = { cpu: "32", memory: "256Gi", pods: "110", "ephemeral-storage": "1Ti" };

/** The annotation kwok manages nodes by. */
const MANAGED = "kwok.x-k8s.io/node";

/** kwok's stages: how a node becomes ready and a pod runs, succeeds (a Job's) and goes. */
function stages(runMs: number, jitterMs: number): string {
  const stage = (name: string, kind: string, selector: string, next: string, delay = "") =>
    `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: ${name}
spec:
  resourceRef:
    apiGroup: v1
    kind: ${kind}
  selector:
    matchExpressions:
${selector}${delay}
  next:
${next}`;
  return [
    stage(
      "node-ready",
      "Node",
      `    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: NotIn
      values: ["True"]`,
      `    statusTemplate: |
      {{ $now := Now }}
      conditions:
      {{ range NodeConditions }}
      - lastHeartbeatTime: {{ $now | Quote }}
        lastTransitionTime: {{ $now | Quote }}
        message: {{ .message | Quote }}
        reason: {{ .reason | Quote }}
        status: {{ .status | Quote }}
        type: {{ .type | Quote }}
      {{ end }}
      addresses:
      - address: {{ NodeIP | Quote }}
        type: InternalIP
      - address: {{ NodeName | Quote }}
        type: Hostname
      {{ with NodePort }}
      daemonEndpoints:
        kubeletEndpoint:
          Port: {{ . }}
      {{ end }}
      phase: Running`,
    ),
    stage(
      "pod-running",
      "Pod",
      `    - key: '.metadata.deletionTimestamp'
      operator: DoesNotExist
    - key: '.status.phase'
      operator: In
      values: ["Pending"]
    - key: '.spec.nodeName'
      operator: Exists`,
      `    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Ready
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: true
        restartCount: 0
        started: true
        state:
          running:
            startedAt: {{ $now | Quote }}
      {{ end }}
      hostIP: {{ NodeIPWith .spec.nodeName | Quote }}
      podIP: {{ PodIPWith .spec.nodeName false .metadata.uid .metadata.name .metadata.namespace | Quote }}
      phase: Running
      startTime: {{ $now | Quote }}`,
    ),
    stage(
      "job-pod-succeeded",
      "Pod",
      `    - key: '.metadata.deletionTimestamp'
      operator: DoesNotExist
    - key: '.status.phase'
      operator: In
      values: ["Running"]
    - key: '.metadata.ownerReferences.[].kind'
      operator: In
      values: ["Job"]`,
      `    statusTemplate: |
      {{ $now := Now }}
      {{ $root := . }}
      containerStatuses:
      {{ range $i, $c := .spec.containers }}
      {{ $was := index $root.status.containerStatuses $i }}
      - image: {{ $c.image | Quote }}
        name: {{ $c.name | Quote }}
        ready: false
        restartCount: 0
        started: false
        state:
          terminated:
            exitCode: 0
            reason: Completed
            startedAt: {{ or $was.state.running.startedAt $now | Quote }}
            finishedAt: {{ $now | Quote }}
      {{ end }}
      phase: Succeeded`,
      `
  delay:
    durationMilliseconds: ${runMs}
    jitterDurationMilliseconds: ${runMs + jitterMs}`,
    ),
    stage(
      "pod-gone",
      "Pod",
      `    - key: '.metadata.deletionTimestamp'
      operator: Exists`,
      "    delete: true",
    ),
  ].join("\n---\n");
}

/** Starts kwok with the stages above and creates the nodes; resolves once every node is ready. */
export async function startSimulatedNodes(
  ctx: SimulatedContext,
  options: SimulatedNodesOptions,
): Promise<SimulatedNodes> {
  const port = await freePort();
  const logText = "simulated\n";
  const logFile = join(ctx.dir, "kwok-container.log");
  // The CRI log format the kubelet keeps, which kwok serves for every container.
  writeFileSync(logFile, `2026-01-01T00:00:00Z stdout F ${logText}`);
  const config = join(ctx.dir, "kwok.yaml");
  writeFileSync(
    config,
    `${stages(options.runMs ?? 1000, options.jitterMs ?? 1000)}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata:
  name: every-container
spec:
  selector: {}
  logs:
  - containers: []
    logsFile: ${logFile}
`,
  );
  ctx.procs.push(
    startProcess(
      "kwok",
      options.kwok,
      [
        `--kubeconfig=${ctx.admin}`,
        `--config=${config}`,
        `--manage-nodes-with-annotation-selector=${MANAGED}=fake`,
        "--node-lease-duration-seconds=40",
        "--cidr=10.240.0.0/12",
        "--node-ip=127.0.0.1",
        `--node-port=${port}`,
        `--server-address=127.0.0.1:${port}`,
      ],
      ctx.dir,
    ),
  );
  const names = Array.from({ length: options.nodes }, (_, i) => `sim-${String(i).padStart(4, "0")}`);
  const node = (name: string) => ({
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name,
      annotations: { [MANAGED]: "fake", "node.alpha.kubernetes.io/ttl": "0" },
      labels: { "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64" },
    },
    // Room for what a task pod asks (its emptyDir volumes ask for ephemeral storage).
    status: { allocatable: ROOM, capacity: ROOM },
  });
  // Twenty at a time: the API server takes them quickly, and the test's process is not flooded.
  for (let i = 0; i < names.length; i += 20) {
    const made = await Promise.all(
      names.slice(i, i + 20).map((n) => ctx.api("POST", "/api/v1/nodes", node(n))),
    );
    const bad = made.find((r) => r.status !== 201);
    if (bad !== undefined)
      throw new Error(`a simulated node was refused: ${bad.status} ${bad.text.slice(0, 300)}`);
  }
  await ctx.waitFor(
    `${names.length} simulated nodes to be ready and untainted`,
    async () => {
      const list = await ctx.api("GET", "/api/v1/nodes");
      // biome-ignore lint/suspicious/noExplicitAny: Node objects read field by field
      const items: any[] = list.body?.items ?? [];
      const ready = items.filter(
        (n) =>
          (n.status?.conditions ?? []).some(
            (c: { type: string; status: string }) => c.type === "Ready" && c.status === "True",
          ) && (n.spec?.taints ?? []).length === 0,
      );
      return ready.length >= names.length;
    },
    180_000,
  );
  return { names, logText };
}
