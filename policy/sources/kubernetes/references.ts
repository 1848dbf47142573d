/**
 * Pods whose fields come from another object, resolved from the objects of the same input as the controllers
 * resolve them; what the input does not hold, or what a resolver fetches when the object runs, is named as
 * unresolved (the stack rule disallow-unjudged-references fails closed on it).
 *
 * - Tekton (tektoncd/pipeline v1.x pkg/reconciler/taskrun/resources/taskspec.go `GetTaskData`,
 *   pkg/reconciler/pipelinerun/resources/pipelineref.go): a TaskRun's `spec.taskRef` (kind Task; v1.x has no ClusterTask)
 *   gives its `taskSpec`, under the run's params and `podTemplate`; a PipelineRun's `spec.pipelineRef` its
 *   `pipelineSpec`, under the run's params, `taskRunTemplate` and `taskRunSpecs`; a pipeline task's `taskRef` its
 *   `taskSpec`, under the pipeline task's params. A step's `ref` names a StepAction (`resolveStepRef`): the step
 *   takes its `image`, `securityContext` and `workingDir`, and its `command`, `args`, `script`, `env` and
 *   `volumeMounts` where the StepAction sets them, with the StepAction's `$(params.*)` substituted from the step's
 *   `params` over the StepAction's defaults. A `resolver` (git, bundles, hub, cluster, http) or a v1beta1 `bundle`
 *   fetches the object when the run starts; a `taskRef` of another kind or `apiVersion` is a custom task, run by
 *   its own controller.
 * - Argo Workflows (argo-workflows v4 workflow/util/merge.go `JoinWorkflowSpec`, `MergeTo`): a Workflow's (or a
 *   CronWorkflow's `workflowSpec`'s) `workflowTemplateRef` gives the WorkflowTemplate's (ClusterWorkflowTemplate's
 *   with `clusterScope`) spec, under the workflow's own (a strategic merge: the workflow's fields win, templates and
 *   parameters merged by name). A `templateRef` (steps, DAG tasks, hooks) runs the named template of that
 *   WorkflowTemplate inside the calling workflow: its pod gets the caller's pod settings; every template of the
 *   referenced object is added to the caller, so templates it calls by name are judged too.
 * - Argo Rollouts (a Rollout's `workloadRef`, analysis templates, Services): references-rollouts.ts; a KEDA
 *   ScaledObject's `scaleTargetRef`: references-keda.ts.
 * A referenced object is looked up by kind and `metadata.name`, in the referencing object's namespace (an object
 * that names none matches any: the namespace is chosen when the set is applied).
 */
import { isUnknown } from "../../workload";
import { at, field, isObj, items, join, str } from "../lenient";
import { strategicMerge } from "./rebuild";
import { eventBindingWorkflow, recordInto, withEnums } from "./references-argo-events";
import { kedaReferences } from "./references-keda";
import { ROLLOUTS_REF_KINDS, rolloutsReferences } from "./references-rollouts";
import { tekton } from "./references-tekton";
import { parseKubeType } from "./sites";

type Obj = Record<string, unknown>;

/** An object of the input set, by kind and name. */
export interface SetObject {
  readonly group: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace: string | undefined;
  readonly props: unknown;
}

/** The objects of a set that references may name. */
export class RefIndex {
  private readonly objects: SetObject[] = [];
  constructor(resources: readonly { type: string; props: unknown }[]) {
    for (const r of resources) {
      const t = parseKubeType(r.type);
      const name = str(at(r.props, "metadata.name"));
      if (t === undefined || typeof name !== "string" || name === "") continue;
      const ns = str(at(r.props, "metadata.namespace"));
      this.objects.push({
        group: t.group,
        kind: t.kind,
        name,
        namespace: typeof ns === "string" && ns !== "" ? ns : undefined,
        props: r.props,
      });
    }
  }

  /** The object of that kind and name in `namespace` (undefined: any), preferring one in that very namespace. */
  find(group: string, kind: string, name: string, namespace: string | undefined): SetObject | undefined {
    const all = this.objects.filter((o) => o.group === group && o.kind === kind && o.name === name);
    return (
      all.find((o) => o.namespace === namespace) ??
      all.find((o) => o.namespace === undefined || namespace === undefined)
    );
  }
}

/** One part of the resolved object taken from another: its path in the resolved props, and what it is. */
export interface Used {
  readonly at: string;
  readonly from: string;
  /** Where the reference is written in the referencing object. */
  readonly ref: string;
}

export interface Resolution {
  /** The referencing object with what it references put in place. */
  readonly props: unknown;
  readonly used: readonly Used[];
  /** References the input cannot answer: each fails closed. */
  readonly unresolved: readonly { readonly path: string; readonly reason: string }[];
  /** References not known yet (a preview's unknowns). */
  readonly unknown: readonly string[];
  /** The type the resolved props are judged as, when not the referencing object's (a binding's Workflow). */
  readonly type?: string;
}

export class Resolver {
  readonly used: Used[] = [];
  readonly unresolved: { path: string; reason: string }[] = [];
  readonly unknown: string[] = [];
  constructor(
    readonly index: RefIndex,
    readonly namespace: string | undefined,
  ) {}

  /** The name a reference gives, or undefined (recorded why). */
  name(ref: unknown, path: string, what: string): string | undefined {
    const raw = field(ref, "name");
    if (isUnknown(ref) || isUnknown(raw)) {
      this.unknown.push(path);
      return undefined;
    }
    const name = str(raw);
    if (typeof name !== "string" || name === "") {
      this.unresolved.push({ path, reason: `names no ${what}: what it runs cannot be read` });
      return undefined;
    }
    if (/\$\(|\{\{|\$\{/.test(name)) {
      this.unresolved.push({
        path: join(path, "name"),
        reason: `names its ${what} with a parameter (${name}): which object runs is chosen when it runs`,
      });
      return undefined;
    }
    return name;
  }

  /** A remote reference (a resolver or a bundle): never in the input. */
  remote(ref: unknown, path: string, what: string): boolean {
    const resolver = field(ref, "resolver");
    if (resolver !== undefined && resolver !== null && resolver !== "") {
      this.unresolved.push({
        path: join(path, "resolver"),
        reason: `fetches its ${what} with the ${JSON.stringify(resolver)} resolver when it runs: what it runs is never in the input`,
      });
      return true;
    }
    const bundle = field(ref, "bundle");
    if (bundle !== undefined && bundle !== null && bundle !== "") {
      this.unresolved.push({
        path: join(path, "bundle"),
        reason: `pulls its ${what} from the bundle ${JSON.stringify(bundle)} when it runs: what it runs is never in the input`,
      });
      return true;
    }
    return false;
  }

  lookup(group: string, kind: string, name: string, path: string, by: string): SetObject | undefined {
    const o = this.index.find(group, kind, name, this.namespace);
    if (o === undefined)
      this.unresolved.push({
        path,
        reason: `${by} ${kind} "${name}", which is not in the input: its pods cannot be judged (declare the ${kind} in the same input)`,
      });
    return o;
  }
}

/** Lists an Argo spec merges by `name` (WorkflowSpec `templates`, Arguments `parameters`). */
function byName(base: unknown, own: unknown): unknown {
  if (!Array.isArray(base) || !Array.isArray(own)) return own ?? base;
  const out = [...base];
  for (const o of own) {
    const i = out.findIndex((b) => isObj(b) && isObj(o) && b.name !== undefined && b.name === o.name);
    if (i < 0) out.push(o);
    else out[i] = strategicMerge(out[i], o);
  }
  return out;
}

/** A workflow spec joined with its WorkflowTemplate's (JoinWorkflowSpec: the workflow's fields win). */
function joinSpec(wft: unknown, wf: Obj): Obj {
  const { workflowTemplateRef: _r, ...own } = wf;
  const merged = strategicMerge(isObj(wft) ? wft : {}, own) as Obj;
  merged.templates = byName(field(wft, "templates"), own.templates);
  const params = byName(at(wft, "arguments.parameters"), at(own, "arguments.parameters"));
  if (params !== undefined)
    merged.arguments = { ...(isObj(merged.arguments) ? merged.arguments : {}), parameters: params };
  return merged;
}

/** Every `templateRef` in a value, with its path. */
function templateRefs(v: unknown, path: string, out: { ref: unknown; path: string }[]): void {
  if (Array.isArray(v)) {
    v.forEach((x, i) => {
      templateRefs(x, join(path, i), out);
    });
  } else if (isObj(v))
    for (const [k, x] of Object.entries(v)) {
      if (k === "templateRef" && x !== undefined && x !== null) out.push({ ref: x, path: join(path, k) });
      else templateRefs(x, join(path, k), out);
    }
}

function argo(kind: string, props: Obj, r: Resolver): Obj {
  const wfPath = kind === "CronWorkflow" ? "spec.workflowSpec" : "spec";
  const wf0 = at(props, wfPath);
  if (!isObj(wf0)) return props;
  let wf: Obj = wf0;
  const ref = wf.workflowTemplateRef;
  if ((kind === "Workflow" || kind === "CronWorkflow") && ref !== undefined && ref !== null) {
    const refPath = join(wfPath, "workflowTemplateRef");
    const k = field(ref, "clusterScope") === true ? "ClusterWorkflowTemplate" : "WorkflowTemplate";
    const name = r.name(ref, refPath, k);
    const wft =
      name === undefined ? undefined : r.lookup("argoproj.io", k, name, refPath, "takes its spec from");
    if (wft !== undefined) {
      const own = new Set(items(wf.templates).map((t) => field(t, "name")));
      wf = joinSpec(field(wft.props, "spec"), wf);
      r.used.push({ at: wfPath, from: `${k} "${name}" spec`, ref: refPath });
      // Templates the workflow does not name itself are the WorkflowTemplate's.
      items(wf.templates).forEach((t, i) => {
        if (!own.has(field(t, "name")))
          r.used.push({
            at: join(join(wfPath, "templates"), i),
            from: `${k} "${name}" spec.templates[${i}]`,
            ref: refPath,
          });
      });
    }
  }
  // Templates named by templateRef join the caller, with the templates of their object (called by name from them).
  const templates = [...items(wf.templates)];
  const added = new Set<string>();
  for (let i = -1; i < templates.length; i++) {
    const refs: { ref: unknown; path: string }[] = [];
    if (i < 0) templateRefs(wf.hooks, join(wfPath, "hooks"), refs);
    else templateRefs(templates[i], join(join(wfPath, "templates"), i), refs);
    for (const { ref: tr, path } of refs) {
      const k = field(tr, "clusterScope") === true ? "ClusterWorkflowTemplate" : "WorkflowTemplate";
      const name = r.name(tr, path, k);
      if (name === undefined || added.has(`${k}/${name}`)) continue;
      const wft = r.lookup("argoproj.io", k, name, path, "has a step that runs a template of");
      if (wft === undefined) continue;
      added.add(`${k}/${name}`);
      items(at(wft.props, "spec.templates")).forEach((t, j) => {
        r.used.push({
          at: join(join(wfPath, "templates"), templates.length),
          from: `${k} "${name}" spec.templates[${j}]`,
          ref: path,
        });
        templates.push(t);
      });
    }
  }
  if (templates.length > items(wf.templates).length || wf !== wf0) wf = { ...wf, templates };
  if (wf === wf0) return props;
  if (kind === "CronWorkflow") return { ...props, spec: { ...(props.spec as Obj), workflowSpec: wf } };
  return { ...props, spec: wf };
}

/** The object with its references resolved from `index`; undefined when it makes none this module reads. */
export function resolveReferences(type: string, props: unknown, index: RefIndex): Resolution | undefined {
  const t = parseKubeType(type);
  if (t === undefined || !isObj(props) || isUnknown(props)) return undefined;
  const ns = str(at(props, "metadata.namespace"));
  const r = new Resolver(index, typeof ns === "string" && ns !== "" ? ns : undefined);
  let out: Obj = props;
  if (t.group === "tekton.dev") out = tekton(t.kind, props, r);
  else if (
    t.group === "argoproj.io" &&
    ["Workflow", "WorkflowTemplate", "ClusterWorkflowTemplate", "CronWorkflow"].includes(t.kind)
  )
    out = argo(t.kind, props, r);
  else if (t.group === "argoproj.io" && ROLLOUTS_REF_KINDS.includes(t.kind))
    out = rolloutsReferences(t.kind, props, r);
  else if (t.group === "keda.sh") kedaReferences(t.kind, props, r);
  else if (t.group === "argoproj.io" && t.kind === "WorkflowEventBinding") {
    const wf = eventBindingWorkflow(props);
    if (wf === undefined) return undefined;
    const sub = new Resolver(index, r.namespace);
    out = withEnums(argo("Workflow", wf, sub));
    recordInto(r, sub);
    if (r.used.length === 0 && r.unresolved.length === 0 && r.unknown.length === 0) return undefined;
    const type = "kubernetes:argoproj.io/v1alpha1:Workflow";
    return { props: out, used: r.used, unresolved: r.unresolved, unknown: r.unknown, type };
  } else return undefined;
  if (r.used.length === 0 && r.unresolved.length === 0 && r.unknown.length === 0) return undefined;
  return { props: out, used: r.used, unresolved: r.unresolved, unknown: r.unknown };
}

/** A path of the resolved object, put back where the referenced object writes it. */
export function pathFrom(path: string | undefined, used: readonly Used[]): string | undefined {
  if (path === undefined) return undefined;
  const u = [...used]
    .sort((a, b) => b.at.length - a.at.length)
    .find((x) => path === x.at || path.startsWith(`${x.at}.`) || path.startsWith(`${x.at}[`));
  return u === undefined ? path : `${u.from}${path.slice(u.at.length)}`;
}
