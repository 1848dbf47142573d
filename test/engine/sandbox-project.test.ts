// The toolkit's own Kubernetes SandboxProject, from stack config, through the real engine against the local API
// server: the namespace enforces Pod Security `restricted`, the PodTemplate's pod is admitted, the budget-derived
// quota admits exactly the budget's tasks and refuses the next, the LimitRange fills in and caps limits, a second
// preview shows no changes, and destroy leaves nothing.
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Stack } from "@pulumi/pulumi/automation";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sandboxProgram } from "../../stacks/program";
import { type Cluster, startCluster } from "./cluster";
import { requireEngineToolchain } from "./toolchain";
import { type EngineWorkspace, engineWorkspace, POLICY_PACK, setSandboxConfig } from "./workspace";

const TIMEOUT = 240_000;
const project = `sbx-${randomBytes(3).toString("hex")}`;

let cluster: Cluster | undefined;
let ws: EngineWorkspace | undefined;
let stack: Stack | undefined;
let setupError: Error | undefined;

beforeAll(async () => {
  try {
    const tools = requireEngineToolchain();
    cluster = await startCluster(tools);
    ws = await engineWorkspace(tools);
    const kubeconfig = join(cluster.dir, "kubeconfig.json");
    writeFileSync(kubeconfig, cluster.kubeconfig);
    stack = await ws.newStack("project", sandboxProgram);
    const config = {
      name: project,
      backend: "kubernetes",
      kubernetes: { kubeconfig },
      probe: false,
      budget: { monthlyCapUsd: 10, maxConcurrentTasks: 2 },
      templates: { default: { image: "sandbox-busybox:1", resources: { vcpu: 1, memoryMb: 512 } } },
    };
    await setSandboxConfig(stack, config);
  } catch (e) {
    setupError = e as Error;
  }
}, TIMEOUT);

afterAll(async () => {
  try {
    if (stack !== undefined && ws !== undefined) await ws.dispose(stack).catch(() => undefined);
  } finally {
    await cluster?.stop();
    ws?.cleanup();
  }
}, TIMEOUT);

function ready(): { cluster: Cluster; stack: Stack } {
  if (cluster === undefined || stack === undefined) throw setupError ?? new Error("set-up did not run");
  return { cluster, stack };
}

/** A pod built from the project's PodTemplate, as an orchestrator would create it. */
async function podFromTemplate(
  c: Cluster,
  name: string,
  patch: (spec: Record<string, unknown>) => void = () => undefined,
) {
  const tpl = await c.api("GET", `/api/v1/namespaces/${project}/podtemplates/${project}-default`);
  expect(tpl.status, tpl.text).toBe(200);
  const spec = structuredClone(tpl.body.template.spec) as Record<string, unknown>;
  patch(spec);
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, labels: tpl.body.template.metadata.labels },
    spec,
  };
}

describe("a Kubernetes sandbox project through the real engine", () => {
  it(
    "goes up with the policy pack, and the namespace enforces Pod Security restricted",
    async () => {
      const { cluster: c, stack: s } = ready();
      const up = await s.up({ policyPacks: [POLICY_PACK] });
      expect(up.summary.result).toBe("succeeded");
      const ns = await c.api("GET", `/api/v1/namespaces/${project}`);
      expect(ns.body.metadata.labels).toMatchObject({
        "pod-security.kubernetes.io/enforce": "restricted",
        "sandbox.project": project,
      });
      const plain = {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "plain" },
        spec: { containers: [{ name: "a", image: "x" }] },
      };
      const refused = await c.api("POST", `/api/v1/namespaces/${project}/pods?dryRun=All`, plain);
      expect(refused.status, refused.text).toBe(403);
      expect(refused.body.message).toMatch(/violates PodSecurity "restricted/);
    },
    TIMEOUT,
  );

  it("admits the budget's tasks from the PodTemplate and refuses the next one with the quota", async () => {
    const { cluster: c } = ready();
    for (const name of ["task-1", "task-2"]) {
      const r = await c.api("POST", `/api/v1/namespaces/${project}/pods`, await podFromTemplate(c, name));
      expect(r.status, r.text).toBe(201);
    }
    const third = await c.api(
      "POST",
      `/api/v1/namespaces/${project}/pods`,
      await podFromTemplate(c, "task-3"),
    );
    expect(third.status, third.text).toBe(403);
    expect(third.body.message).toMatch(new RegExp(`exceeded quota: ${project}-budget`));
    for (const name of ["task-1", "task-2"])
      await c.api("DELETE", `/api/v1/namespaces/${project}/pods/${name}`);
    // The quota controller frees their count a moment after they are gone: the next test needs the slots.
    await c.waitFor(
      "the budget quota to count no pod",
      async () => {
        const q = await c.api("GET", `/api/v1/namespaces/${project}/resourcequotas/${project}-budget`);
        return q.body?.status?.used?.["count/pods"] === "0";
      },
      60_000,
    );
  });

  it("gives a container without limits the defaults and refuses one above the largest template", async () => {
    const { cluster: c } = ready();
    // The task container (its pod's holder keeps its own small limits: components/kubernetes/pod.ts).
    const bare = await podFromTemplate(c, "bare", (spec) => {
      for (const ctr of spec.containers as { name: string; resources?: unknown }[])
        if (ctr.name === "task") delete ctr.resources;
    });
    const admitted = await c.api("POST", `/api/v1/namespaces/${project}/pods?dryRun=All`, bare);
    expect(admitted.status, admitted.text).toBe(201);
    const task = (admitted.body.spec.containers as { name: string; resources: { limits: unknown } }[]).find(
      (x) => x.name === "task",
    );
    expect(task?.resources.limits).toMatchObject({ cpu: "1", memory: "512Mi" });
    const big = await podFromTemplate(c, "big", (spec) => {
      const ctr = (
        spec.containers as {
          name: string;
          resources: { limits: Record<string, string>; requests: Record<string, string> };
        }[]
      ).find((x) => x.name === "task");
      if (ctr)
        ctr.resources = {
          limits: { ...ctr.resources.limits, cpu: "2" },
          requests: { ...ctr.resources.requests, cpu: "2" },
        };
    });
    const refused = await c.api("POST", `/api/v1/namespaces/${project}/pods?dryRun=All`, big);
    expect(refused.status, refused.text).toBe(403);
    expect(refused.body.message).toMatch(/maximum cpu usage per Container is 1/);
  });

  it(
    "previews no changes a second time, and destroy leaves nothing",
    async () => {
      const { cluster: c, stack: s } = ready();
      const preview = await s.preview({ policyPacks: [POLICY_PACK] });
      expect(Object.keys(preview.changeSummary)).toEqual(["same"]);
      await s.destroy();
      await c.waitFor(
        `namespace ${project} to be gone`,
        async () => (await c.api("GET", `/api/v1/namespaces/${project}`)).status === 404,
        120_000,
      );
    },
    TIMEOUT,
  );
});
