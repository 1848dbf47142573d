/**
 * Hardened `spec`s of Knative Serving's pinned kinds (crd-verdicts/knative-serving.ts): a revision as Knative's
 * webhook takes it (no restartPolicy: it is outside Knative's pod spec), with the pod's security contexts the pod
 * rules want, served only inside the cluster. Each passes every rule (crd-verdicts.test.ts).
 */
import { safePodSpec } from "../../fixtures";

const EXPOSED = "sandbox-disallow-exposed-ports";

/** The label that keeps a Knative Service's or Route's ingress inside the cluster. */
export const CLUSTER_LOCAL = { "networking.knative.dev/visibility": "cluster-local" };

/** A hardened RevisionSpec: the safe pod spec without the restart policy Knative's webhook refuses. */
export function revision(): Record<string, unknown> {
  const { restartPolicy: _, ...spec } = safePodSpec();
  return { ...spec, containerConcurrency: 10, timeoutSeconds: 300 };
}

const revisionTemplate = () => ({
  metadata: {
    labels: { "sandbox.project": "demo", "sandbox.role": "task" },
    annotations: { "autoscaling.knative.dev/max-scale": "3" },
  },
  spec: revision(),
});

export const KNATIVE_HARDENED: Readonly<Record<string, () => object>> = {
  Service: () => ({ template: revisionTemplate(), traffic: [{ latestRevision: true, percent: 100 }] }),
  Configuration: () => ({ template: revisionTemplate() }),
  Revision: revision,
  Route: () => ({ traffic: [{ configurationName: "hello", percent: 100, tag: "current" }] }),
  DomainMapping: () => ({ ref: { apiVersion: "serving.knative.dev/v1", kind: "Service", name: "hello" } }),
};

/** The metadata a hardened object of the kind carries (the exposure rule reads its labels). */
export const KNATIVE_METADATA: Readonly<Record<string, object>> = {
  Service: { labels: CLUSTER_LOCAL },
  Route: { labels: CLUSTER_LOCAL },
  DomainMapping: { labels: CLUSTER_LOCAL },
};

/** A DomainMapping's ingress is always external: it is an entry point whatever its labels. */
export const KNATIVE_BY_DESIGN: Readonly<Record<string, readonly string[]>> = { DomainMapping: [EXPOSED] };
