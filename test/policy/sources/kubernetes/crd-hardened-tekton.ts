/**
 * Hardened objects of Tekton's pinned kinds (crd-verdicts/tekton.ts): each passes every rule, and each judged
 * field's hostile fragment, laid over it, is refused. The first step's script exports the task's first param
 * (`msg`, then `who`), the pipeline passes its own param `greeting` to `who`, so that a credential given to any of
 * them reaches the script the rules read.
 */
import { RefIndex, resolveReferences } from "../../../../policy/sources/kubernetes/references";
import { adaptResources } from "../../../../policy/sources/subject";
import type { Subject } from "../../../../policy/workload";
import { safeK8sContainer } from "../../fixtures";

/** A hardened step: v1 names its requests and limits `computeResources`, v1beta1 `resources` (Step of each). */
const step = (version: string) => {
  const { image, securityContext, resources } = safeK8sContainer() as Record<string, unknown>;
  return {
    name: "build",
    image,
    script: '#!/bin/sh\nexport GREETING="$(params.msg)"\nexport WHO="$(params.who)"\n',
    [version === "v1beta1" ? "resources" : "computeResources"]: resources,
    securityContext,
    onError: "stopAndFail",
    timeout: "10m",
  };
};

/** A hardened task spec: two params with defaults, one step, a declared workspace. */
export const tektonTask = (version: string) => ({
  params: [
    { name: "msg", type: "string", default: "hello" },
    { name: "who", type: "string", default: "world" },
  ],
  workspaces: [{ name: "src", mountPath: "/workspace/src" }],
  results: [{ name: "digest", description: "the image digest" }],
  steps: [step(version)],
  sidecars: [
    {
      name: "cache",
      image: step(version).image,
      [version === "v1beta1" ? "resources" : "computeResources"]: safeK8sContainer().resources,
      securityContext: step(version).securityContext,
    },
  ],
});

/** A hardened run pod template: the pod settings a Task cannot set. */
export const tektonPodTemplate = () => ({
  automountServiceAccountToken: false,
  securityContext: {
    runAsNonRoot: true,
    runAsUser: 1000,
    runAsGroup: 1000,
    fsGroup: 1000,
    seccompProfile: { type: "RuntimeDefault" },
  },
  nodeSelector: { "kubernetes.io/os": "linux" },
});

const pipeline = (version: string) => ({
  params: [{ name: "greeting", type: "string", default: "hi" }],
  workspaces: [{ name: "shared" }],
  tasks: [
    {
      name: "build",
      params: [{ name: "who", value: "$(params.greeting)" }],
      workspaces: [{ name: "src", workspace: "shared" }],
      taskSpec: tektonTask(version),
      timeout: "30m",
      retries: 1,
    },
  ],
  finally: [
    { name: "report", params: [{ name: "who", value: "$(params.greeting)" }], taskSpec: tektonTask(version) },
  ],
});

const stepAction = () => {
  const { image, securityContext } = step("v1");
  return {
    image,
    securityContext,
    params: [{ name: "msg", type: "string", default: "hello" }],
    script: '#!/bin/sh\nexport GREETING="$(params.msg)"\n',
    volumeMounts: [{ name: "scratch", mountPath: "/scratch", readOnly: true }],
  };
};

export const TEKTON_HARDENED: Readonly<Record<string, (version: string) => object>> = {
  Task: tektonTask,
  Pipeline: pipeline,
  TaskRun: (version: string) => ({
    taskSpec: tektonTask(version),
    podTemplate: tektonPodTemplate(),
    serviceAccountName: "default",
    workspaces: [{ name: "src", emptyDir: {} }],
    timeout: "1h",
  }),
  // v1 gives the runs' pod template under taskRunTemplate, v1beta1 directly (pipelinerun_types.go of each).
  PipelineRun: (version: string) => ({
    pipelineSpec: pipeline(version),
    ...(version === "v1beta1"
      ? { podTemplate: tektonPodTemplate(), serviceAccountName: "default" }
      : { taskRunTemplate: { podTemplate: tektonPodTemplate(), serviceAccountName: "default" } }),
    workspaces: [{ name: "shared", emptyDir: { sizeLimit: "1Gi" } }],
    timeouts: { pipeline: "1h" },
  }),
  StepAction: stepAction,
};

/**
 * The rules a hardened object of a kind cannot pass alone, and why: a Task or Pipeline sets no pod settings, the
 * run that starts it does (a token is mounted unless the run's pod template says otherwise).
 */
export const TEKTON_NEEDS_RUN: Readonly<Record<string, readonly string[]>> = {
  Task: ["sandbox-disallow-service-account-token"],
  Pipeline: ["sandbox-disallow-service-account-token"],
};

/**
 * A StepAction is judged as the step of a task that names it (references.ts): the views of a hardened TaskRun whose
 * step names the StepAction `object` (with a scratch volume its mount names and a token volume no step mounts),
 * resolved against it.
 */
export function tektonStepViews(object: object): Subject[] {
  const { apiVersion, metadata } = object as { apiVersion?: string; metadata?: { name?: string } };
  const run = {
    apiVersion: "tekton.dev/v1",
    kind: "TaskRun",
    metadata: { name: "uses-action", namespace: "agents" },
    spec: {
      podTemplate: tektonPodTemplate(),
      taskSpec: {
        volumes: [
          { name: "scratch", emptyDir: {} },
          { name: "token", projected: { sources: [{ serviceAccountToken: { path: "token" } }] } },
        ],
        steps: [
          { name: "act", ref: { name: metadata?.name }, computeResources: step("v1").computeResources },
        ],
      },
    },
  };
  const type = "kubernetes:tekton.dev/v1:TaskRun";
  const index = new RefIndex([
    { type: `kubernetes:${apiVersion}:StepAction`, props: object },
    { type, props: run },
  ]);
  return adaptResources(type, resolveReferences(type, run, index)?.props ?? run, "uses-action");
}
