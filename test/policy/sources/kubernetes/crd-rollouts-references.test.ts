/**
 * Argo Rollouts' references to other objects of the set (references-rollouts.ts), judged by
 * sandbox-disallow-unjudged-references as the controller resolves them: the workload a Rollout copies its pods from,
 * the AnalysisTemplates and Services it names; what the set does not hold fails closed, hardened ones pass.
 */
import { describe, expect, it } from "vitest";
import { checkReferences } from "../../../../policy/stack/disallow-unjudged-references";
import { hardened, over, pod } from "./crd-hardened-rollouts";

const ARGO = "kubernetes:argoproj.io/v1alpha1:";

interface SetItem {
  readonly type: string;
  readonly name: string;
  readonly urn: string;
  readonly props: unknown;
}
const res = (kind: string, name: string, props: object, type = `${ARGO}${kind}`): SetItem => ({
  type,
  name,
  urn: `u/${kind}/${name}`,
  props: { metadata: { name, namespace: "agents" }, ...props },
});
const deployment = (spec: object = {}) =>
  res(
    "Deployment",
    "web",
    { spec: { replicas: 0, selector: { matchLabels: { app: "web" } }, template: over(pod(), spec) } },
    "kubernetes:apps/v1:Deployment",
  );
const rollout = (spec: object) =>
  res("Rollout", "web", { spec: over({ ...(hardened("Rollout") as object), template: undefined }, spec) });
const refs = (...rs: SetItem[]) => checkReferences(rs).map((f) => `${f.urn} ${f.path ?? ""} ${f.message}`);

describe("Argo Rollouts references: the workload, the analysis templates, the Services", () => {
  const ref = { workloadRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" } };

  it("a rollout whose workload the set does not hold fails closed; with the hardened Deployment it passes", () => {
    expect(refs(rollout(ref))).toEqual([
      expect.stringContaining(
        'spec.workloadRef Rollout "web" copies its pods from Deployment "web", which is not in the input',
      ),
    ]);
    expect(refs(rollout(ref), deployment())).toEqual([]);
  });

  it("the referenced template is judged as the rollout's pods, paths named where the Deployment writes them", () => {
    const f = refs(rollout(ref), deployment({ spec: { hostPID: true } }));
    expect(f.some((x) => x.includes('Deployment "web" spec.template.spec.hostPID'))).toBe(true);
  });

  it("a PodTemplate answers; a kind the controller does not copy from, or in another case, fails closed", () => {
    const tpl = res("PodTemplate", "web", { template: pod() }, "kubernetes:core/v1:PodTemplate");
    expect(
      refs(rollout({ workloadRef: { apiVersion: "v1", kind: "PodTemplate", name: "web" } }), tpl),
    ).toEqual([]);
    for (const w of [
      { apiVersion: "apps/v1", kind: "StatefulSet", name: "web" },
      { apiVersion: "apps/v1", kind: "deployment", name: "web" },
      { apiVersion: "extensions/v1beta1", kind: "Deployment", name: "web" },
    ])
      expect(refs(rollout({ workloadRef: w }), deployment()).map((x) => x.split(" ")[1])).toEqual([
        "spec.workloadRef",
      ]);
  });

  it("analysis templates and Services the set does not hold fail closed; held ones pass", () => {
    const spec = {
      strategy: {
        canary: {
          canaryService: "web-canary",
          stableService: "web",
          analysis: {
            templates: [{ templateName: "smoke" }, { templateName: "global", clusterScope: true }],
          },
          steps: [
            {
              experiment: {
                templates: [{ name: "e", specRef: "stable" }],
                analyses: [{ name: "a", templateName: "other" }],
              },
            },
          ],
        },
      },
    };
    const paths = refs(rollout(over(hardened("Rollout"), spec) as object)).map((x) => x.split(" ")[1]);
    expect(paths).toEqual([
      "spec.strategy.canary.canaryService",
      "spec.strategy.canary.stableService",
      "spec.strategy.canary.analysis.templates[0].templateName",
      "spec.strategy.canary.analysis.templates[1].templateName",
      "spec.strategy.canary.steps[0].experiment.analyses[0].templateName",
    ]);
    const svc = (name: string) =>
      res(
        "Service",
        name,
        { spec: { selector: { app: "web" }, ports: [{ port: 80 }] } },
        "kubernetes:core/v1:Service",
      );
    const held = [
      svc("web-canary"),
      svc("web"),
      res("AnalysisTemplate", "smoke", { spec: hardened("AnalysisTemplate") }),
      res("AnalysisTemplate", "other", { spec: hardened("AnalysisTemplate") }),
      {
        ...res("ClusterAnalysisTemplate", "global", { spec: hardened("ClusterAnalysisTemplate") }),
        props: { metadata: { name: "global" }, spec: hardened("ClusterAnalysisTemplate") },
      },
    ];
    expect(refs(rollout(over(hardened("Rollout"), spec) as object), ...held)).toEqual([]);
  });
});
