/**
 * Every place a pod spec can live, as a function from a plain pod spec to the resource that runs it: built-in
 * carriers, custom resources with a pod template, and custom resources whose pod is rebuilt (Argo, Tekton).
 */

type Obj = Record<string, unknown>;

export interface Placement {
  readonly name: string;
  readonly type: string;
  readonly build: (spec: Obj) => Obj;
}

const meta = { labels: { "sandbox.project": "demo" } };
const tpl = (spec: Obj) => ({ metadata: meta, spec });

/** Carriers that hold a whole pod template: the same spec must give the same verdict everywhere. */
export const TEMPLATE_PLACEMENTS: readonly Placement[] = [
  {
    name: "Deployment",
    type: "kubernetes:apps/v1:Deployment",
    build: (s) => ({ spec: { replicas: 1, template: tpl(s) } }),
  },
  {
    name: "StatefulSet",
    type: "kubernetes:apps/v1:StatefulSet",
    build: (s) => ({ spec: { template: tpl(s) } }),
  },
  { name: "DaemonSet", type: "kubernetes:apps/v1:DaemonSet", build: (s) => ({ spec: { template: tpl(s) } }) },
  { name: "Job", type: "kubernetes:batch/v1:Job", build: (s) => ({ spec: { template: tpl(s) } }) },
  {
    name: "CronJob",
    type: "kubernetes:batch/v1:CronJob",
    build: (s) => ({ spec: { schedule: "@hourly", jobTemplate: { spec: { template: tpl(s) } } } }),
  },
  {
    name: "Argo Rollout",
    type: "kubernetes:argoproj.io/v1alpha1:Rollout",
    build: (s) => ({ spec: { replicas: 2, template: tpl(s) } }),
  },
  {
    name: "OpenShift DeploymentConfig",
    type: "kubernetes:apps.openshift.io/v1:DeploymentConfig",
    build: (s) => ({ spec: { replicas: 1, template: tpl(s) } }),
  },
  {
    name: "Kruise CloneSet",
    type: "kubernetes:apps.kruise.io/v1alpha1:CloneSet",
    build: (s) => ({ spec: { template: tpl(s) } }),
  },
  {
    name: "Kruise Advanced StatefulSet",
    type: "kubernetes:apps.kruise.io/v1beta1:StatefulSet",
    build: (s) => ({ spec: { template: tpl(s) } }),
  },
  {
    name: "Kubeflow PyTorchJob",
    type: "kubernetes:kubeflow.org/v1:PyTorchJob",
    build: (s) => ({
      spec: {
        pytorchReplicaSpecs: { Master: { replicas: 1, restartPolicy: "OnFailure", template: tpl(s) } },
      },
    }),
  },
  {
    name: "KubeRay RayCluster",
    type: "kubernetes:ray.io/v1:RayCluster",
    build: (s) => ({ spec: { headGroupSpec: { rayStartParams: {}, template: tpl(s) } } }),
  },
  {
    name: "Flink FlinkDeployment",
    type: "kubernetes:flink.apache.org/v1beta1:FlinkDeployment",
    build: (s) => ({
      spec: {
        image: "flink:1.17",
        flinkVersion: "v1_17",
        podTemplate: { apiVersion: "v1", kind: "Pod", ...tpl(s) },
      },
    }),
  },
  {
    name: "Volcano Job",
    type: "kubernetes:batch.volcano.sh/v1alpha1:Job",
    build: (s) => ({
      spec: {
        minAvailable: 1,
        schedulerName: "volcano",
        tasks: [{ replicas: 1, name: "t", template: tpl(s) }],
      },
    }),
  },
  {
    name: "KEDA ScaledJob",
    type: "kubernetes:keda.sh/v1alpha1:ScaledJob",
    build: (s) => ({ spec: { jobTargetRef: { parallelism: 1, template: tpl(s) }, triggers: [] } }),
  },
  {
    name: "JobSet",
    type: "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet",
    build: (s) => ({ spec: { replicatedJobs: [{ name: "w", template: { spec: { template: tpl(s) } } }] } }),
  },
  {
    name: "Knative Configuration",
    type: "kubernetes:serving.knative.dev/v1:Configuration",
    build: (s) => ({ spec: { template: tpl(s) } }),
  },
  {
    name: "Knative Revision",
    type: "kubernetes:serving.knative.dev/v1:Revision",
    build: (s) => ({ spec: s }),
  },
  {
    name: "agent-sandbox Sandbox",
    type: "kubernetes:agents.x-k8s.io/v1beta1:Sandbox",
    build: (s) => ({ spec: { podTemplate: tpl(s) } }),
  },
];

/**
 * Argo Workflows: the workflow carries the pod-level settings it has fields for, the template its containers, and
 * every other pod field goes through a `podSpecPatch` (a JSON string), as Argo's users write it.
 */
export function argoWorkflow(s: Obj): Obj {
  const {
    containers,
    initContainers,
    securityContext,
    hostNetwork,
    volumes,
    automountServiceAccountToken,
    ...rest
  } = s;
  const [main, ...sidecars] = (containers as Obj[] | undefined) ?? [];
  const { name: _name, ...mainRest } = main ?? {};
  return {
    metadata: { generateName: "hello-" },
    spec: {
      entrypoint: "main",
      ...(hostNetwork === undefined ? {} : { hostNetwork }),
      ...(securityContext === undefined ? {} : { securityContext }),
      ...(automountServiceAccountToken === undefined ? {} : { automountServiceAccountToken }),
      ...(volumes === undefined ? {} : { volumes }),
      templates: [
        { name: "entry", steps: [[{ name: "run", template: "main" }]] },
        {
          name: "main",
          container: mainRest,
          ...(sidecars.length > 0 ? { sidecars } : {}),
          ...(initContainers === undefined ? {} : { initContainers }),
          ...(Object.keys(rest).length > 0 ? { podSpecPatch: JSON.stringify(rest) } : {}),
        },
      ],
    },
  };
}
