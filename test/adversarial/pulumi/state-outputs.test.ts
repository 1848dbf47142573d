/**
 * A Pulumi stack export records each Kubernetes object twice: its `inputs` (what the program asked for) and its
 * `outputs` (what the API server returned: defaults and every admission-time mutation). Both are judged; a finding
 * its inputs already got is not repeated for its outputs.
 */
import { describe, expect, it } from "vitest";
import { copy, safePodSpec } from "../../policy/fixtures";
import { blocking, scanFiles } from "../harness";

const URN = "urn:pulumi:dev::app::kubernetes:core/v1:Pod::task";
const TYPE = "kubernetes:core/v1:Pod";

function pod(container: Record<string, unknown> = {}): Record<string, unknown> {
  const spec = copy(safePodSpec());
  const [first] = spec.containers as Record<string, unknown>[];
  if (first !== undefined) first.securityContext = { ...(first.securityContext as object), ...container };
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "task", labels: { "sandbox.project": "demo", "sandbox.role": "task" } },
    spec,
  };
}

function state(inputs: unknown, outputs: unknown, more: Record<string, unknown> = {}) {
  const resources = [
    { urn: "urn:pulumi:dev::app::pulumi:pulumi:Stack::app-dev", custom: false, type: "pulumi:pulumi:Stack" },
    { urn: URN, custom: true, id: "default/task", type: TYPE, inputs, outputs, ...more },
  ];
  const deployment = {
    manifest: { time: "2025-01-01T00:00:00Z", magic: "0".repeat(64), version: "v3.200.0" },
    resources,
  };
  return { "stack.json": `${JSON.stringify({ version: 3, deployment }, null, 2)}\n` };
}

const hits = (r: Awaited<ReturnType<typeof scanFiles>>) =>
  r.report.findings.filter(blocking).map((f) => `${f.ruleId}@${f.path ?? ""}`);

describe("a stack export's Kubernetes outputs", () => {
  it("hardened inputs and outputs pass", async () => {
    const r = await scanFiles(state(pod(), pod()));
    expect(hits(r)).toEqual([]);
    expect(r.code).toBe(0);
  });

  it("outputs a mutating webhook made privileged are refused, though the inputs were hardened", async () => {
    const r = await scanFiles(state(pod(), pod({ privileged: true })));
    expect(r.code).toBe(1);
    expect(hits(r)).toContain("sandbox-disallow-privileged@spec.containers[0]");
    expect(
      r.report.findings.filter((f) => f.ruleId === "sandbox-disallow-privileged").map((f) => f.live),
    ).toEqual([true]);
  });

  it("a container an injector added to the live pod is judged", async () => {
    const live = pod();
    const spec = live.spec as { containers: Record<string, unknown>[] };
    spec.containers.push({
      name: "injected",
      image: "agent:1",
      securityContext: { capabilities: { add: ["NET_ADMIN"] } },
    });
    const r = await scanFiles(state(pod(), live));
    expect(r.code).toBe(1);
    expect(hits(r)).toContain("sandbox-require-drop-net-admin@spec.containers[1]");
  });

  it("a resource pending deletion after a replacement still runs: it is judged", async () => {
    const r = await scanFiles(state(pod({ privileged: true }), pod({ privileged: true }), { delete: true }));
    expect(r.code).toBe(1);
    expect(hits(r)).toContain("sandbox-disallow-privileged@spec.containers[0]");
  });

  it("a finding of the inputs is reported once, not again for the outputs", async () => {
    const r = await scanFiles(state(pod({ privileged: true }), pod({ privileged: true })));
    expect(hits(r).filter((h) => h.startsWith("sandbox-disallow-privileged@"))).toHaveLength(1);
  });
});
