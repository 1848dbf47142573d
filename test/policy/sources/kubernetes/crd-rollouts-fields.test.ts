/**
 * Attacks on Argo Rollouts' fields (crd-verdicts/argo-rollouts.ts) and their analysis jobs (crd-rollouts.ts), each
 * written as the controller's source reads it: what the controller adds to pods, runs or routes outside the template
 * the rules judged fails closed where it is written; hardened, ordinary objects pass. The references to other
 * objects of the set: crd-rollouts-references.test.ts.
 */
import { describe, expect, it } from "vitest";
import { ALL_RULES, judge } from "../../../../policy/rules/registry";
import { adaptResources } from "../../../../policy/sources/subject";
import { hardened, over, pod } from "./crd-hardened-rollouts";

const ARGO = "kubernetes:argoproj.io/v1alpha1:";
const UNJUDGED = "sandbox-disallow-unjudged-fields";
const object = (spec: unknown) => ({ metadata: { name: "r", namespace: "agents" }, spec });

/** Blocking findings of every rule: `rule path`. */
function blocking(kind: string, spec: unknown): string[] {
  return adaptResources(`${ARGO}${kind}`, object(spec), "r").flatMap((v) =>
    judge(v, ALL_RULES, {}).flatMap((r) =>
      r.findings.filter((f) => !f.unchecked).map((f) => `${r.rule.id} ${f.path ?? ""}`),
    ),
  );
}
const unjudged = (kind: string, spec: unknown) =>
  blocking(kind, spec)
    .filter((x) => x.startsWith(`${UNJUDGED} `))
    .map((x) => x.slice(UNJUDGED.length + 1));

const canary = (c: object) => over(hardened("Rollout"), { strategy: { canary: c } });
const step = (s: object) => canary({ steps: [s] });
const metric = (provider: object, extra: object = {}) => ({ metrics: [{ name: "m", provider }], ...extra });

describe("Argo Rollouts: fields the controller acts on outside the judged template", () => {
  it.each([
    [
      "a mesh injector label on the canary's pods",
      canary({ canaryMetadata: { labels: { "sidecar.istio.io/inject": "true" } } }),
      ["spec.strategy.canary.canaryMetadata"],
    ],
    [
      "an AppArmor annotation on the stable pods",
      canary({
        stableMetadata: {
          annotations: { "container.apparmor.security.beta.kubernetes.io/task": "unconfined" },
        },
      }),
      ["spec.strategy.canary.stableMetadata"],
    ],
    [
      "a traffic router's Ingress annotations (a configuration snippet)",
      canary({
        canaryService: "c",
        stableService: "s",
        trafficRouting: {
          nginx: { stableIngress: "web", additionalIngressAnnotations: { "server-snippet": "return 200;" } },
        },
      }),
      ["spec.strategy.canary.trafficRouting"],
    ],
    [
      "a canary scaled past the replicas",
      step({ setCanaryScale: { replicas: 100 } }),
      ["spec.strategy.canary.steps[0].setCanaryScale.replicas"],
    ],
    [
      "a canary weight past 100",
      step({ setCanaryScale: { weight: 150 } }),
      ["spec.strategy.canary.steps[0].setCanaryScale.weight"],
    ],
    [
      "a step plugin",
      step({ plugin: { name: "x", config: { a: 1 } } }),
      ["spec.strategy.canary.steps[0].plugin"],
    ],
    [
      "a mirror route",
      step({ setMirrorRoute: { name: "m", percentage: 100 } }),
      ["spec.strategy.canary.steps[0].setMirrorRoute"],
    ],
    [
      "an experiment that labels its pods and runs five",
      step({
        experiment: {
          templates: [
            {
              name: "e",
              specRef: "canary",
              replicas: 5,
              metadata: { labels: { "linkerd.io/inject": "enabled" } },
            },
          ],
        },
      }),
      [
        "spec.strategy.canary.steps[0].experiment.templates[0].replicas",
        "spec.strategy.canary.steps[0].experiment.templates[0].metadata",
      ],
    ],
    [
      "a blue-green preview of ten copies with an injector annotation",
      over(hardened("Rollout"), {
        strategy: {
          canary: null,
          blueGreen: {
            activeService: "a",
            previewReplicaCount: 10,
            previewMetadata: { annotations: { "vault.hashicorp.com/agent-inject": "true" } },
          },
        },
      }),
      ["spec.strategy.blueGreen.previewReplicaCount", "spec.strategy.blueGreen.previewMetadata"],
    ],
    [
      "a selector key outside LabelSelector",
      over(hardened("Rollout"), { selector: { matchFields: { a: "b" } } }),
      ["spec.selector"],
    ],
    [
      "a template key in another case",
      { ...(hardened("Rollout") as object), Template: pod() },
      ["spec.Template"],
    ],
  ])("%s", (_, spec, want) => {
    expect(unjudged("Rollout", spec)).toEqual(want);
  });

  it("ordinary canary settings pass: a 50% canary scale, one experiment pod of the canary, analysis by name", () => {
    const spec = canary({
      steps: [
        { setWeight: 20 },
        { setCanaryScale: { weight: 50 } },
        { experiment: { duration: "1m", templates: [{ name: "e", specRef: "canary", replicas: 1 }] } },
        { analysis: { templates: [{ templateName: "smoke" }], args: [{ name: "service", value: "web" }] } },
        { pause: {} },
      ],
    });
    expect(blocking("Rollout", spec)).toEqual([]);
  });

  it("a privileged template fails by the pod rules; hostile values never throw", () => {
    const priv = over(hardened("Rollout"), {
      template: { spec: { containers: [{ securityContext: { privileged: true } }] } },
    });
    expect(blocking("Rollout", priv)).toContain(
      "sandbox-disallow-privileged spec.template.spec.containers[0]",
    );
    for (const spec of [
      { strategy: "canary", workloadRef: "web", template: [] },
      { strategy: { canary: { steps: "x", canaryMetadata: [1] } } },
      { templates: { a: 1 }, analyses: "x" },
      { metrics: [{ provider: "job" }, null, { provider: { job: { spec: "x" } } }] },
    ])
      for (const kind of ["Rollout", "Experiment", "AnalysisTemplate", "AnalysisRun"])
        expect(() => blocking(kind, spec)).not.toThrow();
  });
});

describe("Argo Rollouts analysis: providers and arguments", () => {
  it.each([
    [
      "a web metric to the metadata server",
      metric({ web: { url: "http://169.254.169.254/latest/meta-data/" } }),
      ["spec.metrics[0].provider.web"],
    ],
    [
      "a Prometheus query",
      metric({ prometheus: { address: "http://prom:9090", query: "up" } }),
      ["spec.metrics[0].provider.prometheus"],
    ],
    [
      "a metric plugin",
      metric({ plugin: { "argoproj-labs/x": { a: 1 } } }),
      ["spec.metrics[0].provider.plugin"],
    ],
    [
      "an argument from a Secret",
      {
        ...(hardened("AnalysisTemplate") as object),
        args: [{ name: "t", valueFrom: { secretKeyRef: { name: "s", key: "k" } } }],
      },
      ["spec.args[0].valueFrom.secretKeyRef"],
    ],
    [
      "annotations on the Job",
      over(hardened("AnalysisTemplate"), {
        metrics: [{ provider: { job: { metadata: { annotations: { a: "b" } } } } }],
      }),
      ["spec.metrics[0].provider.job.metadata"],
    ],
  ])("%s", (_, spec, want) => {
    expect(unjudged("AnalysisTemplate", spec)).toEqual(want);
  });

  it("an argument that looks like a credential fails where it is written: the controller substitutes it unseen", () => {
    const token = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";
    expect(
      unjudged("AnalysisTemplate", {
        ...(hardened("AnalysisTemplate") as object),
        args: [{ name: "t", value: token }],
      }),
    ).toEqual(["spec.args[0].value"]);
    expect(
      unjudged(
        "Rollout",
        step({ analysis: { templates: [{ templateName: "smoke" }], args: [{ name: "t", value: token }] } }),
      ),
    ).toEqual(["spec.strategy.canary.steps[0].analysis.args[0].value"]);
  });

  it("a job metric's pod is judged where it is written, in a template, a cluster template and a run", () => {
    const priv = {
      metrics: [
        {
          provider: {
            job: {
              spec: { template: { spec: { containers: [{ securityContext: { privileged: true } }] } } },
            },
          },
        },
      ],
    };
    for (const kind of ["AnalysisTemplate", "ClusterAnalysisTemplate", "AnalysisRun"])
      expect(blocking(kind, over(hardened(kind), priv))).toContain(
        "sandbox-disallow-privileged spec.metrics[0].provider.job.spec.template.spec.containers[0]",
      );
  });

  it("a template's placeholder in a host path fails closed; a run's argument fills it", () => {
    const hostPath = (p: string) =>
      over(hardened("AnalysisTemplate"), {
        metrics: [
          {
            provider: {
              job: {
                spec: {
                  template: { spec: { volumes: [{ name: "job", emptyDir: null, hostPath: { path: p } }] } },
                },
              },
            },
          },
        ],
      });
    const tpl = blocking("AnalysisTemplate", {
      ...(hostPath("{{ args.p }}") as object),
      args: [{ name: "p", value: "/tmp" }],
    });
    expect(tpl).toContain(
      "sandbox-require-readable-values spec.metrics[0].provider.job.spec.template.spec.volumes[0].hostPath.path",
    );
    const run = blocking("AnalysisRun", {
      ...(hostPath("{{args.p}}") as object),
      args: [{ name: "p", value: "/var/run/docker.sock" }],
    });
    expect(run.some((x) => x.startsWith("sandbox-disallow-runtime-socket "))).toBe(true);
    // A placeholder in command text stays text, as the controller leaves the rest of the pod.
    expect(blocking("AnalysisTemplate", hardened("AnalysisTemplate"))).toEqual([]);
  });

  it("a label key left to an argument fails closed in a template; a run's argument naming an injector fails", () => {
    const keyed = over(hardened("AnalysisTemplate"), {
      metrics: [
        { provider: { job: { spec: { template: { metadata: { labels: { "{{args.k}}": "true" } } } } } } },
      ],
    });
    const args = [{ name: "k", value: "sidecar.istio.io/inject" }];
    expect(blocking("AnalysisTemplate", { ...(keyed as object), args })).toContain(
      "sandbox-require-readable-values spec.metrics[0].provider.job.spec.template.metadata.labels.{{args.k}}",
    );
    expect(unjudged("AnalysisRun", { ...(keyed as object), args })).toEqual([
      "spec.metrics[0].provider.job.spec.template.metadata.labels.sidecar.istio.io/inject",
    ]);
  });

  it("an Experiment's template is judged; its per-template Service passes", () => {
    expect(
      blocking("Experiment", over(hardened("Experiment"), { templates: [{ service: { name: "e" } }] })),
    ).toEqual([]);
    expect(
      blocking(
        "Experiment",
        over(hardened("Experiment"), { templates: [{ template: { spec: { hostNetwork: true } } }] }),
      ),
    ).toContain("sandbox-disallow-host-namespaces spec.templates[0].template.spec.hostNetwork");
  });
});
