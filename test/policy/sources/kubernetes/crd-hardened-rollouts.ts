/**
 * Hardened, ordinary objects of Argo Rollouts' kinds (`spec` only), for the conformance of the operators' verdict
 * tables (crd-verdicts.test.ts): each passes every rule.
 */
import { safePodSpec } from "../../fixtures";

const META = { labels: { "sandbox.project": "demo", "sandbox.role": "task" } };
const pod = () => ({ metadata: META, spec: safePodSpec() });

/** A metric whose provider is a Job of a hardened pod. */
const jobMetric = () => ({
  name: "smoke",
  interval: "30s",
  count: 1,
  failureLimit: 0,
  provider: {
    job: {
      metadata: { labels: { "sandbox.project": "demo" } },
      spec: { backoffLimit: 0, activeDeadlineSeconds: 600, ttlSecondsAfterFinished: 300, template: pod() },
    },
  },
});

const analysisTemplate = () => ({
  args: [{ name: "service", value: "web" }],
  metrics: [jobMetric()],
});

export const HARDENED_ROLLOUTS: Readonly<Record<string, () => object>> = {
  Rollout: () => ({
    replicas: 2,
    selector: { matchLabels: { "sandbox.project": "demo", "sandbox.role": "task" } },
    template: pod(),
    revisionHistoryLimit: 2,
    strategy: {
      canary: {
        maxSurge: "25%",
        maxUnavailable: 0,
        steps: [{ setWeight: 20 }, { pause: { duration: "30s" } }, { setWeight: 50 }, { pause: {} }],
      },
    },
  }),
  Experiment: () => ({
    duration: "5m",
    templates: [
      {
        name: "baseline",
        replicas: 1,
        selector: { matchLabels: { "sandbox.project": "demo", "sandbox.role": "task" } },
        template: pod(),
      },
    ],
  }),
  AnalysisTemplate: analysisTemplate,
  ClusterAnalysisTemplate: analysisTemplate,
  AnalysisRun: () => ({ ...analysisTemplate(), terminate: false }),
};
