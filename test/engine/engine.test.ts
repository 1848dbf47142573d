// The real Pulumi engine, through the Automation API, against a local Kubernetes API server: the policy pack fails a
// violating preview and names the rule, a compliant stack applies and then shows no changes, the API server's own
// walls (Pod Security Admission, the ResourceQuota) refuse what gets past Pulumi, and destroy leaves nothing.
// Needs the toolchain of `toolchain/setup.sh`; without it every test fails and says what is missing.
import { randomBytes } from "node:crypto";
import type { Stack } from "@pulumi/pulumi/automation";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Cluster, startCluster } from "./cluster";
import {
  BUDGET,
  hardenedPodSpec,
  operatorObjectsProgram,
  QUOTA_NAME,
  TASK_LIMITS,
  TASK_POD,
  taskStackProgram,
  unjudgedKindsProgram,
} from "./programs";
import { requireEngineToolchain } from "./toolchain";
import { type EngineWorkspace, engineWorkspace, POLICY_PACK } from "./workspace";

const ENGINE_TIMEOUT = 240_000;

let setup: { cluster: Cluster; ws: EngineWorkspace } | undefined;
let setupError: Error | undefined;

/** The cluster and workspace, or the reason they could not be had (a missing toolchain names the missing tools). */
function env(): { cluster: Cluster; ws: EngineWorkspace } {
  if (setup === undefined) throw setupError ?? new Error("the engine test set-up did not run");
  return setup;
}

beforeAll(async () => {
  try {
    const tools = requireEngineToolchain();
    const cluster = await startCluster(tools);
    try {
      setup = { cluster, ws: await engineWorkspace(tools) };
    } catch (e) {
      await cluster.stop();
      throw e;
    }
  } catch (e) {
    setupError = e as Error;
  }
}, ENGINE_TIMEOUT);

afterAll(async () => {
  if (setup === undefined) return;
  try {
    await setup.cluster.stop();
  } finally {
    setup.ws.cleanup();
  }
}, 60_000);

/** A preview with the pack that must fail naming `rule`; what the engine printed. */
async function refusedPreview(stack: Stack, rule: RegExp): Promise<string> {
  let output = "";
  const preview = stack.preview({
    policyPacks: [POLICY_PACK],
    onOutput: (s) => {
      output += s;
    },
  });
  await expect(preview).rejects.toThrow(rule);
  return output;
}

const uniqueNamespace = (prefix: string) => `${prefix}-${randomBytes(3).toString("hex")}`;

describe("a stack with a violation", () => {
  it(
    "fails preview with the policy pack, which names the rules",
    async () => {
      const { cluster, ws } = env();
      const namespace = uniqueNamespace("sandbox-bad");
      const stack = await ws.newStack(
        "violation",
        taskStackProgram({ kubeconfig: cluster.kubeconfig, namespace, violate: true }),
      );
      try {
        const output = await refusedPreview(stack, /sandbox-disallow-host-namespaces/);
        expect(output).toMatch(/❌ sandbox-projects@v[\d.]+ \(local: .*run-pack\)/);
        for (const rule of [
          "sandbox-disallow-host-namespaces",
          "sandbox-disallow-exposed-ports",
          "sandbox-require-drop-net-admin",
        ]) {
          expect(output).toMatch(
            new RegExp(`\\[mandatory\\].*${rule}\\s+\\(kubernetes:core/v1:Pod: task\\)`),
          );
        }
        // A preview creates nothing.
        expect((await cluster.api("GET", `/api/v1/namespaces/${namespace}`)).status).toBe(404);
      } finally {
        await ws.dispose(stack);
      }
    },
    ENGINE_TIMEOUT,
  );
});

describe("a stack with objects the pack cannot judge whole", () => {
  it(
    "fails preview on a mutating webhook and an all-powerful ClusterRole; the Namespace and the hardened Pod pass",
    async () => {
      const { cluster, ws } = env();
      const namespace = uniqueNamespace("sandbox-kinds");
      const stack = await ws.newStack(
        "unjudged-kinds",
        unjudgedKindsProgram({ kubeconfig: cluster.kubeconfig, namespace }),
      );
      try {
        const output = await refusedPreview(stack, /sandbox-disallow-unjudged-workloads/);
        expect(output).toMatch(
          /\[mandatory\].*sandbox-disallow-unjudged-workloads\s+\(kubernetes:admissionregistration\.k8s\.io\/v1:MutatingWebhookConfiguration: inject\)/,
        );
        expect(output).toMatch(
          /\[mandatory\].*sandbox-disallow-unjudged-workloads\s+\(kubernetes:rbac\.authorization\.k8s\.io\/v1:ClusterRole: everything\)/,
        );
        // The inert Namespace and the hardened Pod are not refused.
        expect(output).not.toMatch(/\(kubernetes:core\/v1:Namespace: sandbox\)/);
        expect(output).not.toMatch(/\(kubernetes:core\/v1:Pod: task\)/);
        expect((await cluster.api("GET", `/api/v1/namespaces/${namespace}`)).status).toBe(404);
      } finally {
        await ws.dispose(stack);
      }
    },
    ENGINE_TIMEOUT,
  );
});

describe("a stack of an operator's objects", () => {
  it(
    "fails preview on a RayCluster key of a newer KubeRay release than the pinned one; the hardened RayCluster passes",
    async () => {
      const { cluster, ws } = env();
      const namespace = uniqueNamespace("sandbox-ray");
      const stack = await ws.newStack(
        "operator-objects",
        operatorObjectsProgram({ kubeconfig: cluster.kubeconfig, namespace }),
      );
      try {
        const output = await refusedPreview(stack, /sandbox-disallow-unjudged-fields/);
        expect(output).toMatch(
          /\[mandatory\].*sandbox-disallow-unjudged-fields\s+\(kubernetes:ray\.io\/v1:RayCluster: ray-newer\)/,
        );
        expect(output).toMatch(/spec\.authOptions/);
        // The same rule, the same stack, without the newer key: the hardened RayCluster and the CRD are not refused.
        expect(output).not.toMatch(/\(kubernetes:ray\.io\/v1:RayCluster: ray-hardened\)/);
        expect(output).not.toMatch(/CustomResourceDefinition: rayclusters\)/);
        expect((await cluster.api("GET", `/api/v1/namespaces/${namespace}`)).status).toBe(404);
      } finally {
        await ws.dispose(stack);
      }
    },
    ENGINE_TIMEOUT,
  );
});

describe("a compliant stack", () => {
  let stack: Stack | undefined;
  let up = false;
  const namespace = uniqueNamespace("sandbox-task");

  function upStack(): { cluster: Cluster; stack: Stack } {
    const { cluster } = env();
    if (stack === undefined || !up)
      throw new Error("the compliant stack is not up (see the first test's failure)");
    return { cluster, stack };
  }

  afterAll(async () => {
    if (stack === undefined || setup === undefined) return;
    try {
      await setup.ws.dispose(stack);
    } finally {
      stack = undefined;
    }
  }, ENGINE_TIMEOUT);

  it(
    "passes preview with the policy pack, applies, and a second preview shows no changes",
    async () => {
      const { cluster, ws } = env();
      stack = await ws.newStack("compliant", taskStackProgram({ kubeconfig: cluster.kubeconfig, namespace }));
      let output = "";
      const onOutput = (s: string) => {
        output += s;
      };
      const first = await stack.preview({ policyPacks: [POLICY_PACK], onOutput });
      expect(first.changeSummary.create).toBe(5); // stack, provider, namespace, quota, pod
      // The pack ran and passed: the CLI lists it with a check mark, and no finding is mandatory.
      expect(output).toMatch(/✅ sandbox-projects@v[\d.]+ \(local: .*run-pack\)/);
      expect(output).not.toMatch(/\[mandatory\]/);

      const applied = await stack.up({ policyPacks: [POLICY_PACK], onOutput });
      up = true;
      expect(applied.summary.result).toBe("succeeded");
      expect(applied.outputs.namespace?.value).toBe(namespace);

      const ns = await cluster.api("GET", `/api/v1/namespaces/${namespace}`);
      expect(ns.status).toBe(200);
      expect(ns.body.metadata.labels["pod-security.kubernetes.io/enforce"]).toBe("restricted");
      const quota = await cluster.api("GET", `/api/v1/namespaces/${namespace}/resourcequotas/${QUOTA_NAME}`);
      expect(quota.body.status.hard).toMatchObject(BUDGET);
      const pod = await cluster.api("GET", `/api/v1/namespaces/${namespace}/pods/${TASK_POD}`);
      expect(pod.status).toBe(200);
      expect(pod.body.status.phase).toBe("Pending"); // no kubelet here

      const second = await stack.preview({ policyPacks: [POLICY_PACK], onOutput });
      const changes = Object.entries(second.changeSummary).filter(([op, n]) => op !== "same" && n > 0);
      expect(changes, output).toEqual([]);
    },
    ENGINE_TIMEOUT,
  );

  it("Pod Security Admission rejects a non-compliant pod created directly in the sandbox namespace", async () => {
    const { cluster } = upStack();
    const plain = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "plain" },
      spec: {
        restartPolicy: "Never",
        containers: [
          { name: "plain", image: "busybox:1.36", resources: { limits: { cpu: "100m", memory: "64Mi" } } },
        ],
      },
    };
    const r = await cluster.api("POST", `/api/v1/namespaces/${namespace}/pods`, plain);
    expect(r.status, r.text).toBe(403);
    expect(r.body.message).toMatch(/violates PodSecurity "restricted:latest"/);
    expect(r.body.message).toMatch(/allowPrivilegeEscalation != false/);
    expect(r.body.message).toMatch(/runAsNonRoot != true/);
    // The same pod, hardened, is admitted: the rejection is the restricted profile's, not a blanket refusal.
    const hardened = await cluster.api("POST", `/api/v1/namespaces/${namespace}/pods?dryRun=All`, {
      ...plain,
      spec: hardenedPodSpec({ cpu: "100m", memory: "64Mi" }),
    });
    expect(hardened.status, hardened.text).toBe(201);
  });

  it("the quota rejects a task beyond the budget", async () => {
    const { cluster } = upStack();
    // The running task holds TASK_LIMITS (500m); one more asking the whole CPU budget goes over it.
    const extra = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "task-2" },
      spec: hardenedPodSpec({ cpu: BUDGET["limits.cpu"], memory: TASK_LIMITS.memory }),
    };
    const r = await cluster.api("POST", `/api/v1/namespaces/${namespace}/pods`, extra);
    expect(r.status, r.text).toBe(403);
    expect(r.body.message).toMatch(new RegExp(`exceeded quota: ${QUOTA_NAME}`));
    expect(r.body.message).toMatch(/limits\.cpu/);
    // Within the budget, a second task fits (checked without creating it).
    const small = await cluster.api("POST", `/api/v1/namespaces/${namespace}/pods?dryRun=All`, {
      ...extra,
      spec: hardenedPodSpec({ cpu: "250m", memory: "128Mi" }),
    });
    expect(small.status, small.text).toBe(201);
  });

  it(
    "destroy leaves nothing in the API server",
    async () => {
      const { cluster, stack: s } = upStack();
      stack = undefined; // dispose removes the stack whatever happens: afterAll has nothing left to do
      up = false;
      await env().ws.dispose(s);
      expect((await cluster.api("GET", `/api/v1/namespaces/${namespace}`)).status).toBe(404);
      const pods = await cluster.api("GET", `/api/v1/pods?fieldSelector=metadata.namespace%3D${namespace}`);
      expect(pods.body.items).toEqual([]);
      const quotas = await cluster.api("GET", "/api/v1/resourcequotas");
      expect(
        quotas.body.items.filter(
          (q: { metadata: { namespace: string } }) => q.metadata.namespace === namespace,
        ),
      ).toEqual([]);
    },
    ENGINE_TIMEOUT,
  );
});
