/**
 * The verdict of every field of Tekton Pipelines' kinds (github.com/tektoncd/pipeline, the version
 * crds.generated.ts pins: pkg/apis/pipeline/v1 and v1beta1 Task, TaskRun, Pipeline, PipelineRun; v1beta1 and
 * v1alpha1 StepAction; one table for every version), keyed `<Kind>.<path under spec>`. Reasons from the operator's
 * own source (pkg/pod/pod.go, creds_init.go; pkg/reconciler/taskrun, pkg/reconciler/pipelinerun with its matrix and
 * affinity assistant; pkg/workspace/apply.go). The task spec and pod template verdicts are in tekton-task.ts. Each
 * task's pod is rebuilt by crd-pods.ts, references are resolved by references.ts (the stack rule on references fails
 * closed on what the input does not hold), params are substituted by templating.ts. A judged field's `hostile` is a
 * `spec` fragment laid over a hardened object of the kind; test/policy/sources/kubernetes/crd-verdicts.test.ts proves
 * one of its rules refuses it (a StepAction's, in a Task whose step names it).
 */
import { inert, judged, refused, type Verdict, type VerdictTable } from "../../verdict";
import {
  NAMING,
  PRIV,
  podTemplate,
  REMOVED,
  SECRET,
  SERVICE_ACCOUNT,
  TOKEN_VALUE,
  taskSpec,
  type Wrap,
  workspaceBindings,
} from "./tekton-task";

const REF =
  "names what runs: the readers put the object in its place where the input holds it, and the stack rule on references fails closed where it does not, where a resolver or a bundle fetches it, or where it names a custom task";
const LIFECYCLE = "when the run stops or is retried; it opens nothing";
const OVERRIDE = (what: string) =>
  `Tekton puts these requests and limits on ${what} in place of the task's (pkg/pod/pod.go), devices among them; the readers keep the task's`;

/** The verdicts of a pipeline task (`tasks[]`, `finally[]`) at `base`, `wrap` placing a task fragment. */
function pipelineTask(base: string, wrap: Wrap): Record<string, Verdict> {
  const inTask: Wrap = (f) => wrap({ taskSpec: f });
  return {
    [`${base}.name`]: inert(NAMING),
    [`${base}.displayName`]: inert(NAMING),
    [`${base}.description`]: inert(NAMING),
    [`${base}.taskRef`]: inert(REF),
    ...taskSpec(`${base}.taskSpec`, inTask),
    [`${base}.taskSpec.apiVersion`]: refused(
      "with `kind`, it makes the task a custom task: Tekton creates a CustomRun that another controller runs, not Tekton",
    ),
    [`${base}.taskSpec.kind`]: refused(
      "with `apiVersion`, it makes the task a custom task: Tekton creates a CustomRun that another controller runs, not Tekton",
    ),
    [`${base}.taskSpec.spec`]: refused(
      "a custom task's spec, run by its own controller, which no rule reads",
    ),
    [`${base}.taskSpec.metadata`]: refused(
      "Tekton puts these labels and annotations on the TaskRun and on its pod (pkg/reconciler/pipelinerun createTaskRun; pod.go): mesh injectors and security profiles act on them, and no rule reads them there",
    ),
    // The readers substitute a pipeline task's params into its task spec (templating.ts tektonValues).
    [`${base}.params`]: judged([SECRET], wrap({ params: [{ value: TOKEN_VALUE }] })),
    [`${base}.matrix`]: refused(
      "Tekton runs the task once per combination of these values, each substituted into its steps (pkg/reconciler/pipelinerun/resources matrix fan-out); the readers substitute only params, so what runs is not what was judged",
    ),
    [`${base}.when`]: inert("skips the task when false; a skipped task runs nothing"),
    [`${base}.runAfter`]: inert("the order the tasks run in"),
    [`${base}.retries`]: inert("runs the judged task again after it fails"),
    [`${base}.timeout`]: inert(LIFECYCLE),
    [`${base}.onError`]: inert("whether the pipeline goes on after the task fails"),
    [`${base}.workspaces`]: inert(
      "which pipeline workspace each task workspace is, and which folder of it; the volume has its verdict on the run that binds it (only an emptyDir passes)",
    ),
    [`${base}.pipelineRef`]: refused(
      "a pipeline inside a pipeline (a preview feature): its tasks are not read, and the stack rule on references fails closed on it",
    ),
    [`${base}.pipelineSpec`]: refused(
      "a pipeline inside a pipeline (a preview feature): its tasks are not read",
    ),
    [`${base}.resources`]: inert(REMOVED),
  };
}

/** The verdicts of a PipelineSpec at `base` (`Pipeline`, `PipelineRun.pipelineSpec`), `wrap` placing a fragment. */
function pipelineSpec(base: string, wrap: Wrap): Record<string, Verdict> {
  const privileged = { taskSpec: { steps: [{ securityContext: { privileged: true } }] } };
  const nested: Record<string, Verdict> = base.includes(".")
    ? { [base]: judged([PRIV], wrap({ tasks: [privileged] })) }
    : {};
  return {
    ...nested,
    [`${base}.displayName`]: inert(NAMING),
    [`${base}.description`]: inert(NAMING),
    [`${base}.tasks`]: judged([PRIV], wrap({ tasks: [privileged] })),
    ...pipelineTask(`${base}.tasks[]`, (f) => wrap({ tasks: [f] })),
    [`${base}.finally`]: judged([PRIV], wrap({ finally: [privileged] })),
    ...pipelineTask(`${base}.finally[]`, (f) => wrap({ finally: [f] })),
    [`${base}.params`]: inert(
      "the pipeline's params; each value is substituted into the tasks before they are judged",
    ),
    // The readers substitute the default into the pipeline tasks' params where the run gives no value.
    [`${base}.params[].default`]: judged([SECRET], wrap({ params: [{ default: TOKEN_VALUE }] })),
    [`${base}.results`]: inert("values the controller copies from the tasks' results into the run's status"),
    [`${base}.workspaces`]: inert(
      "the workspaces the pipeline's tasks share; the volume behind each has its verdict on the run that binds it (only an emptyDir passes)",
    ),
    [`${base}.resources`]: inert(REMOVED),
  };
}

const RUN_STATUS = inert("cancels or stops the run; it starts nothing");

/** The kinds' own fields: what a run adds to what its task or pipeline runs. */
function runs(): Record<string, Verdict> {
  const trPod = podTemplate("TaskRun.podTemplate", (f) => ({ podTemplate: f }));
  return {
    "TaskRun.taskRef": inert(REF),
    ...taskSpec("TaskRun.taskSpec", (f) => ({ taskSpec: f })),
    "TaskRun.taskSpec": judged([PRIV], { taskSpec: { steps: [{ securityContext: { privileged: true } }] } }),
    "TaskRun.params": judged([SECRET], { params: [{ name: "msg", value: TOKEN_VALUE }] }),
    ...trPod,
    "TaskRun.serviceAccountName": SERVICE_ACCOUNT,
    "TaskRun.computeResources": refused(OVERRIDE("the task's steps, shared out among them,")),
    "TaskRun.stepSpecs": refused(OVERRIDE("the named steps")),
    "TaskRun.sidecarSpecs": refused(OVERRIDE("the named sidecars")),
    "TaskRun.stepOverrides": refused(OVERRIDE("the named steps")),
    "TaskRun.sidecarOverrides": refused(OVERRIDE("the named sidecars")),
    "TaskRun.debug": refused(
      "Tekton (alpha API) adds its debug scripts volume and keeps a failed step's container running for someone to run commands in (pkg/pod/pod.go, entrypoint breakpoints)",
    ),
    ...workspaceBindings("TaskRun.workspaces"),
    "TaskRun.status": RUN_STATUS,
    "TaskRun.statusMessage": inert("a message for the run's status"),
    "TaskRun.retries": inert("runs the judged task again after it fails"),
    "TaskRun.timeout": inert(LIFECYCLE),
    "TaskRun.managedBy": inert("which controller reconciles the run (Tekton or Kueue's MultiKueue)"),
    "TaskRun.resources": inert(REMOVED),

    "PipelineRun.pipelineRef": inert(REF),
    ...pipelineSpec("PipelineRun.pipelineSpec", (f) => ({ pipelineSpec: f })),
    "PipelineRun.params": judged([SECRET], { params: [{ name: "greeting", value: TOKEN_VALUE }] }),
    "PipelineRun.taskRunTemplate": inert("what every task's run gets; each setting has its own verdict"),
    ...podTemplate("PipelineRun.taskRunTemplate.podTemplate", (f) => ({
      taskRunTemplate: { podTemplate: f },
    })),
    "PipelineRun.taskRunTemplate.serviceAccountName": SERVICE_ACCOUNT,
    ...podTemplate("PipelineRun.podTemplate", (f) => ({ podTemplate: f })),
    "PipelineRun.serviceAccountName": SERVICE_ACCOUNT,
    "PipelineRun.taskRunSpecs": inert(
      "settings for the runs of named pipeline tasks; each has its own verdict",
    ),
    "PipelineRun.taskRunSpecs[].pipelineTaskName": inert("which pipeline task the settings are for"),
    // The readers merge a task's own pod template over the run's (crd-pods.ts perTask).
    ...podTemplate("PipelineRun.taskRunSpecs[].podTemplate", (f) => ({
      taskRunSpecs: [{ pipelineTaskName: "build", podTemplate: f }],
    })),
    ...podTemplate("PipelineRun.taskRunSpecs[].taskPodTemplate", (f) => ({
      taskRunSpecs: [{ pipelineTaskName: "build", taskPodTemplate: f }],
    })),
    "PipelineRun.taskRunSpecs[].serviceAccountName": SERVICE_ACCOUNT,
    "PipelineRun.taskRunSpecs[].taskServiceAccountName": SERVICE_ACCOUNT,
    "PipelineRun.taskRunSpecs[].computeResources": refused(
      OVERRIDE("the task's steps, shared out among them,"),
    ),
    "PipelineRun.taskRunSpecs[].stepSpecs": refused(OVERRIDE("the named steps")),
    "PipelineRun.taskRunSpecs[].sidecarSpecs": refused(OVERRIDE("the named sidecars")),
    "PipelineRun.taskRunSpecs[].stepOverrides": refused(OVERRIDE("the named steps")),
    "PipelineRun.taskRunSpecs[].sidecarOverrides": refused(OVERRIDE("the named sidecars")),
    "PipelineRun.taskRunSpecs[].metadata": refused(
      "Tekton puts these labels and annotations on the task's TaskRun and its pod: mesh injectors and security profiles act on them, and no rule reads them there",
    ),
    "PipelineRun.taskRunSpecs[].timeout": inert(LIFECYCLE),
    ...workspaceBindings("PipelineRun.workspaces"),
    "PipelineRun.status": RUN_STATUS,
    "PipelineRun.timeouts": inert(LIFECYCLE),
    "PipelineRun.timeout": inert(LIFECYCLE),
    "PipelineRun.managedBy": inert("which controller reconciles the run (Tekton or Kueue's MultiKueue)"),
    "PipelineRun.resources": inert(REMOVED),
  };
}

/**
 * A StepAction runs only as a step that names it (kinds-operators.ts): the readers copy its image, command, args,
 * script, env, volumeMounts, securityContext and workingDir into that step, its params substituted
 * (references.ts `stepFromAction`, as Tekton's resolveStepRef does), where the pod rules judge them.
 */
const STEP_ACTION: Record<string, Verdict> = {
  "StepAction.description": inert(NAMING),
  "StepAction.image": inert("the step's image; its user is judged through the step's runAsUser/runAsNonRoot"),
  "StepAction.command": judged([SECRET], { command: ["sh", "-c", `export GITHUB_TOKEN=${TOKEN_VALUE}`] }),
  "StepAction.args": judged([SECRET], { args: [`--token=${TOKEN_VALUE}`] }),
  "StepAction.script": judged([SECRET], { script: `#!/bin/sh\nexport GITHUB_TOKEN=${TOKEN_VALUE}\n` }),
  "StepAction.env": judged([SECRET], {
    env: [{ name: "T", valueFrom: { secretKeyRef: { name: "creds", key: "token" } } }],
  }),
  "StepAction.securityContext": judged([PRIV], { securityContext: { privileged: true } }),
  "StepAction.volumeMounts": judged(["sandbox-disallow-service-account-token"], {
    volumeMounts: [{ name: "token", mountPath: "/var/run/secrets/tokens" }],
  }),
  "StepAction.workingDir": inert("the folder the step starts in, inside its own container"),
  "StepAction.params": inert(
    "the StepAction's params; the step's values are substituted before it is judged",
  ),
  "StepAction.params[].default": judged([SECRET], { params: [{ default: TOKEN_VALUE }] }),
  "StepAction.results": inert(
    "files the step writes under /tekton/steps; the controller reads them into the run's status",
  ),
};

export const TEKTON_VERDICTS: VerdictTable = {
  ...taskSpec("Task", (f) => f),
  ...pipelineSpec("Pipeline", (f) => f),
  ...runs(),
  ...STEP_ACTION,
};
