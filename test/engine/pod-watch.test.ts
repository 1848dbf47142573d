// The namespace's pod watch (runtime/kubernetes/pod-watch.ts) against a real API server: a list, then a watch from
// its version; a task's waiter wakes at its pod's change, not on a timer; a dropped watch resumes; a deleted pod
// leaves the cache; the requests stay a small constant whatever the number of changes. No node: pods stay Pending,
// and their changes are made through the API (labels), which is all the watch sees anyway.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type KubeApis, kubeApis } from "../../runtime/kubernetes/api";
import { PodWatch } from "../../runtime/kubernetes/pod-watch";
import { type Cluster, startCluster } from "./cluster";
import { requireEngineToolchain } from "./toolchain";

const TIMEOUT = 240_000;
const namespace = `watch-${Math.random().toString(36).slice(2, 7)}`;
let cluster: Cluster | undefined;
let apis: KubeApis;

const taskPod = (job: string) => ({
  metadata: {
    name: `${job}-pod`,
    labels: { "sandbox.role": "task", "batch.kubernetes.io/job-name": job },
  },
  spec: { containers: [{ name: "task", image: "sandbox-busybox:1" }] },
});

beforeAll(async () => {
  cluster = await startCluster(requireEngineToolchain());
  const kubeconfig = join(cluster.dir, "kubeconfig.json");
  writeFileSync(kubeconfig, cluster.kubeconfig);
  apis = await kubeApis({ kubeconfig });
  await apis.core.createNamespace({ body: { metadata: { name: namespace } } });
  // Pods need the namespace's default service account, which the controller manager makes.
  await waitForAsync(() =>
    apis.core.readNamespacedServiceAccount({ name: "default", namespace }).then(
      () => true,
      () => false,
    ),
  );
}, TIMEOUT);

afterAll(async () => {
  await cluster?.stop();
}, TIMEOUT);

describe("the namespace's pod watch", () => {
  it(
    "lists, then follows each task pod's changes; a waiter wakes at its pod's change and a deleted pod leaves",
    async () => {
      // A pod made before the watch: the list brings it.
      await apis.core.createNamespacedPod({ namespace, body: taskPod("before") });
      const watch = new PodWatch(apis.config, apis.core, namespace);
      await watch.use();
      try {
        expect(watch.pod("before")?.metadata?.name).toBe("before-pod");
        expect(watch.pod("later")).toBeUndefined();

        // A pod made after: the watch brings it, and its waiter wakes long before its timer.
        const woken = watch.next("later", 60_000).then(() => Date.now());
        const made = Date.now();
        await apis.core.createNamespacedPod({ namespace, body: taskPod("later") });
        expect((await woken) - made).toBeLessThan(30_000);
        expect(watch.pod("later")?.metadata?.name).toBe("later-pod");

        // Twenty changes of one pod: each reaches the cache, and the watch made no request for them.
        const before = watch.requests;
        for (let i = 0; i < 20; i++) {
          const changed = watch.next("later", 60_000);
          await apis.core.patchNamespacedPod({
            name: "later-pod",
            namespace,
            body: [{ op: "add", path: "/metadata/annotations", value: { n: String(i) } }],
          });
          await changed;
        }
        await waitFor(() => watch.pod("later")?.metadata?.annotations?.n === "19");
        expect(watch.requests).toBe(before);

        // Deleted: gone from the cache, and its waiter wakes.
        const gone = watch.next("before", 60_000);
        await apis.core.deleteNamespacedPod({ name: "before-pod", namespace, gracePeriodSeconds: 0 });
        await gone;
        await waitFor(() => watch.pod("before") === undefined);
        // A pod that is not a task's is not followed.
        await apis.core.createNamespacedPod({
          namespace,
          body: { ...taskPod("other"), metadata: { name: "other-pod", labels: { "sandbox.role": "proxy" } } },
        });
        await new Promise((r) => setTimeout(r, 1000));
        expect(watch.pod("other")).toBeUndefined();
      } finally {
        watch.release();
      }
    },
    TIMEOUT,
  );

  it(
    "resumes after the API server drops the watch, and sees what changed meanwhile",
    async () => {
      const watch = new PodWatch(apis.config, apis.core, namespace);
      await watch.use();
      try {
        // The server ends watches at its own timeout; here the connection is cut by restarting nothing but the
        // watch's request: abort it as a dropped connection would end it.
        (watch as unknown as { abort?: AbortController }).abort?.abort();
        await apis.core.createNamespacedPod({ namespace, body: taskPod("after-drop") });
        await waitFor(() => watch.pod("after-drop") !== undefined);
        expect(watch.requests).toBeGreaterThanOrEqual(3);
        expect(watch.requests).toBeLessThanOrEqual(6);
      } finally {
        watch.release();
      }
    },
    TIMEOUT,
  );
});

async function waitFor(ok: () => boolean): Promise<void> {
  const until = Date.now() + 60_000;
  while (!ok()) {
    if (Date.now() > until) throw new Error("not seen within 60 s");
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function waitForAsync(ok: () => Promise<boolean>): Promise<void> {
  const until = Date.now() + 60_000;
  while (!(await ok())) {
    if (Date.now() > until) throw new Error("not seen within 60 s");
    await new Promise((r) => setTimeout(r, 200));
  }
}
