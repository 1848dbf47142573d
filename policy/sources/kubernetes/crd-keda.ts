/**
 * The pods of a KEDA ScaledJob (keda.sh, github.com/kedacore/keda/v2, the version crds.generated.ts pins;
 * pkg/scaling/executor/scale_jobs.go): each Job the operator creates is `spec.jobTargetRef` as written, its pod's
 * restartPolicy set to OnFailure when unset (`generateJobs`); it keeps at most maxReplicaCount Jobs unfinished at
 * once (100 when unset; minReplicaCount Jobs when that is more, `getScalingDecision`), each running `parallelism`
 * pods (1 when unset). The pod's copies are those Jobs times their pods, which the budget bound prices.
 *
 * The pod is read where it is written (no remap): the object is copied with the restart policy the operator sets.
 */
import { isUnknown, UNKNOWN, type Val } from "../../workload";
import { field, isObj, num } from "../lenient";
import { replaced } from "./crd-rollouts";
import type { PodSite } from "./sites";

const JOB = "spec.jobTargetRef";

/** The most pods a ScaledJob runs at once: its most Jobs times each Job's parallelism. */
function copies(spec: unknown): Val<number> {
  const parts: Val<number>[] = [
    num(field(spec, "maxReplicaCount")) ?? 100,
    num(field(spec, "minReplicaCount")) ?? 0,
    num(field(field(spec, "jobTargetRef"), "parallelism")) ?? 1,
  ];
  if (parts.some(isUnknown)) return UNKNOWN;
  const [max, min, parallelism] = parts;
  if (typeof max !== "number") return max;
  if (typeof min !== "number") return min;
  if (typeof parallelism !== "number") return parallelism;
  return Math.max(max, min) * parallelism;
}

/** The pod of a ScaledJob, or undefined when it writes none. */
export function scaledJobSites(props: unknown): PodSite[] | undefined {
  const spec = field(props, "spec");
  const ref = field(spec, "jobTargetRef");
  const template = field(ref, "template");
  if (
    !isUnknown(props) &&
    !isUnknown(spec) &&
    !isUnknown(ref) &&
    (template === undefined || template === null)
  )
    return undefined;
  const podSpec = field(template, "spec");
  const restart = field(podSpec, "restartPolicy");
  const unset =
    isObj(podSpec) && !isUnknown(podSpec) && (restart === undefined || restart === null || restart === "");
  return [
    {
      props: unset
        ? replaced(props, ["spec", "jobTargetRef", "template", "spec", "restartPolicy"], "OnFailure")
        : props,
      specPath: `${JOB}.template.spec`,
      metaPath: `${JOB}.template.metadata`,
      jobPath: JOB,
      replicas: isUnknown(props) || isUnknown(spec) ? UNKNOWN : copies(spec),
      controller: false,
      defaultAlways: false,
      where: `${JOB}.template`,
    },
  ];
}
