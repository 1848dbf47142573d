/**
 * Hardened, ordinary objects of Argo Rollouts' kinds (`spec` only), for the conformance of the operators' verdict
 * tables (crd-verdicts.test.ts): each passes every rule.
 */
import { safePodSpec } from "../../fixtures";

const META = { labels: { "sandbox.project": "demo", "sandbox.role": "task" } };
export const pod = () => ({ metadata: META, spec: safePodSpec() });

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** `b` laid over `a`: objects merged key by key, lists element by element, anything else replaced. */
export function over(a: unknown, b: unknown): unknown {
  if (Array.isArray(a) && Array.isArray(b)) return b.map((x, i) => over(a[i], x));
  if (!isObj(a) || !isObj(b)) return b;
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = over(a[k], v);
  return out;
}

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

/** A hardened `spec` of the kind. */
export const hardened = (kind: string): unknown => HARDENED_ROLLOUTS[kind]?.() ?? {};
