/**
 * Benchmark: launch to exit of a trivial task (`true`) on the project's own Kubernetes node, through the launcher
 * (`KubeLauncher.run`: the PodTemplate's hash checked, the Job created, its pod followed by the shared watch, its
 * stderr read out of the pod, its log read, the Job deleted and its pod waited out), against the bare client doing
 * the least a user would for the same task: the same hardened Job created (without the holder, which only the
 * launcher reads), its pods listed and then watched from the list's version until it ends, its log read, the Job
 * deleted in the foreground and its pod waited out. Interleaved, `runs` rounds after one warm-up round; median of each, the ratio, and the API requests per task
 * the launcher's clients counted. Not a test: it prints and writes JSON, and asserts nothing.
 *   node --import tsx bench/kube-launch.ts [runs=9] [--out bench/results/kube-launch.json]
 * Builds and starts the test node as the node tests do (toolchain/node.sh; minutes the first time).
 */
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type * as K8s from "@kubernetes/client-node";
import { taskJob } from "../components/kubernetes/pod";
import { launchSpec, taskServiceAccountName } from "../components/model";
import { type KubeApis, kubeApis } from "../runtime/kubernetes/api";
import { KubeLauncher } from "../runtime/kubernetes/launcher";
import { projectFromConfig } from "../stacks/config";
import { sandboxProgram } from "../stacks/program";
import { startCluster } from "../test/engine/cluster";
import { requireEngineToolchain, requireNodeToolchain } from "../test/engine/toolchain";
import { engineWorkspace, sandboxConfigMap, setSandboxConfig } from "../test/engine/workspace";
import { fmt, median, ROOT, runBenchmark, writeResult } from "./common";

const args = process.argv.slice(2);
const outAt = args.indexOf("--out");
const out = outAt >= 0 ? args[outAt + 1] : join(ROOT, "bench", "results", "kube-launch.json");
const runs = Number(args.find((a, i) => /^\d+$/.test(a) && args[i - 1] !== "--out") ?? 9);
const project = `kb-${randomBytes(3).toString("hex")}`;

// biome-ignore lint/suspicious/noExplicitAny: pod objects as the client returns them
type Obj = any;

/** Times the bare client's watch missed its pod's end and the list found it. */
let missed = 0;

/** The bare client: create, watch until the pod ends, read its log, delete in the foreground, watch it go. */
async function bare(k8s: typeof K8s, apis: KubeApis, job: Obj): Promise<string> {
  const name = job.metadata.name as string;
  const watch = new k8s.Watch(apis.config);
  let ended: () => void = () => undefined;
  let gone: () => void = () => undefined;
  const end = new Promise<void>((r) => {
    ended = r;
  });
  const removed = new Promise<void>((r) => {
    gone = r;
  });
  let podName = "";
  // List, then watch from the list's version (a watch from no version asks the server for the newest one, which its
  // watch cache may not have yet: "Too large resource version", and the watch ends at once).
  const selector = `batch.kubernetes.io/job-name=${name}`;
  const listed = await apis.core.listNamespacedPod({ namespace: project, labelSelector: selector });
  const req = await watch.watch(
    `/api/v1/namespaces/${project}/pods`,
    { labelSelector: selector, resourceVersion: listed.metadata?.resourceVersion },
    (type, pod: Obj) => {
      podName = pod.metadata?.name ?? podName;
      if (type === "DELETED") gone();
      else if (pod.status?.phase === "Succeeded" || pod.status?.phase === "Failed") ended();
    },
    (err) => {
      if (err) console.error(`the bare client's watch ended: ${String(err)}`);
    },
  );
  await apis.batch.createNamespacedJob({ namespace: project, body: job });
  // Its pod's end on the watch, or (a watch that missed it) read from the pod list.
  let settled = false;
  const listedEnd = async () => {
    while (!settled) {
      await new Promise((r) => setTimeout(r, 250));
      const pods = await apis.core.listNamespacedPod({
        namespace: project,
        labelSelector: `batch.kubernetes.io/job-name=${name}`,
      });
      const pod = pods.items[0];
      if (pod?.status?.phase === "Succeeded" || pod?.status?.phase === "Failed") {
        podName = pod.metadata?.name ?? podName;
        missed++;
        return;
      }
    }
  };
  await Promise.race([end, listedEnd()]);
  settled = true;
  const log = String(await apis.core.readNamespacedPodLog({ name: podName, namespace: project }));
  await apis.batch.deleteNamespacedJob({ name, namespace: project, propagationPolicy: "Foreground" });
  // The pod's DELETED on the watch, or (a watch that missed it) a list that no longer has it.
  const listedGone = async () => {
    for (;;) {
      const pods = await apis.core.listNamespacedPod({
        namespace: project,
        labelSelector: `batch.kubernetes.io/job-name=${name}`,
      });
      if (pods.items.length === 0) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  await Promise.race([removed, listedGone()]);
  req.abort();
  return log;
}

async function main(): Promise<void> {
  const tools = requireEngineToolchain();
  const cluster = await startCluster(tools, {
    node: { tools: requireNodeToolchain(), podPidsLimit: 64, images: ["sandbox-busybox:1"] },
  });
  const ws = await engineWorkspace(tools);
  const kubeconfig = join(cluster.dir, "kubeconfig.json");
  writeFileSync(kubeconfig, cluster.kubeconfig);
  const config = {
    name: project,
    backend: "kubernetes",
    kubernetes: { kubeconfig },
    budget: { monthlyCapUsd: 10, maxConcurrentTasks: 1 },
    probe: false,
    templates: { default: { image: "sandbox-busybox:1", timeoutSeconds: 30, resources: { vcpu: 0.5 } } },
  };
  const stack = await ws.newStack("bench", sandboxProgram);
  try {
    await setSandboxConfig(stack, config);
    const up = await stack.up();
    if (up.summary.result !== "succeeded") throw new Error(`up: ${up.summary.result}`);
    const p = projectFromConfig(sandboxConfigMap(config), "bench");
    const spec = launchSpec(p, "default", "none");
    const apis = await kubeApis({ kubeconfig });
    const k8s = await import("@kubernetes/client-node");
    const launcher = new KubeLauncher(apis, project);
    const times: Record<"launcher" | "bare client", number[]> = { launcher: [], "bare client": [] };
    const requests: number[] = [];
    for (let round = 0; round <= runs; round++) {
      const id = `b${round}-${randomBytes(2).toString("hex")}`;
      let t = performance.now();
      const before = apis.requests();
      const result = await launcher.run(spec, { id, command: ["true"] });
      const launched = (performance.now() - t) / 1000;
      if (result.exitCode !== 0) throw new Error(`the launcher's task exited ${result.exitCode}`);
      const used = apis.requests() - before;
      const job = taskJob(spec, project, `r${id}`, taskServiceAccountName(spec.project), ["true"], false);
      t = performance.now();
      await bare(k8s, apis, job);
      const raw = (performance.now() - t) / 1000;
      if (round === 0) continue;
      times.launcher.push(launched);
      times["bare client"].push(raw);
      requests.push(used);
      console.log(`round ${round}: launcher ${fmt(launched, 3)} s (${used} requests), bare ${fmt(raw, 3)} s`);
    }
    const l = median(times.launcher);
    const b = median(times["bare client"]);
    console.log(`\nlaunch to exit of \`true\` on the node, median of ${runs}:`);
    console.log(
      `  launcher     ${fmt(l, 3)} s  (${fmt(l / b, 2)} ×)   API requests per task: ${median(requests)}`,
    );
    console.log(
      `  bare client  ${fmt(b, 3)} s  (1.00 ×)${missed > 0 ? `; its watch missed ${missed} ends` : ""}`,
    );
    writeResult(out, {
      benchmark: "kube-launch",
      runs,
      medianSeconds: { launcher: l, bareClient: b },
      ratio: l / b,
      requestsPerTask: median(requests),
      samples: times,
    });
  } finally {
    await ws.dispose(stack).catch(() => undefined);
    ws.cleanup();
    await cluster.stop();
  }
}

runBenchmark(main);
