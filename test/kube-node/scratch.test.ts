import { afterAll, expect, it } from "vitest";
import { type Cluster, startCluster } from "../engine/cluster";
import { requireEngineToolchain, requireNodeToolchain } from "../engine/toolchain";

let cluster: Cluster | undefined;
afterAll(async () => {
  await cluster?.stop();
}, 120_000);

it("runs a pod", async () => {
  cluster = await startCluster(requireEngineToolchain(), {
    node: { tools: requireNodeToolchain(), podPidsLimit: 64, images: ["sandbox-busybox:1"] },
  });
  const c = cluster;
  await c.api("POST", "/api/v1/namespaces", {
    metadata: { name: "t1", labels: { "pod-security.kubernetes.io/enforce": "restricted" } },
  });
  await c.waitFor(
    "sa",
    async () => (await c.api("GET", "/api/v1/namespaces/t1/serviceaccounts/default")).status === 200,
  );
  const r = await c.api("POST", "/api/v1/namespaces/t1/pods", {
    metadata: { name: "p1" },
    spec: {
      restartPolicy: "Never",
      automountServiceAccountToken: false,
      securityContext: {
        runAsNonRoot: true,
        runAsUser: 1000,
        runAsGroup: 1000,
        seccompProfile: { type: "RuntimeDefault" },
      },
      containers: [
        {
          name: "c",
          image: "sandbox-busybox:1",
          command: ["sh", "-c", "grep -E 'CapEff|NoNewPrivs|Seccomp:' /proc/self/status"],
          securityContext: {
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ["ALL"] },
            seccompProfile: { type: "RuntimeDefault" },
          },
        },
      ],
    },
  });
  expect(r.status).toBe(201);
  await c.waitFor(
    "pod done",
    async () => (await c.api("GET", "/api/v1/namespaces/t1/pods/p1")).body?.status?.phase === "Succeeded",
    60_000,
  );
  const log = await c.api("GET", "/api/v1/namespaces/t1/pods/p1/log");
  console.log(log.status, log.text);
  expect(log.text).toContain("Seccomp:\t2");
}, 300_000);
