/**
 * Tekton's references (references.ts): a TaskRun's `taskRef`, a PipelineRun's `pipelineRef`, a pipeline task's
 * `taskRef` and a step's StepAction `ref`, resolved from the objects of the same input as tektoncd/pipeline resolves
 * them (the rules are in references.ts's header).
 */
import { field, isObj, join, str } from "../lenient";
import type { Resolver } from "./references";
import { substituteAll, tektonValues } from "./templating";

type Obj = Record<string, unknown>;

/** A Tekton step with the StepAction it names merged in (resolveStepRef). */
function stepFromAction(step: Obj, action: unknown): Obj {
  const spec = field(action, "spec");
  const values = tektonValues(field(spec, "params"), step.params);
  const sa = substituteAll(spec, "tekton", values);
  const { ref: _r, params: _p, ...out } = step;
  const set = (k: string, nonEmpty: boolean) => {
    const v = field(sa, k);
    if (!nonEmpty || (Array.isArray(v) ? v.length > 0 : v !== undefined && v !== "")) out[k] = v;
  };
  for (const k of ["image", "securityContext", "workingDir"]) set(k, false);
  for (const k of ["command", "args", "script", "volumeMounts"]) set(k, true);
  if (field(sa, "env") !== undefined) out.env = field(sa, "env");
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
  return out;
}

/** A Tekton task spec with each step's StepAction put in place. */
function tektonSteps(task: unknown, path: string, r: Resolver): unknown {
  if (!isObj(task) || !Array.isArray(task.steps)) return task;
  const steps = task.steps.map((step, i) => {
    const ref = field(step, "ref");
    if (!isObj(step) || ref === undefined || ref === null) return step;
    const refPath = join(join(join(path, "steps"), i), "ref");
    if (r.remote(ref, refPath, "StepAction")) return step;
    const name = r.name(ref, refPath, "StepAction");
    const action =
      name === undefined
        ? undefined
        : r.lookup("tekton.dev", "StepAction", name, refPath, "has a step that runs");
    if (action === undefined) return step;
    r.used.push({ at: join(join(path, "steps"), i), from: `StepAction "${name}" spec`, ref: refPath });
    return stepFromAction(step, action.props);
  });
  return { ...task, steps };
}

/** A Tekton `taskRef` resolved to the Task's spec (steps resolved too), or undefined. */
function tektonTask(ref: unknown, refPath: string, specPath: string, r: Resolver): unknown {
  if (r.remote(ref, refPath, "Task")) return undefined;
  const kind = str(field(ref, "kind"));
  const apiVersion = str(field(ref, "apiVersion"));
  const k = kind === undefined || kind === "" ? "Task" : kind;
  if (k !== "Task" || (typeof apiVersion === "string" && !apiVersion.startsWith("tekton.dev/"))) {
    r.unresolved.push({
      path: refPath,
      reason: `names a custom task (${String(apiVersion ?? "")} ${String(k)}): its own controller, not Tekton's, decides what runs`,
    });
    return undefined;
  }
  const name = r.name(ref, refPath, k);
  if (name === undefined) return undefined;
  const task = r.lookup("tekton.dev", k, name, refPath, "runs");
  if (task === undefined) return undefined;
  r.used.push({ at: specPath, from: `${k} "${name}" spec`, ref: refPath });
  return tektonSteps(field(task.props, "spec"), specPath, r);
}

/** A Tekton pipeline spec with each task's `taskRef` and steps' `ref` put in place. */
function tektonPipeline(pipeline: unknown, path: string, r: Resolver): unknown {
  if (!isObj(pipeline)) return pipeline;
  const out: Obj = { ...pipeline };
  for (const list of ["tasks", "finally"]) {
    if (!Array.isArray(pipeline[list])) continue;
    out[list] = (pipeline[list] as unknown[]).map((task, i) => {
      const tPath = join(join(path, list), i);
      if (!isObj(task)) return task;
      if (task.pipelineRef !== undefined || task.pipelineSpec !== undefined) {
        r.unresolved.push({
          path: join(tPath, task.pipelineRef !== undefined ? "pipelineRef" : "pipelineSpec"),
          reason: "runs a pipeline inside a pipeline, whose tasks are not read",
        });
        return task;
      }
      if (task.taskSpec !== undefined)
        return { ...task, taskSpec: tektonSteps(task.taskSpec, join(tPath, "taskSpec"), r) };
      if (task.taskRef === undefined || task.taskRef === null) return task;
      const spec = tektonTask(task.taskRef, join(tPath, "taskRef"), join(tPath, "taskSpec"), r);
      if (spec === undefined) return task;
      const { taskRef: _t, ...rest } = task;
      return { ...rest, taskSpec: spec };
    });
  }
  return out;
}

export function tekton(kind: string, props: Obj, r: Resolver): Obj {
  const spec = props.spec;
  if (!isObj(spec)) return props;
  if (kind === "Task") return { ...props, spec: tektonSteps(spec, "spec", r) };
  if (kind === "Pipeline") return { ...props, spec: tektonPipeline(spec, "spec", r) };
  if (kind === "TaskRun") {
    if (spec.taskSpec !== undefined)
      return { ...props, spec: { ...spec, taskSpec: tektonSteps(spec.taskSpec, "spec.taskSpec", r) } };
    if (spec.taskRef === undefined || spec.taskRef === null) return props;
    const task = tektonTask(spec.taskRef, "spec.taskRef", "spec.taskSpec", r);
    if (task === undefined) return props;
    const { taskRef: _t, ...rest } = spec;
    return { ...props, spec: { ...rest, taskSpec: task } };
  }
  if (kind === "PipelineRun") {
    if (spec.pipelineSpec !== undefined)
      return {
        ...props,
        spec: { ...spec, pipelineSpec: tektonPipeline(spec.pipelineSpec, "spec.pipelineSpec", r) },
      };
    const ref = spec.pipelineRef;
    if (ref === undefined || ref === null || r.remote(ref, "spec.pipelineRef", "Pipeline")) return props;
    const name = r.name(ref, "spec.pipelineRef", "Pipeline");
    const p =
      name === undefined ? undefined : r.lookup("tekton.dev", "Pipeline", name, "spec.pipelineRef", "runs");
    if (p === undefined) return props;
    r.used.push({ at: "spec.pipelineSpec", from: `Pipeline "${name}" spec`, ref: "spec.pipelineRef" });
    const { pipelineRef: _p, ...rest } = spec;
    return {
      ...props,
      spec: { ...rest, pipelineSpec: tektonPipeline(field(p.props, "spec"), "spec.pipelineSpec", r) },
    };
  }
  return props;
}
