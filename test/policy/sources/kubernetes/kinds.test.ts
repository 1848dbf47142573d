/**
 * Every kind has a verdict: each built-in kind of the claimed Kubernetes version (generated from k8s.io/api) has
 * exactly one, the stack rules a verdict names exist, and an object of a kind no verdict names fails closed in the
 * views the rules judge.
 */
import { describe, expect, it } from "vitest";
import { judge } from "../../../../policy/rules/registry";
import { synthesizedSites } from "../../../../policy/sources/kubernetes/crd-pods";
import { kindVerdict, REBUILT } from "../../../../policy/sources/kubernetes/kinds";
import { BUILTIN_KIND_VERDICTS } from "../../../../policy/sources/kubernetes/kinds-builtin";
import { OPERATOR_KINDS } from "../../../../policy/sources/kubernetes/kinds-operators";
import { BUILTIN_KINDS, KUBERNETES_API } from "../../../../policy/sources/kubernetes/schema.generated";
import { adaptResources } from "../../../../policy/sources/subject";
import { ALL_STACK_RULES } from "../../../../policy/stack/registry";
import { TOOLCHAIN } from "../../../../toolchain/manifest";

const pairs = (t: Readonly<Record<string, Readonly<Record<string, unknown>>>>): string[] =>
  Object.entries(t).flatMap(([g, kinds]) => Object.keys(kinds).map((k) => `${g}/${k}`));

const UNJUDGED = "sandbox-disallow-unjudged-workloads";

function blocking(type: string, props: unknown): string[] {
  return adaptResources(type, props, "r").flatMap((s) =>
    judge(s).flatMap(({ rule, findings }) => (findings.some((f) => !f.unchecked) ? [rule.id] : [])),
  );
}

describe("kind verdicts", () => {
  it("the generated kinds are the toolchain manifest's Kubernetes API", () => {
    expect(KUBERNETES_API.version).toBe(TOOLCHAIN.KUBE_API_VERSION);
    expect(`v${KUBERNETES_API.kubernetes}`).toBe(`v${TOOLCHAIN.KUBE_VERSION}`);
  });

  it("every built-in kind has exactly one verdict, and every verdict names a built-in kind", () => {
    expect(pairs(BUILTIN_KIND_VERDICTS).sort()).toEqual(pairs(BUILTIN_KINDS).sort());
  });

  it("every stack verdict names stack rules that exist", () => {
    const ids = new Set(ALL_STACK_RULES.map((r) => r.id));
    for (const [g, kinds] of Object.entries(BUILTIN_KIND_VERDICTS))
      for (const [k, v] of Object.entries(kinds))
        if (v.v === "stack") for (const r of v.rules) expect(ids.has(r), `${g}/${k}: ${r}`).toBe(true);
  });

  it("no operator verdict shadows a built-in kind", () => {
    for (const p of pairs(OPERATOR_KINDS)) expect(pairs(BUILTIN_KINDS)).not.toContain(p);
  });

  it("an inert or through kind passes alone; an unjudged one fails closed, naming why", () => {
    for (const [group, kinds] of Object.entries({ ...BUILTIN_KIND_VERDICTS, ...OPERATOR_KINDS }))
      for (const [kind, v] of Object.entries(kinds)) {
        const type = `kubernetes:${group}/v1:${kind}`;
        const views = adaptResources(type, { metadata: { name: "x" } }, "x");
        if (v.v === "unjudged") {
          expect(blocking(type, { metadata: { name: "x" } }), type).toEqual([UNJUDGED]);
          const u = views.find((s) => s.subject === "unjudged");
          expect(u?.subject === "unjudged" ? u.reason : "", type).toBe(v.why);
        } else if (v.v === "inert" || v.v === "through" || v.v === "stack")
          expect(blocking(type, { metadata: { name: "x" } }), type).not.toContain(UNJUDGED);
      }
  });

  it("the operators' kinds the readers rebuild or read as entry points are known", () => {
    for (const [group, kind] of [
      ["argoproj.io", "Workflow"],
      ["argoproj.io", "Rollout"],
      ["tekton.dev", "PipelineRun"],
      ["ray.io", "RayCluster"],
      ["sparkoperator.k8s.io", "SparkApplication"],
      ["kubevirt.io", "VirtualMachine"],
      ["gateway.networking.k8s.io", "HTTPRoute"],
      ["serving.knative.dev", "Service"],
      ["agents.x-k8s.io", "Sandbox"],
    ] as const)
      expect(kindVerdict({ group, version: "v1", kind })?.v, `${group}/${kind}`).toBe("read");
    expect(kindVerdict({ group: "argoproj.io", version: "v1alpha1", kind: "EventSource" })).toBeUndefined();
    expect(kindVerdict({ group: "kafka.strimzi.io", version: "v1beta2", kind: "Kafka" })?.v).toBe("unjudged");
    expect(kindVerdict({ group: "tailscale.com", version: "v1alpha1", kind: "Connector" })?.v).toBe("read");
    expect(kindVerdict({ group: "example.com", version: "v1", kind: "Deployment" })).toBeUndefined();
  });

  it("the rebuilt kinds are the ones the rebuilders read, and no other kind of their groups", () => {
    for (const [group, kinds] of Object.entries(REBUILT))
      for (const kind of kinds) {
        const t = { group, version: "v1", kind };
        const tasks = [{ name: "t", taskSpec: { steps: [] } }];
        const spec = { template: { spec: {} }, taskSpec: { steps: [] }, tasks, pipelineSpec: { tasks } };
        expect(synthesizedSites(t, { spec }), `${group}/${kind}`).toBeDefined();
      }
    for (const [group, kind] of [
      ["tekton.dev", "StepAction"],
      ["argoproj.io", "EventSource"],
      ["kubevirt.io", "KubeVirt"],
    ] as const)
      expect(synthesizedSites({ group, version: "v1", kind }, {})).toBeUndefined();
  });

  it("a kind name the API server cannot match (a space, punctuation) fails closed, never skipped", () => {
    for (const kind of ["MutatingWebhookConfiguration ", "Pod.v1", "Mutating-Webhook"]) {
      const views = adaptResources(
        `kubernetes:admissionregistration.k8s.io/v1:${kind}`,
        { metadata: {} },
        "x",
      );
      expect(
        views.map((v) => v.subject),
        kind,
      ).toEqual(["unjudged"]);
    }
  });

  it("a kind no verdict names fails closed, whatever it holds, and names the claimed version", () => {
    for (const props of [{}, { spec: {} }, { data: { a: "b" } }]) {
      const [view] = adaptResources("kubernetes:widgets.example.com/v1:Widget", props, "w");
      expect(view?.subject).toBe("unjudged");
      expect(view?.subject === "unjudged" ? view.reason : "").toContain(
        `Kubernetes ${KUBERNETES_API.kubernetes}`,
      );
    }
  });
});
