/**
 * Custom resources whose pods are not written as a pod template: the pod their controller will create is rebuilt
 * from the parts the resource writes, with every path mapped back to where it is written.
 *
 * - Argo Workflows (argoproj.io Workflow, WorkflowTemplate, ClusterWorkflowTemplate; CronWorkflow under
 *   `spec.workflowSpec`): one pod per template with `container`, `script` or `containerSet`; the main container is
 *   `main`; `initContainers` and `sidecars` join it; pod settings come from the template, else the workflow
 *   (`securityContext`, `automountServiceAccountToken`; `hostNetwork` and `volumes` from the workflow, template
 *   `volumes` added); `podSpecPatch` (workflow, then template) is a strategic merge patch over the pod
 *   (argo-workflows docs/fields.md, WorkflowSpec and Template).
 * - Tekton (tekton.dev Task; Pipeline and PipelineRun `tasks[]/finally[].taskSpec`; TaskRun
 *   `taskSpec`): one pod per task, a container per step (`stepTemplate` merged under each step; v1
 *   `computeResources` is the container's `resources`) plus `sidecars`, `volumes`; a run's `podTemplate`
 *   (TaskRun `spec.podTemplate`; PipelineRun v1 `spec.taskRunTemplate.podTemplate`, v1beta1 `spec.podTemplate`,
 *   per task `taskRunSpecs[].podTemplate`) gives the pod's settings (tekton.dev/docs/pipelines/podtemplates).
 * - Spark operator and KubeVirt: crd-spark-kubevirt.ts; Argo Rollouts' analysis jobs: crd-rollouts.ts; a KEDA
 *   ScaledJob's Jobs (their restart policy and copies): crd-keda.ts.
 */
import { isUnknown, UNKNOWN } from "../../workload";
import { at, field, isObj, items, join } from "../lenient";
import { argoSites, withSource } from "./crd-argo";
import { scaledJobSites } from "./crd-keda";
import { analysisSites } from "./crd-rollouts";
import { kubevirtSites, sparkSites } from "./crd-spark-kubevirt";
import {
  type Part,
  PathMapper,
  partsOf,
  putField,
  putList,
  rebuilt,
  strategicMerge,
  unknownSite,
} from "./rebuild";
import type { KubeType, PodSite } from "./sites";
import { sealPlaceholders, substituteAll, tektonResultPaths, tektonValues } from "./templating";

type Obj = Record<string, unknown>;

/** Rebuilt pods of a custom resource this module knows, or undefined for any other type. */
export function synthesizedSites(t: KubeType, props: unknown): PodSite[] | undefined {
  if (t.group === "argoproj.io") {
    if (t.kind === "Workflow") return argoSites(props, "spec", false);
    if (t.kind === "WorkflowTemplate" || t.kind === "ClusterWorkflowTemplate")
      return argoSites(props, "spec", true);
    if (t.kind === "CronWorkflow") return argoSites(props, "spec.workflowSpec", false);
    const analysis = analysisSites(t.kind, props); // Argo Rollouts' job metrics
    if (analysis !== undefined) return analysis;
  }
  if (t.group === "tekton.dev") return tektonSites(t.kind, props);
  if (t.group === "keda.sh" && t.kind === "ScaledJob") return scaledJobSites(props);
  if (t.group === "sparkoperator.k8s.io") return sparkSites(t.kind, props);
  if (t.group === "kubevirt.io" || t.group === "pool.kubevirt.io") return kubevirtSites(t.kind, props);
  return undefined;
}

/** Tekton's container for one step or sidecar: the step template under it, `computeResources` as `resources`. */
function tektonStep(step: unknown, template: unknown): unknown {
  if (!isObj(step)) return step;
  const { computeResources, ...rest } = step;
  const own = computeResources === undefined ? rest : { ...rest, resources: computeResources };
  if (!isObj(template)) return own;
  const { computeResources: tr, ...tRest } = template;
  return strategicMerge(tr === undefined ? tRest : { ...tRest, resources: tr }, own);
}

/** One Tekton pod: a TaskSpec at `taskPath` (may be absent), under a run's pod template. */
function tektonPod(
  props: unknown,
  taskPath: string | undefined,
  podTemplate: Part | undefined,
  where: string,
  given?: { params: unknown; outer?: ReadonlyMap<string, string> },
): PodSite {
  const raw = taskPath === undefined ? undefined : at(props, taskPath);
  // Tekton substitutes each param's value (the run's or pipeline task's, else the default) before the pod is made.
  // Then the result paths (ApplyResults): files of the task's and each step's declared results.
  const task = tektonResultPaths(
    substituteAll(raw, "tekton", tektonValues(field(raw, "params"), given?.params, given?.outer)),
  );
  const mapper = new PathMapper(taskPath ?? podTemplate?.path ?? "spec");
  const spec: Obj = { restartPolicy: "Never" };
  if (taskPath !== undefined) {
    const template = field(task, "stepTemplate");
    const scripts: { index: number; path: string }[][] = [];
    const scripted = (p: Part, value: unknown): Part => {
      const s: { index: number; path: string }[] = [];
      scripts.push(s);
      return { ...p, value: withSource(value, undefined, p.path, "script", s) };
    };
    // A step that names a StepAction (`ref`) takes its image, command and securityContext from it: judged with it
    // where the set holds it (policy/stack/disallow-unjudged-references.ts), never as a step with no image.
    const steps = partsOf(field(task, "steps"), join(taskPath, "steps"))
      .filter((p) => field(p.value, "ref") === undefined || field(p.value, "ref") === null)
      .map((p) => scripted(p, tektonStep(p.value, template)));
    // A v1 sidecar names its requests and limits `computeResources` too (no step template under it).
    const sidecars = partsOf(field(task, "sidecars"), join(taskPath, "sidecars")).map((p) =>
      scripted(p, tektonStep(p.value, undefined)),
    );
    putList(spec, "containers", [...steps, ...sidecars], mapper);
    scripts.forEach((s, i) => {
      for (const x of s) mapper.add(`spec.containers[${i}].args[${x.index}]`, x.path);
    });
  }
  const pt = podTemplate?.value;
  for (const key of ["securityContext", "hostNetwork", "automountServiceAccountToken", "runtimeClassName"])
    putField(spec, key, [{ value: field(pt, key), path: join(podTemplate?.path ?? "", key) }], mapper);
  putList(
    spec,
    "volumes",
    [
      ...partsOf(field(task, "volumes"), join(taskPath ?? "", "volumes")),
      ...partsOf(field(pt, "volumes"), join(podTemplate?.path ?? "", "volumes")),
    ],
    mapper,
  );
  // The pod template's env goes into every step and sidecar, over theirs.
  const env = field(pt, "env");
  if (env !== undefined) spec.containers = items(spec.containers).map((c) => strategicMerge(c, { env }));
  if (isUnknown(task) || isUnknown(field(task, "steps"))) spec.containers = UNKNOWN;
  return rebuilt(sealPlaceholders({ spec }, "tekton", "Tekton"), where, mapper);
}

function tektonSites(kind: string, props: unknown): PodSite[] | undefined {
  if (isUnknown(field(props, "spec"))) return unknownSite(props, "spec");
  if (kind === "Task") return [tektonPod(props, "spec", undefined, "spec")];
  if (kind === "TaskRun") {
    const pt = field(field(props, "spec"), "podTemplate");
    const task = at(props, "spec.taskSpec") === undefined ? undefined : "spec.taskSpec";
    if (task === undefined && pt === undefined) return undefined; // a taskRef: that Task is judged itself
    return [
      tektonPod(props, task, pt === undefined ? undefined : { value: pt, path: "spec.podTemplate" }, "spec", {
        params: at(props, "spec.params"),
      }),
    ];
  }
  const pipelinePath =
    kind === "Pipeline" ? "spec" : kind === "PipelineRun" ? "spec.pipelineSpec" : undefined;
  if (pipelinePath === undefined) return undefined;
  const runTemplate: Part | undefined =
    kind !== "PipelineRun"
      ? undefined
      : at(props, "spec.taskRunTemplate.podTemplate") !== undefined
        ? { value: at(props, "spec.taskRunTemplate.podTemplate"), path: "spec.taskRunTemplate.podTemplate" }
        : at(props, "spec.podTemplate") !== undefined
          ? { value: at(props, "spec.podTemplate"), path: "spec.podTemplate" }
          : undefined;
  const perTask = (name: unknown): Part | undefined => {
    const i = items(at(props, "spec.taskRunSpecs")).findIndex((s) => field(s, "pipelineTaskName") === name);
    if (i < 0) return runTemplate;
    const base = `spec.taskRunSpecs[${i}]`;
    const key = at(props, `${base}.podTemplate`) !== undefined ? "podTemplate" : "taskPodTemplate";
    const own = at(props, `${base}.${key}`);
    return own === undefined
      ? runTemplate
      : { value: strategicMerge(runTemplate?.value ?? {}, own), path: `${base}.${key}` };
  };
  const pipelineValues = tektonValues(
    at(props, join(pipelinePath, "params")),
    kind === "PipelineRun" ? at(props, "spec.params") : undefined,
  );
  const out: PodSite[] = [];
  for (const list of ["tasks", "finally"]) {
    items(at(props, join(pipelinePath, list))).forEach((task, i) => {
      const tPath = `${join(pipelinePath, list)}[${i}]`;
      if (field(task, "taskSpec") === undefined) return; // a taskRef: that Task is judged itself
      out.push(
        tektonPod(props, join(tPath, "taskSpec"), perTask(field(task, "name")), tPath, {
          params: field(task, "params"),
          outer: pipelineValues,
        }),
      );
    });
  }
  if (out.length === 0 && runTemplate !== undefined)
    out.push(tektonPod(props, undefined, runTemplate, runTemplate.path));
  return out.length > 0 ? out : undefined;
}
