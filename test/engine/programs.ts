// The inline stack programs of the engine tests: a sandbox namespace (Pod Security "restricted" enforced), a
// ResourceQuota as the task budget, and one task pod, hardened or (for the policy test) violating. The pods carry
// `pulumi.com/skipAwait`: there is no kubelet, so they are admitted and stay Pending.
import * as k8s from "@pulumi/kubernetes";
import type { PulumiFn } from "@pulumi/pulumi/automation";

/** The task budget: at most 2 pods, 1 CPU and 1 GiB of limits in the namespace. */
export const BUDGET = { "count/pods": "2", "limits.cpu": "1", "limits.memory": "1Gi" } as const;
export const QUOTA_NAME = "task-budget";
export const TASK_POD = "task";
/** What the task asks for: half the CPU budget. */
export const TASK_LIMITS = { cpu: "500m", memory: "256Mi" } as const;

/** A pod spec that passes Pod Security "restricted" and the sandbox policy pack. */
export function hardenedPodSpec(limits: { cpu: string; memory: string } = TASK_LIMITS) {
  return {
    restartPolicy: "Never",
    automountServiceAccountToken: false,
    securityContext: {
      runAsNonRoot: true,
      runAsUser: 1000,
      runAsGroup: 1000,
      seccompProfile: { type: "RuntimeDefault" },
    },
    containers: [
      {
        name: "task",
        image: "busybox:1.36",
        command: ["sleep", "3600"],
        securityContext: {
          privileged: false,
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          runAsNonRoot: true,
          capabilities: { drop: ["ALL"] },
        },
        resources: { limits: { ...limits }, requests: { ...limits } },
      },
    ],
  };
}

export interface TaskStack {
  readonly kubeconfig: string;
  readonly namespace: string;
  /** Shares the host's network and keeps NET_ADMIN: what the policy pack must refuse. */
  readonly violate?: boolean;
}

export function taskStackProgram(o: TaskStack): PulumiFn {
  return async () => {
    const provider = new k8s.Provider("local-apiserver", { kubeconfig: o.kubeconfig });
    const ns = new k8s.core.v1.Namespace(
      "sandbox",
      {
        metadata: {
          name: o.namespace,
          labels: {
            "pod-security.kubernetes.io/enforce": "restricted",
            "pod-security.kubernetes.io/enforce-version": "latest",
          },
        },
      },
      { provider },
    );
    const quota = new k8s.core.v1.ResourceQuota(
      "budget",
      { metadata: { name: QUOTA_NAME, namespace: ns.metadata.name }, spec: { hard: { ...BUDGET } } },
      { provider },
    );
    const spec = hardenedPodSpec();
    const podSpec = o.violate
      ? {
          ...spec,
          hostNetwork: true,
          containers: spec.containers.map((c) => ({
            ...c,
            securityContext: { ...c.securityContext, capabilities: { drop: [] } },
          })),
        }
      : spec;
    const pod = new k8s.core.v1.Pod(
      "task",
      {
        metadata: {
          name: TASK_POD,
          namespace: ns.metadata.name,
          annotations: { "pulumi.com/skipAwait": "true" },
        },
        spec: podSpec,
      },
      // The quota first: a pod created before the quota has a status is not counted against it.
      { provider, dependsOn: [quota] },
    );
    return { namespace: ns.metadata.name, quota: quota.metadata.name, pod: pod.metadata.name };
  };
}

/**
 * A stack whose objects the pack cannot judge whole: a MutatingWebhookConfiguration (it changes pods after the
 * rules judged them) and a ClusterRole with every verb on every resource (cluster-admin by another name), beside an
 * inert Namespace and a hardened Pod, which pass. (A key outside the provider's schema never reaches the pack from a program: the
 * Kubernetes provider's check drops it, as this preview showed when the Pod held one.)
 */
export function unjudgedKindsProgram(o: { kubeconfig: string; namespace: string }): PulumiFn {
  return async () => {
    const provider = new k8s.Provider("local-apiserver", { kubeconfig: o.kubeconfig });
    const ns = new k8s.core.v1.Namespace("sandbox", { metadata: { name: o.namespace } }, { provider });
    new k8s.admissionregistration.v1.MutatingWebhookConfiguration(
      "inject",
      {
        metadata: { name: `${o.namespace}-inject` },
        webhooks: [
          {
            name: "inject.sandbox.test",
            clientConfig: { url: "https://127.0.0.1:9443/mutate" },
            rules: [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"] }],
            admissionReviewVersions: ["v1"],
            sideEffects: "None",
            failurePolicy: "Ignore",
          },
        ],
      },
      { provider },
    );
    new k8s.rbac.v1.ClusterRole(
      "everything",
      {
        metadata: { name: `${o.namespace}-everything` },
        rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }],
      },
      { provider },
    );
    const spec = hardenedPodSpec();
    new k8s.core.v1.Pod(
      "task",
      {
        metadata: {
          name: TASK_POD,
          namespace: ns.metadata.name,
          annotations: { "pulumi.com/skipAwait": "true" },
        },
        spec,
      },
      { provider },
    );
    return { namespace: ns.metadata.name };
  };
}

/**
 * A stack of an operator's objects, KubeRay's (whose CRD schema the project pins): a hardened RayCluster, and one
 * holding a key of a newer KubeRay release than the pinned one (`authOptions`), which fails closed. The CRD is in
 * the stack, as an operator's chart installs it, so the provider knows the kind in a preview of an empty cluster.
 */
export function operatorObjectsProgram(o: { kubeconfig: string; namespace: string }): PulumiFn {
  return async () => {
    const provider = new k8s.Provider("local-apiserver", { kubeconfig: o.kubeconfig });
    const ns = new k8s.core.v1.Namespace("sandbox", { metadata: { name: o.namespace } }, { provider });
    const crd = new k8s.apiextensions.v1.CustomResourceDefinition(
      "rayclusters",
      {
        metadata: { name: "rayclusters.ray.io" },
        spec: {
          group: "ray.io",
          names: {
            kind: "RayCluster",
            plural: "rayclusters",
            singular: "raycluster",
            listKind: "RayClusterList",
          },
          scope: "Namespaced",
          versions: [
            {
              name: "v1",
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: "object", x_kubernetes_preserve_unknown_fields: true } },
            },
          ],
        },
      },
      { provider },
    );
    const template = { metadata: { labels: { app: "ray" } }, spec: hardenedPodSpec() };
    const rayCluster = (name: string, extra: Record<string, unknown>) =>
      new k8s.apiextensions.CustomResource(
        name,
        {
          apiVersion: "ray.io/v1",
          kind: "RayCluster",
          metadata: { name, namespace: ns.metadata.name },
          spec: {
            headGroupSpec: { rayStartParams: {}, template },
            workerGroupSpecs: [
              { groupName: "w", replicas: 1, minReplicas: 1, maxReplicas: 1, rayStartParams: {}, template },
            ],
            ...extra,
          },
        },
        { provider, dependsOn: [crd] },
      );
    rayCluster("ray-hardened", {});
    rayCluster("ray-newer", { authOptions: { mode: "token" } });
    return { namespace: ns.metadata.name };
  };
}
