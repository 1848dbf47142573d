/**
 * The pods of Argo Rollouts' analysis kinds (argoproj.io AnalysisTemplate, ClusterAnalysisTemplate, AnalysisRun):
 * a metric whose provider is `job` makes the controller create a Job from `provider.job.spec`
 * (metricproviders/job newMetricJob: the spec as written, a label of its own added to the pod). Before that the
 * controller substitutes the run's arguments for `{{args.<name>}}` anywhere in the metric (utils/analysis
 * ResolveMetricArgs, fasttemplate with the tag trimmed of spaces, the value quoted into the metric's JSON): an
 * AnalysisRun's arguments are known (`spec.args[].value`); a template's are defaults the Rollout or Experiment that
 * runs it may replace, so its placeholders stay placeholders, judged by where they stand (templating.ts).
 *
 * The pod is read where it is written (no remap): the object is copied with the job's pod template sealed in place.
 */
import { isUnknown } from "../../workload";
import { field, isObj, items, str } from "../lenient";
import { unknownSite } from "./rebuild";
import type { PodSite } from "./sites";
import { sealPlaceholders, substituteAll } from "./templating";

/** The analysis kinds whose metrics may run Jobs. */
export const ANALYSIS_KINDS: readonly string[] = [
  "AnalysisTemplate",
  "ClusterAnalysisTemplate",
  "AnalysisRun",
];

/** `o` with the value at `keys` replaced by `value`, each object (or list) on the way copied. */
export function replaced(o: unknown, keys: readonly (string | number)[], value: unknown): unknown {
  const [k, ...rest] = keys;
  if (k === undefined) return value;
  if (typeof k === "number") {
    if (!Array.isArray(o)) return o;
    const out = [...o];
    out[k] = replaced(o[k], rest, value);
    return out;
  }
  if (!isObj(o)) return o;
  return { ...o, [k]: replaced(o[k], rest, value) };
}

/** An AnalysisRun's arguments with a value written in the run (`args.<name>` -> value). */
function runValues(spec: unknown): Map<string, string> {
  const out = new Map<string, string>();
  for (const a of items(field(spec, "args"))) {
    const name = str(field(a, "name"));
    const value = field(a, "value");
    if (typeof name === "string" && typeof value === "string") out.set(`args.${name}`, value);
  }
  return out;
}

/** The job pods of an analysis kind, or undefined for any other kind. */
export function analysisSites(kind: string, props: unknown): PodSite[] | undefined {
  if (!ANALYSIS_KINDS.includes(kind)) return undefined;
  const spec = field(props, "spec");
  if (isUnknown(spec) || isUnknown(field(spec, "metrics"))) return unknownSite(props, "spec");
  const values = kind === "AnalysisRun" ? runValues(spec) : new Map<string, string>();
  const out: PodSite[] = [];
  items(field(spec, "metrics")).forEach((metric, i) => {
    const job = field(field(metric, "provider"), "job");
    if (job === undefined || job === null) return;
    const jobPath = `spec.metrics[${i}].provider.job.spec`;
    const template = field(field(job, "spec"), "template");
    const sealed =
      isObj(template) && !isUnknown(template)
        ? sealPlaceholders(substituteAll(template, "argo", values), "argo", "rollout analysis")
        : template;
    const keys = ["spec", "metrics", i, "provider", "job", "spec", "template"];
    out.push({
      props: template === sealed ? props : replaced(props, keys, sealed),
      specPath: `${jobPath}.template.spec`,
      metaPath: `${jobPath}.template.metadata`,
      jobPath,
      replicasPath: `${jobPath}.parallelism`,
      controller: false,
      defaultAlways: false,
      where: `spec.metrics[${i}]`,
    });
  });
  return out;
}
