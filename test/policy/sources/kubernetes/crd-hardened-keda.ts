/**
 * Hardened, ordinary objects of KEDA's kinds (`spec` only), for the conformance of the operators' verdict tables
 * (crd-verdicts.test.ts) and KEDA's own tests (crd-keda-fields.test.ts): each passes every rule.
 */
import { pod } from "./crd-hardened-rollouts";

/** A cron trigger: the operator reads the clock, and queries nothing. */
export const cron = () => ({
  type: "cron",
  metadata: { timezone: "UTC", start: "0 * * * *", end: "30 * * * *", desiredReplicas: "1" },
});

export const KEDA_HARDENED: Readonly<Record<string, (version: string) => object>> = {
  ScaledJob: () => ({
    jobTargetRef: {
      backoffLimit: 0,
      activeDeadlineSeconds: 3600,
      ttlSecondsAfterFinished: 60,
      template: pod(),
    },
    pollingInterval: 30,
    maxReplicaCount: 2,
    scalingStrategy: { strategy: "default" },
    triggers: [cron()],
  }),
  ScaledObject: () => ({
    scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" },
    minReplicaCount: 1,
    maxReplicaCount: 3,
    advanced: {
      horizontalPodAutoscalerConfig: {
        behavior: {
          scaleDown: {
            stabilizationWindowSeconds: 300,
            policies: [{ type: "Pods", value: 1, periodSeconds: 60 }],
          },
        },
      },
    },
    triggers: [{ type: "cpu", metricType: "Utilization", metadata: { value: "60" } }],
  }),
  // An authentication with no credential source: any source is refused (crd-keda-fields.test.ts).
  TriggerAuthentication: () => ({}),
  ClusterTriggerAuthentication: () => ({}),
};
