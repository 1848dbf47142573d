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
 * - Tekton (tekton.dev Task, ClusterTask; Pipeline and PipelineRun `tasks[]/finally[].taskSpec`; TaskRun
 *   `taskSpec`): one pod per task, a container per step (`stepTemplate` merged under each step; v1
 *   `computeResources` is the container's `resources`) plus `sidecars`, `volumes`; a run's `podTemplate`
 *   (TaskRun `spec.podTemplate`; PipelineRun v1 `spec.taskRunTemplate.podTemplate`, v1beta1 `spec.podTemplate`,
 *   per task `taskRunSpecs[].podTemplate`) gives the pod's settings (tekton.dev/docs/pipelines/podtemplates).
 * - Spark operator and KubeVirt: crd-spark-kubevirt.ts.
 */
import { isUnknown, UNKNOWN } from "../../workload";
import { at, field, isObj, items, join } from "../lenient";
import { kubevirtSites, sparkSites } from "./crd-spark-kubevirt";
import {
  listPaths,
  type Part,
  PathMapper,
  parsePatch,
  partsOf,
  putField,
  putList,
  rebuilt,
  strategicMerge,
  unknownSite,
} from "./rebuild";
import type { KubeType, PodSite } from "./sites";

type Obj = Record<string, unknown>;

/** Rebuilt pods of a custom resource this module knows, or undefined for any other type. */
export function synthesizedSites(t: KubeType, props: unknown): PodSite[] | undefined {
  if (t.group === "argoproj.io") {
    if (["Workflow", "WorkflowTemplate", "ClusterWorkflowTemplate"].includes(t.kind))
      return argoSites(props, "spec");
    if (t.kind === "CronWorkflow") return argoSites(props, "spec.workflowSpec");
  }
  if (t.group === "tekton.dev") return tektonSites(t.kind, props);
  if (t.group === "sparkoperator.k8s.io") return sparkSites(t.kind, props);
  if (t.group === "kubevirt.io" || t.group === "pool.kubevirt.io") return kubevirtSites(t.kind, props);
  return undefined;
}

/** Applies a string pod spec patch over a rebuilt pod; returns why it could not be read, if so. */
function applyPatch(
  spec: Obj,
  raw: unknown,
  patchPath: string,
  mapper: PathMapper,
  unreadable: { path: string; reason: string }[],
): Obj {
  if (isUnknown(raw)) {
    unreadable.push({ path: patchPath, reason: "a podSpecPatch not known yet" });
    return spec;
  }
  const parsed = parsePatch(raw);
  if (parsed === undefined) return spec;
  if ("reason" in parsed) {
    unreadable.push({ path: patchPath, reason: parsed.reason });
    return spec;
  }
  const merged = strategicMerge(spec, parsed.value) as Obj;
  for (const key of Object.keys(parsed.value)) {
    if (key === "containers" || key === "initContainers" || key === "volumes") {
      const before = items(spec[key]).map((v, i) => ({
        name: isObj(v) ? v.name : undefined,
        path: mapper.map()(`spec.${key}[${i}]`),
      }));
      listPaths(merged[key], before, patchPath).forEach((p, i) => {
        mapper.add(`spec.${key}[${i}]`, p);
      });
    } else mapper.add(`spec.${key}`, patchPath);
  }
  return merged;
}

function argoSites(props: unknown, wfPath: string): PodSite[] {
  const wf = at(props, wfPath);
  if (isUnknown(wf)) return unknownSite(props, wfPath);
  const templatesPath = join(wfPath, "templates");
  const templates = field(wf, "templates");
  if (isUnknown(templates)) return unknownSite(props, templatesPath);
  const out: PodSite[] = [];
  items(templates).forEach((tpl, i) => {
    const tPath = join(templatesPath, i);
    const main: Part[] = [];
    const container = field(tpl, "container");
    const script = field(tpl, "script");
    if (container !== undefined)
      main.push({ value: named(container, "main"), path: join(tPath, "container") });
    else if (script !== undefined) main.push({ value: named(script, "main"), path: join(tPath, "script") });
    else main.push(...partsOf(at(tpl, "containerSet.containers"), join(tPath, "containerSet.containers")));
    if (main.length === 0) return; // steps, dag, resource, suspend, http: no pod of the user's
    const mapper = new PathMapper(wfPath);
    const spec: Obj = { restartPolicy: "Never" }; // the executor never restarts a step's pod
    putList(
      spec,
      "containers",
      [...main, ...partsOf(field(tpl, "sidecars"), join(tPath, "sidecars"))],
      mapper,
    );
    putList(
      spec,
      "initContainers",
      partsOf(field(tpl, "initContainers"), join(tPath, "initContainers")),
      mapper,
    );
    for (const key of ["securityContext", "automountServiceAccountToken"])
      putField(
        spec,
        key,
        [
          { value: field(tpl, key), path: join(tPath, key) },
          { value: field(wf, key), path: join(wfPath, key) },
        ],
        mapper,
      );
    putField(
      spec,
      "hostNetwork",
      [{ value: field(wf, "hostNetwork"), path: join(wfPath, "hostNetwork") }],
      mapper,
    );
    putList(
      spec,
      "volumes",
      [
        ...partsOf(field(wf, "volumes"), join(wfPath, "volumes")),
        ...partsOf(field(tpl, "volumes"), join(tPath, "volumes")),
      ],
      mapper,
    );
    const unreadable: { path: string; reason: string }[] = [];
    let patched = applyPatch(
      spec,
      field(wf, "podSpecPatch"),
      join(wfPath, "podSpecPatch"),
      mapper,
      unreadable,
    );
    patched = applyPatch(
      patched,
      field(tpl, "podSpecPatch"),
      join(tPath, "podSpecPatch"),
      mapper,
      unreadable,
    );
    const metadata = strategicMerge(field(wf, "podMetadata") ?? {}, field(tpl, "metadata") ?? {}) as Obj;
    out.push(
      rebuilt({ spec: patched, metadata }, tPath, mapper, unreadable.length > 0 ? { unreadable } : {}),
    );
  });
  return out;
}

function named(c: unknown, name: string): unknown {
  if (!isObj(c)) return c;
  const { source: _source, ...rest } = c; // a script's source is what it runs, like args
  return { name, ...rest };
}

/** Tekton's container for one step: the step template under it, `computeResources` as `resources`. */
function tektonStep(step: unknown, template: unknown): unknown {
  if (!isObj(step)) return step;
  const { script: _script, computeResources, ...rest } = step;
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
): PodSite {
  const task = taskPath === undefined ? undefined : at(props, taskPath);
  const mapper = new PathMapper(taskPath ?? podTemplate?.path ?? "spec");
  const spec: Obj = { restartPolicy: "Never" };
  if (taskPath !== undefined) {
    const template = field(task, "stepTemplate");
    const steps = partsOf(field(task, "steps"), join(taskPath, "steps")).map((p) => ({
      ...p,
      value: tektonStep(p.value, template),
    }));
    putList(
      spec,
      "containers",
      [...steps, ...partsOf(field(task, "sidecars"), join(taskPath, "sidecars"))],
      mapper,
    );
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
  return rebuilt({ spec }, where, mapper);
}

function tektonSites(kind: string, props: unknown): PodSite[] | undefined {
  if (isUnknown(field(props, "spec"))) return unknownSite(props, "spec");
  if (kind === "Task" || kind === "ClusterTask") return [tektonPod(props, "spec", undefined, "spec")];
  if (kind === "TaskRun") {
    const pt = field(field(props, "spec"), "podTemplate");
    const task = at(props, "spec.taskSpec") === undefined ? undefined : "spec.taskSpec";
    if (task === undefined && pt === undefined) return undefined; // a taskRef: that Task is judged itself
    return [
      tektonPod(props, task, pt === undefined ? undefined : { value: pt, path: "spec.podTemplate" }, "spec"),
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
  const out: PodSite[] = [];
  for (const list of ["tasks", "finally"]) {
    items(at(props, join(pipelinePath, list))).forEach((task, i) => {
      const tPath = `${join(pipelinePath, list)}[${i}]`;
      if (field(task, "taskSpec") === undefined) return; // a taskRef: that Task is judged itself
      out.push(tektonPod(props, join(tPath, "taskSpec"), perTask(field(task, "name")), tPath));
    });
  }
  if (out.length === 0 && runTemplate !== undefined)
    out.push(tektonPod(props, undefined, runTemplate, runTemplate.path));
  return out.length > 0 ? out : undefined;
}
