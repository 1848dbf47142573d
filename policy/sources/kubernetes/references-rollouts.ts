/**
 * Argo Rollouts' references to other objects of the set (github.com/argoproj/argo-rollouts, the version
 * crds.generated.ts pins), resolved as the controller resolves them:
 *
 * - A Rollout's `spec.workloadRef` (rollout/templateref.go `Resolve`): the controller copies the pod template of the
 *   named object, looked up by group and kind in the rollout's namespace: a core PodTemplate's `template`, an apps
 *   Deployment's or ReplicaSet's `spec.template`; any other kind it refuses. The rollout's pods are that template,
 *   judged with the rollout's own settings; an object the set does not hold fails closed.
 * - The AnalysisTemplates (ClusterAnalysisTemplates with `clusterScope`) a Rollout's analysis and steps, an
 *   Experiment's `analyses` and an AnalysisTemplate's `templates` name (utils/analysis, rollout/analysis.go): the
 *   controller runs their metrics, Jobs among them, so each must be in the set, where it is judged as its own object.
 * - The Services a Rollout names (`canaryService`, `stableService`, `pingPong`, blue-green `activeService` and
 *   `previewService`; rollout/service.go): the controller patches their selector to the rollout's pods, and sets one
 *   on a Service that had none, so each must be in the set, where its exposure is judged.
 */
import { isUnknown } from "../../workload";
import { at, field, items, join, str } from "../lenient";
import type { Resolver } from "./references";

type Obj = Record<string, unknown>;

/** The kinds whose references this module resolves. */
export const ROLLOUTS_REF_KINDS: readonly string[] = [
  "Rollout",
  "Experiment",
  "AnalysisTemplate",
  "ClusterAnalysisTemplate",
];

/** The kinds a `workloadRef` may name (templateref.go `infoByGroupKind`): group, kind -> template path. */
const WORKLOADS: readonly { group: string; kind: string; template: string }[] = [
  { group: "core", kind: "PodTemplate", template: "template" },
  { group: "apps", kind: "Deployment", template: "spec.template" },
  { group: "apps", kind: "ReplicaSet", template: "spec.template" },
];

/** The group of an apiVersion as the controller parses it (`apps/v1` -> apps, `v1` -> the core group). */
function groupOf(apiVersion: string): string {
  const i = apiVersion.indexOf("/");
  return i < 0 ? "core" : apiVersion.slice(0, i);
}

/** A name written as a string (a Service's, a template's), looked up as `kind`; recorded when missing. */
function named(v: unknown, path: string, kind: string, by: string, r: Resolver): void {
  if (v === undefined || v === null || v === "") return;
  if (isUnknown(v)) {
    r.unknown.push(path);
    return;
  }
  const name = str(v);
  if (typeof name !== "string") {
    r.unresolved.push({ path, reason: `names no ${kind}: ${JSON.stringify(v).slice(0, 40)} is not a name` });
    return;
  }
  r.lookup(kind === "Service" ? "core" : "argoproj.io", kind, name, path, by);
}

/** The analysis templates a list of references names (`templateName`, `clusterScope`). */
function analysisRefs(list: unknown, path: string, r: Resolver): void {
  items(list).forEach((ref, i) => {
    const p = join(join(path, i), "templateName");
    const kind = field(ref, "clusterScope") === true ? "ClusterAnalysisTemplate" : "AnalysisTemplate";
    const v = field(ref, "templateName");
    if (v === undefined || v === null || v === "")
      r.unresolved.push({ path: p, reason: `names no ${kind}: what it runs cannot be read` });
    else named(v, p, kind, "runs the metrics of", r);
  });
}

/** The workload a Rollout copies its pod template from, put at `spec.template`. */
function workload(props: Obj, r: Resolver): Obj {
  const ref = at(props, "spec.workloadRef");
  if (ref === undefined || ref === null) return props;
  const path = "spec.workloadRef";
  const apiVersion = field(ref, "apiVersion");
  const kind = field(ref, "kind");
  if (isUnknown(ref) || isUnknown(apiVersion) || isUnknown(kind)) {
    r.unknown.push(path);
    return props;
  }
  const group = typeof apiVersion === "string" ? groupOf(apiVersion) : "";
  const w = WORKLOADS.find((x) => x.group === group && x.kind === kind);
  if (w === undefined) {
    r.unresolved.push({
      path,
      reason: `names ${JSON.stringify(apiVersion)} ${JSON.stringify(kind)}, not a Deployment, ReplicaSet or PodTemplate the controller copies a pod template from: what runs cannot be read`,
    });
    return props;
  }
  const name = r.name(ref, path, w.kind);
  const o = name === undefined ? undefined : r.lookup(w.group, w.kind, name, path, "copies its pods from");
  if (o === undefined) return props;
  r.used.push({ at: "spec.template", from: `${w.kind} "${name}" ${w.template}`, ref: path });
  return { ...props, spec: { ...(props.spec as Obj), template: at(o.props, w.template) } };
}

/** The object with its workload put in place; every reference it makes checked against the set. */
export function rolloutsReferences(kind: string, props: Obj, r: Resolver): Obj {
  const spec = field(props, "spec");
  if (kind === "AnalysisTemplate" || kind === "ClusterAnalysisTemplate") {
    analysisRefs(field(spec, "templates"), "spec.templates", r);
    return props;
  }
  if (kind === "Experiment") {
    analysisRefs(field(spec, "analyses"), "spec.analyses", r);
    return props;
  }
  if (kind !== "Rollout") return props;
  const canary = "spec.strategy.canary";
  const blueGreen = "spec.strategy.blueGreen";
  const service = (p: string) => named(at(props, p), p, "Service", "switches the selector of", r);
  for (const p of ["canaryService", "stableService", "pingPong.pingService", "pingPong.pongService"])
    service(`${canary}.${p}`);
  for (const p of ["activeService", "previewService"]) service(`${blueGreen}.${p}`);
  analysisRefs(at(props, `${canary}.analysis.templates`), `${canary}.analysis.templates`, r);
  for (const p of ["prePromotionAnalysis", "postPromotionAnalysis"])
    analysisRefs(at(props, `${blueGreen}.${p}.templates`), `${blueGreen}.${p}.templates`, r);
  items(at(props, `${canary}.steps`)).forEach((step, i) => {
    const s = `${canary}.steps[${i}]`;
    analysisRefs(at(step, "analysis.templates"), `${s}.analysis.templates`, r);
    analysisRefs(at(step, "experiment.analyses"), `${s}.experiment.analyses`, r);
  });
  return workload(props, r);
}
