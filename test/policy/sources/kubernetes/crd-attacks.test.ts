/**
 * Attacks on the operators' fields, from their controllers' source: each hostile object is refused where it is
 * written, its control passes (the conformance of the tables themselves is crd-verdicts.test.ts).
 */
import { describe, expect, it } from "vitest";
import { ALL_RULES, judge } from "../../../../policy/rules/registry";
import { adaptResources } from "../../../../policy/sources/subject";
import { HARDENED, KINDS, object, over, type PinnedKind, pod, rayCluster, UNJUDGED } from "./crd-conformance";

describe("attacks on the operators' fields", () => {
  const kind = (name: string): PinnedKind => {
    const k = KINDS.find((x) => x.kind === name);
    if (k === undefined) throw new Error(`no pinned ${name}`);
    return k;
  };
  const paths = (name: string, version: string, spec: unknown, metadata?: object) =>
    adaptResources(
      `kubernetes:${kind(name).group}/${version}:${name}`,
      { ...object(kind(name), version, spec), ...(metadata === undefined ? {} : { metadata }) },
      "t",
    ).flatMap((v) =>
      judge(v, ALL_RULES, {})
        .filter((r) => r.rule.id === UNJUDGED)
        .flatMap((r) => r.findings.map((f) => f.path)),
    );

  it.each([
    [
      "a pod field in another case inside an operator's pod template",
      "Sandbox",
      "v1beta1",
      { podTemplate: over(pod(), { spec: { HostNetwork: true } }) },
      ["spec.podTemplate.spec.HostNetwork"],
    ],
    [
      "a key beside metadata and spec in a core pod template",
      "RayCluster",
      "v1",
      over(rayCluster(), { headGroupSpec: { template: { sidecars: [{ name: "x" }] } } }),
      ["spec.headGroupSpec.template.sidecars"],
    ],
    [
      "a key of a newer KubeRay release (authOptions)",
      "RayCluster",
      "v1",
      { ...rayCluster(), authOptions: { mode: "token" } },
      ["spec.authOptions"],
    ],
    [
      "a v1 field written in a v1alpha1 object",
      "RayCluster",
      "v1alpha1",
      { ...rayCluster(), managedBy: "ray.io/kuberay-operator" },
      ["spec.managedBy"],
    ],
    [
      "a container field outside the claimed schema in the autoscaler's securityContext",
      "RayCluster",
      "v1",
      {
        ...rayCluster(),
        enableInTreeAutoscaling: true,
        autoscalerOptions: { securityContext: { privilegedMode: true } },
      },
      ["spec.autoscalerOptions.securityContext.privilegedMode"],
    ],
    [
      "environment variables a claim adds to the pod",
      "SandboxClaim",
      "v1beta1",
      { warmPoolRef: { name: "p" }, env: [{ name: "TOKEN", value: "x" }] },
      ["spec.env"],
    ],
    [
      "a mesh injector label the operator adds to the head pod",
      "RayCluster",
      "v1",
      over(rayCluster(), { headGroupSpec: { labels: { "sidecar.istio.io/inject": "true" } } }),
      ["spec.headGroupSpec.labels"],
    ],
    [
      "a ray start flag that carries a credential",
      "RayCluster",
      "v1",
      over(rayCluster(), { headGroupSpec: { rayStartParams: { "redis-password": "hunter2" } } }),
      ["spec.headGroupSpec.rayStartParams.redis-password"],
    ],
    [
      "a ray start value that smuggles a flag",
      "RayCluster",
      "v1",
      over(rayCluster(), { headGroupSpec: { rayStartParams: { "num-cpus": "1 --redis-password=x" } } }),
      ["spec.headGroupSpec.rayStartParams.num-cpus"],
    ],
    [
      "a custom head Service's own annotations",
      "RayCluster",
      "v1",
      over(rayCluster(), {
        headGroupSpec: { headService: { metadata: { annotations: { "tailscale.com/expose": "true" } } } },
      }),
      ["spec.headGroupSpec.headService.metadata.annotations"],
    ],
    [
      "a mesh injector annotation in a Ray pod template's metadata",
      "RayCluster",
      "v1",
      over(rayCluster(), {
        headGroupSpec: { template: { metadata: { annotations: { "linkerd.io/inject": "enabled" } } } },
      }),
      ["spec.headGroupSpec.template.metadata.annotations.linkerd.io/inject"],
    ],
    [
      "a key outside agent-sandbox's own pod metadata type",
      "SandboxTemplate",
      "v1beta1",
      { podTemplate: over(pod(), { metadata: { namespace: "kube-system" } }) },
      ["spec.podTemplate.metadata.namespace"],
    ],
    ["a spec that is not an object", "SandboxWarmPool", "v1beta1", "replicas: 3", ["spec"]],
  ])("%s", (_, name, version, spec, want) => {
    expect(paths(name, version, spec)).toEqual(want);
  });

  it("a refused field at its zero value passes (an empty list of claim variables)", () => {
    expect(paths("SandboxClaim", "v1beta1", { warmPoolRef: { name: "p" }, env: [] })).toEqual([]);
  });

  it("annotations of the object the operator acts on fail closed; other keys are data", () => {
    expect(
      paths("Sandbox", "v1beta1", HARDENED.Sandbox?.("v1beta1"), {
        name: "t",
        annotations: { "agents.x-k8s.io/pod-name": "other", note: "x" },
      }),
    ).toEqual(["metadata.annotations.agents.x-k8s.io/pod-name"]);
    expect(
      paths("RayCluster", "v1", rayCluster(), { name: "t", annotations: { "ray.io/ft-enabled": "True" } }),
    ).toEqual(["metadata.annotations.ray.io/ft-enabled"]);
    expect(
      paths("RayCluster", "v1", rayCluster(), { name: "t", annotations: { "ray.io/ft-enabled": "false" } }),
    ).toEqual([]);
  });

  it("the rule's allowFields accepts a named operator field", () => {
    const views = adaptResources(
      "kubernetes:extensions.agents.x-k8s.io/v1beta1:SandboxClaim",
      object(kind("SandboxClaim"), "v1beta1", {
        warmPoolRef: { name: "p" },
        env: [{ name: "A", value: "b" }],
      }),
      "t",
    );
    const rule = ALL_RULES.find((r) => r.id === UNJUDGED);
    if (rule === undefined) throw new Error("no rule");
    expect(
      views.flatMap((v) =>
        judge(v, [rule], { [UNJUDGED]: { allowFields: ["SandboxClaim.env"] } }).flatMap((r) => r.findings),
      ),
    ).toEqual([]);
  });
});
