/**
 * Hardened `spec`s of Argo Workflows' pinned kinds (crd-verdicts.test.ts HARDENED): a container template and a
 * script template run by steps, the pods' settings as the rules want them; each passes every rule.
 */
import { safeK8sContainer } from "../../fixtures";

const META = { labels: { "sandbox.project": "demo", "sandbox.role": "task" } };

/** A hardened WorkflowSpec: its first template is the container template `main`. */
export function argoWorkflowSpec(): Record<string, unknown> {
  const { name: _n, ...container } = safeK8sContainer();
  return {
    entrypoint: "run",
    activeDeadlineSeconds: 600,
    automountServiceAccountToken: false,
    executor: { serviceAccountName: "argo-executor" },
    podMetadata: META,
    securityContext: {
      runAsNonRoot: true,
      runAsUser: 1000,
      runAsGroup: 1000,
      fsGroup: 1000,
      seccompProfile: { type: "RuntimeDefault" },
    },
    volumes: [
      { name: "job", emptyDir: { sizeLimit: "1Gi" } },
      { name: "tmp", emptyDir: { medium: "Memory", sizeLimit: "64Mi" } },
    ],
    ttlStrategy: { secondsAfterCompletion: 300 },
    podGC: { strategy: "OnPodCompletion" },
    templates: [
      { name: "main", container },
      {
        name: "run",
        steps: [[{ name: "first", template: "main" }]],
      },
    ],
  };
}

export const ARGO_HARDENED: Readonly<Record<string, () => object>> = {
  Workflow: argoWorkflowSpec,
  WorkflowTemplate: argoWorkflowSpec,
  ClusterWorkflowTemplate: argoWorkflowSpec,
  CronWorkflow: () => ({
    schedule: "0 * * * *",
    concurrencyPolicy: "Forbid",
    workflowSpec: argoWorkflowSpec(),
  }),
};
