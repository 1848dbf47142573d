/**
 * Attacks on Tekton's pinned fields (crd-verdicts/tekton.ts), each from what the controller does with the field
 * (github.com/tektoncd/pipeline pkg/pod/pod.go, creds_init.go, pkg/workspace/apply.go, the pipeline run's matrix
 * and affinity assistant): a hardened object with the attack laid over it fails closed where the attack is written,
 * and the same object without it passes.
 */
import { describe, expect, it } from "vitest";
import { ALL_RULES, judge } from "../../../../policy/rules/registry";
import { adaptResources } from "../../../../policy/sources/subject";
import { TEKTON_HARDENED } from "./crd-hardened-tekton";

const UNJUDGED = "sandbox-disallow-unjudged-fields";

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** `b` laid over `a`: objects merged key by key, lists element by element, anything else replaced. */
function over(a: unknown, b: unknown): unknown {
  if (Array.isArray(a) && Array.isArray(b)) return b.map((x, i) => over(a[i], x));
  if (!isObj(a) || !isObj(b)) return b;
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = over(a[k], v);
  return out;
}

const hardened = (kind: string, version: string): unknown => TEKTON_HARDENED[kind]?.(version);

/** The paths the unjudged-fields rule names for an object of the kind, and every rule that fails. */
function judgeObject(kind: string, version: string, spec: unknown, metadata: object = {}) {
  const props = { metadata: { name: "t", namespace: "agents", ...metadata }, spec };
  const results = adaptResources(`kubernetes:tekton.dev/${version}:${kind}`, props, "t").flatMap((v) =>
    judge(v, ALL_RULES, {}),
  );
  return {
    paths: results.filter((r) => r.rule.id === UNJUDGED).flatMap((r) => r.findings.map((f) => f.path)),
    messages: results.filter((r) => r.rule.id === UNJUDGED).flatMap((r) => r.findings.map((f) => f.message)),
    rules: [...new Set(results.filter((r) => r.findings.some((f) => !f.unchecked)).map((r) => r.rule.id))],
  };
}

const GPU = { limits: { "nvidia.com/gpu": "1", cpu: "500m", memory: "512Mi" } };

describe("Tekton fields the controller acts on and no rule reads fail closed", () => {
  it.each([
    [
      "a TaskRun workspace bound to a Secret (mounted in every step)",
      "TaskRun",
      "v1",
      { workspaces: [{ name: "src", emptyDir: null, secret: { secretName: "admin-kubeconfig" } }] },
      ["spec.workspaces[0].secret"],
    ],
    [
      "a PipelineRun workspace from a claim template (a claim, and an affinity assistant)",
      "PipelineRun",
      "v1",
      {
        workspaces: [
          {
            name: "shared",
            emptyDir: null,
            volumeClaimTemplate: { spec: { storageClassName: "hostpath", accessModes: ["ReadWriteOnce"] } },
          },
        ],
      },
      ["spec.workspaces[0].volumeClaimTemplate"],
    ],
    [
      "a projected service account token as a workspace",
      "TaskRun",
      "v1beta1",
      { workspaces: [{ name: "src", projected: { sources: [{ serviceAccountToken: { path: "t" } }] } }] },
      ["spec.workspaces[0].projected"],
    ],
    [
      "an emptyDir workspace with a field an emptyDir does not have",
      "TaskRun",
      "v1",
      { workspaces: [{ name: "src", emptyDir: { medium: "HugePages-2Mi" } }] },
      ["spec.workspaces[0].emptyDir"],
    ],
    [
      "a service account whose annotated Secrets Tekton mounts in every step",
      "TaskRun",
      "v1",
      { serviceAccountName: "build-bot" },
      ["spec.serviceAccountName"],
    ],
    [
      "a service account for one pipeline task",
      "PipelineRun",
      "v1",
      { taskRunSpecs: [{ pipelineTaskName: "build", serviceAccountName: "deployer" }] },
      ["spec.taskRunSpecs[0].serviceAccountName"],
    ],
    [
      "a GPU given to one step of one pipeline task, past the task's judged limits",
      "PipelineRun",
      "v1",
      {
        taskRunSpecs: [{ pipelineTaskName: "build", stepSpecs: [{ name: "build", computeResources: GPU }] }],
      },
      ["spec.taskRunSpecs[0].stepSpecs"],
    ],
    ["task-level requests and limits", "TaskRun", "v1", { computeResources: GPU }, ["spec.computeResources"]],
    [
      "tolerations that let the task's pod onto the control plane",
      "TaskRun",
      "v1",
      {
        podTemplate: { tolerations: [{ key: "node-role.kubernetes.io/control-plane", operator: "Exists" }] },
      },
      ["spec.podTemplate.tolerations"],
    ],
    [
      "a node selector that makes Tekton build a Windows pod",
      "TaskRun",
      "v1",
      { podTemplate: { nodeSelector: { "kubernetes.io/os": "windows" } } },
      ["spec.podTemplate.nodeSelector"],
    ],
    [
      "host aliases in a v1beta1 run's pod template",
      "PipelineRun",
      "v1beta1",
      { podTemplate: { hostAliases: [{ ip: "10.0.0.1", hostnames: ["registry.internal"] }] } },
      ["spec.podTemplate.hostAliases"],
    ],
    [
      "resolver settings in one pipeline task's pod template",
      "PipelineRun",
      "v1",
      {
        taskRunSpecs: [
          { pipelineTaskName: "build", podTemplate: { dnsConfig: { nameservers: ["1.1.1.1"] } } },
        ],
      },
      ["spec.taskRunSpecs[0].podTemplate.dnsConfig"],
    ],
    [
      "a matrix whose values Tekton substitutes into the steps",
      "Pipeline",
      "v1",
      {
        tasks: [
          { matrix: { params: [{ name: "msg", value: ["ghp_1234567890abcdefghijklmnopqrstuvwxyzAB"] }] } },
        ],
      },
      ["spec.tasks[0].matrix"],
    ],
    [
      "an embedded task's annotations, copied onto its pod",
      "Pipeline",
      "v1",
      { tasks: [{ taskSpec: { metadata: { annotations: { "sidecar.istio.io/inject": "true" } } } }] },
      ["spec.tasks[0].taskSpec.metadata"],
    ],
    [
      "an embedded custom task",
      "Pipeline",
      "v1",
      { finally: [{ taskSpec: { apiVersion: "example.dev/v1", kind: "Runner", spec: { image: "x" } } }] },
      [
        "spec.finally[0].taskSpec.apiVersion",
        "spec.finally[0].taskSpec.kind",
        "spec.finally[0].taskSpec.spec",
      ],
    ],
    [
      "a pipeline inside a pipeline, whose tasks are not read",
      "PipelineRun",
      "v1",
      {
        pipelineSpec: {
          tasks: [
            {
              pipelineSpec: {
                tasks: [{ name: "x", taskSpec: { steps: [{ securityContext: { privileged: true } }] } }],
              },
            },
          ],
        },
      },
      ["spec.pipelineSpec.tasks[0].pipelineSpec"],
    ],
    [
      "debug breakpoints that keep a failed step running",
      "TaskRun",
      "v1",
      { debug: { breakpoints: { onFailure: "enabled" } } },
      ["spec.debug"],
    ],
    [
      "a v1 step field written in a v1beta1 task (computeResources)",
      "Task",
      "v1beta1",
      { steps: [{ computeResources: GPU }] },
      ["spec.steps[0].computeResources"],
    ],
    [
      "a step key in another case (Go's decoder here reads names exactly)",
      "Task",
      "v1",
      { steps: [{ SecurityContext: { privileged: true } }] },
      ["spec.steps[0].SecurityContext"],
    ],
    [
      "a container field outside the claimed Kubernetes schema in a sidecar",
      "Task",
      "v1",
      { sidecars: [{ name: "s", image: "busybox:1.36", securityContext: { privilegedMode: true } }] },
      ["spec.sidecars[0].securityContext.privilegedMode"],
    ],
  ])("%s", (_, kind, version, attack, want) => {
    expect(judgeObject(kind, version, hardened(kind, version)).paths).toEqual([]);
    expect(judgeObject(kind, version, over(hardened(kind, version), attack)).paths).toEqual(want);
  });

  it("a refused field at a value as good as unset passes (the default account, a linux selector, a sized emptyDir)", () => {
    for (const attack of [
      { serviceAccountName: "default" },
      { podTemplate: { nodeSelector: { "kubernetes.io/os": "linux", pool: "ci" } } },
      { workspaces: [{ name: "src", emptyDir: { medium: "Memory", sizeLimit: "64Mi" } }] },
      { computeResources: {} },
    ])
      expect(judgeObject("TaskRun", "v1", over(hardened("TaskRun", "v1"), attack)).paths).toEqual([]);
  });

  it("the reason names what Tekton does with the field", () => {
    const { messages } = judgeObject(
      "TaskRun",
      "v1",
      over(hardened("TaskRun", "v1"), { serviceAccountName: "build-bot" }),
    );
    expect(messages.join("\n")).toContain("tekton.dev/git-*");
  });
});

describe("what Tekton copies from an object's own metadata onto its pods", () => {
  it.each([
    [
      "TaskRun",
      { annotations: { "sidecar.istio.io/inject": "true" } },
      "metadata.annotations.sidecar.istio.io/inject",
    ],
    ["Task", { labels: { "istio.io/rev": "default" } }, "metadata.labels.istio.io/rev"],
    [
      "PipelineRun",
      { annotations: { "container.apparmor.security.beta.kubernetes.io/step-build": "unconfined" } },
      "metadata.annotations.container.apparmor.security.beta.kubernetes.io/step-build",
    ],
    [
      "Pipeline",
      { annotations: { "seccomp.security.alpha.kubernetes.io/pod": "unconfined" } },
      "metadata.annotations.seccomp.security.alpha.kubernetes.io/pod",
    ],
  ])("%s %j fails closed", (kind, metadata, path) => {
    expect(judgeObject(kind, "v1", hardened(kind, "v1"), metadata).paths).toEqual([path]);
  });

  it("runtime/default and plain labels pass", () => {
    const metadata = {
      labels: { app: "ci" },
      annotations: { "container.apparmor.security.beta.kubernetes.io/step-build": "runtime/default" },
    };
    expect(judgeObject("TaskRun", "v1", hardened("TaskRun", "v1"), metadata).paths).toEqual([]);
  });
});

describe("what the readers substitute is judged", () => {
  it.each([
    [
      "a run's param value",
      "TaskRun",
      { params: [{ name: "msg", value: "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB" }] },
    ],
    [
      "a task param's default",
      "Task",
      { params: [{ default: "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB" }] },
    ],
    [
      "a pipeline param's default passed on by a pipeline task",
      "Pipeline",
      { params: [{ default: "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB" }] },
    ],
    [
      "a pipeline run's param",
      "PipelineRun",
      { params: [{ name: "greeting", value: "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB" }] },
    ],
  ])("%s holding a credential reaches the script", (_, kind, attack) => {
    expect(judgeObject(kind, "v1", over(hardened(kind, "v1"), attack)).rules).toContain(
      "sandbox-disallow-secret-env",
    );
  });
});

describe("hostile shapes never throw and fail closed where they are written", () => {
  it.each([
    ["steps as a string", "Task", { steps: "privileged" }, "spec.steps"],
    ["a workspace binding as a list", "TaskRun", { workspaces: [["secret"]] }, "spec.workspaces[0]"],
    ["a pod template as a number", "TaskRun", { podTemplate: 7 }, "spec.podTemplate"],
    [
      "labels of an embedded task as a list",
      "Pipeline",
      { tasks: [{ taskSpec: { metadata: [] } }] },
      undefined,
    ],
  ])("%s", (_, kind, attack, path) => {
    const run = () => judgeObject(kind, "v1", over(hardened(kind, "v1"), attack));
    expect(run).not.toThrow();
    if (path !== undefined) expect(run().paths).toContain(path);
  });

  it("a deep value and a param value of any shape never throw", () => {
    let deep: unknown = {};
    for (let i = 0; i < 5000; i++) deep = { tasks: [{ pipelineSpec: deep }] };
    for (const attack of [{ pipelineSpec: deep }, { params: [{ name: "msg", value: { nested: ["x"] } }] }])
      expect(() =>
        judgeObject("PipelineRun", "v1", over(hardened("PipelineRun", "v1"), attack)),
      ).not.toThrow();
  });
});

describe("array and object params are substituted as Tekton expands them", () => {
  const TOKEN = "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB";
  it.each([
    ["an array param expanded whole", ["$(params.flags[*])"], { name: "flags", value: [`--token=${TOKEN}`] }],
    ["an array param's element", ["$(params.flags[0])"], { name: "flags", value: [`--token=${TOKEN}`] }],
    ["an object param's key", ["$(params.cfg.token)"], { name: "cfg", value: { token: TOKEN } }],
  ])("%s holding a credential reaches the step's args", (_, args, param) => {
    const run = over(hardened("TaskRun", "v1"), {
      params: [param],
      taskSpec: {
        params: [
          { name: "flags", type: "array", default: ["--quiet"] },
          {
            name: "cfg",
            type: "object",
            properties: { token: { type: "string" } },
            default: { token: "none" },
          },
        ],
        steps: [{ args }],
      },
    });
    expect(judgeObject("TaskRun", "v1", run).rules).toContain("sandbox-disallow-secret-env");
  });
});
