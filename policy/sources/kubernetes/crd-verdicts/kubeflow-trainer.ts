/**
 * The verdict of every field of Kubeflow Trainer's kinds (github.com/kubeflow/trainer/v2, the version
 * crds.generated.ts pins: pkg/apis/trainer/v1alpha1 TrainJob, TrainingRuntime, ClusterTrainingRuntime; a runtime's
 * template is a JobSet spec of sigs.k8s.io/jobset), keyed `<Kind>.<path under spec>`. Reasons from the operator's
 * own source (pkg/runtime/core/trainingruntime.go, pkg/runtime/framework/plugins: jobset, torch, mpi, coscheduling).
 * A runtime's jobs are pod carriers (carriers.ts reads `spec.template.spec.replicatedJobs[].template`); a TrainJob
 * runs the pods of the runtime it names, judged as its own object, and what it changes in them is refused unless
 * the rules read it. A judged field's `hostile` is a `spec` fragment laid over a hardened object of the kind;
 * test/policy/sources/kubernetes/crd-verdicts.test.ts proves one of its rules refuses it.
 */
import { inert, judged, refused, type Verdict, type VerdictTable } from "../../verdict";

const PRIV = "sandbox-disallow-privileged";

const LIFECYCLE = "when the JobSet's jobs start, succeed, fail, restart or are deleted; it opens nothing";

/** The verdicts of a runtime (TrainingRuntime, ClusterTrainingRuntime). */
function runtime(kind: string): Record<string, Verdict> {
  const jobs = `${kind}.template.spec.replicatedJobs`;
  const privileged = {
    template: {
      spec: {
        replicatedJobs: [
          {
            template: {
              spec: { template: { spec: { containers: [{ securityContext: { privileged: true } }] } } },
            },
          },
        ],
      },
    },
  };
  return {
    [`${kind}.mlPolicy`]: inert("how many nodes and processes the training runs; copies of the judged pods"),
    [`${kind}.mlPolicy.torch.elasticPolicy.metrics`]: refused(
      "the metrics an autoscaler scales the training's nodes by: replicas past those judged",
    ),
    [`${kind}.mlPolicy.mpi`]: refused(
      "the MPI plugin makes an SSH key Secret and mounts it, with its own variables, in every node's pod, and may add a launcher: volumes and a Secret no rule reads",
    ),
    [`${kind}.podGroupPolicy`]: inert(
      "gang scheduling of the training's pods; every node runs the same walls",
    ),
    [`${kind}.template`]: judged([PRIV], privileged),
    [`${kind}.template.metadata`]: refused(
      "the labels and annotations the trainer writes on the JobSet it makes, which passes them on; no rule reads them there",
    ),
    [`${kind}.template.spec`]: judged([PRIV], privileged),
    [jobs]: judged([PRIV], privileged),
    [`${jobs}[].template`]: judged([PRIV], privileged),
    [`${jobs}[].name`]: inert("a name"),
    [`${jobs}[].replicas`]: inert("how many copies of the judged job run"),
    [`${jobs}[].dependsOn`]: inert("which job starts after which; it opens nothing"),
    [`${kind}.template.spec.network`]: inert(
      "a headless Service (clusterIP None) giving the pods DNS names inside the cluster; no port or address beyond the pods' own",
    ),
    [`${kind}.template.spec.successPolicy`]: inert(LIFECYCLE),
    [`${kind}.template.spec.failurePolicy`]: inert(LIFECYCLE),
    [`${kind}.template.spec.startupPolicy`]: inert(LIFECYCLE),
    [`${kind}.template.spec.suspend`]: inert(LIFECYCLE),
    [`${kind}.template.spec.ttlSecondsAfterFinished`]: inert(LIFECYCLE),
    [`${kind}.template.spec.coordinator`]: inert("which pod's address the others are told; it opens nothing"),
    [`${kind}.template.spec.managedBy`]: inert(
      "which controller reconciles the JobSet; the pods are the same spec",
    ),
  };
}

const ADDS = (what: string) =>
  `the trainer puts ${what} into the runtime's pods, outside the templates the rules judged`;

export const KUBEFLOW_TRAINER_VERDICTS: VerdictTable = {
  ...runtime("TrainingRuntime"),
  ...runtime("ClusterTrainingRuntime"),

  "TrainJob.runtimeRef": inert("it names the runtime whose pods run, judged as its own object"),
  "TrainJob.initializer": refused(
    ADDS("the initializers' storage address, variables and credentials Secret (`secretRef`)"),
  ),
  "TrainJob.trainer": inert("what the trainer node runs; each of its settings has its own verdict"),
  "TrainJob.trainer.image": refused(
    "the trainer node runs this image in place of the runtime's, in a pod no rule sees whole (an object that names an image with no pod spec fails closed too)",
  ),
  "TrainJob.trainer.command": inert(
    "the trainer node's command, run in the runtime's judged pod under its walls",
  ),
  "TrainJob.trainer.args": inert(
    "the trainer node's arguments, run in the runtime's judged pod under its walls",
  ),
  "TrainJob.trainer.env": refused(ADDS("these variables")),
  "TrainJob.trainer.numNodes": inert("how many copies of the judged node pod run"),
  "TrainJob.trainer.numProcPerNode": inert("how many processes each judged node pod runs"),
  "TrainJob.trainer.resourcesPerNode": refused(
    ADDS("these requests and limits (devices among them) in place of the template's"),
  ),
  "TrainJob.labels": refused(ADDS("these labels (through the JobSet)")),
  "TrainJob.annotations": refused(ADDS("these annotations (through the JobSet)")),
  "TrainJob.podSpecOverrides": refused(
    ADDS("volumes, containers' variables and mounts, a service account and scheduling"),
  ),
  "TrainJob.suspend": inert("the trainer deletes the pods while it is true"),
  "TrainJob.managedBy": inert("which controller reconciles the object (the trainer or Kueue's MultiKueue)"),
};
