/**
 * Attacks on Argo Workflows' fields (crd-verdicts/argo-workflows.ts over the pinned schema, crd-argo.ts's pods):
 * inputs an adversary would write from the controller's own source, each refused by a named rule at the place it is
 * written, and the ordinary objects beside them passing.
 */
import { describe, expect, it } from "vitest";
import { ALL_RULES, judge } from "../../../../policy/rules/registry";
import { adaptResources } from "../../../../policy/sources/subject";
import { argoWorkflowSpec } from "./crd-hardened-argo";

type Obj = Record<string, unknown>;

function findings(kind: string, spec: unknown, metadata: Obj = { name: "t", namespace: "agents" }) {
  const props = { apiVersion: "argoproj.io/v1alpha1", kind, metadata, spec };
  return adaptResources(`kubernetes:argoproj.io/v1alpha1:${kind}`, props, "t").flatMap((v) =>
    judge(v, ALL_RULES, {}).flatMap((r) =>
      r.findings
        .filter((f) => !f.unchecked)
        .map((f) => ({ rule: r.rule.id, path: f.path, message: f.message })),
    ),
  );
}

/** The hardened spec with its first template (the container template `main`) changed by `f`. */
function withMain(f: (main: Obj) => Obj, more: Obj = {}): Obj {
  const spec = argoWorkflowSpec();
  const [main, ...rest] = spec.templates as Obj[];
  return { ...spec, ...more, templates: [f(main ?? {}), ...rest] };
}

const rules = (kind: string, spec: unknown) => [...new Set(findings(kind, spec).map((f) => f.rule))].sort();
const at = (kind: string, spec: unknown, rule: string) =>
  findings(kind, spec)
    .filter((f) => f.rule === rule)
    .map((f) => f.path);

const UNJUDGED = "sandbox-disallow-unjudged-fields";
const PRIV = "sandbox-disallow-privileged";
const PRIV_PATCH = '{"containers":[{"name":"main","securityContext":{"privileged":true}}]}';

describe("Argo Workflows' fields", () => {
  it("a hardened object of every kind passes", () => {
    for (const kind of ["Workflow", "WorkflowTemplate", "ClusterWorkflowTemplate"])
      expect(rules(kind, argoWorkflowSpec()), kind).toEqual([]);
    expect(rules("CronWorkflow", { schedule: "0 * * * *", workflowSpec: argoWorkflowSpec() })).toEqual([]);
  });
});

const priv = { securityContext: { privileged: true } };
const sidecar = (extra: Obj) => ({ name: "s", image: "x", ...extra });
const steps = (step: Obj): Obj => ({ name: "run", steps: [[{ name: "first", ...step }]] });
/** The hardened spec with its second template (the steps calling `main`) replaced. */
const withRun = (run: Obj, more: Obj = {}): Obj => {
  const spec = argoWorkflowSpec();
  const [main] = spec.templates as Obj[];
  return { ...spec, ...more, templates: [main, run] };
};
const artifactIn = (a: Obj) =>
  withMain((m) => ({ ...m, inputs: { artifacts: [{ name: "a", path: "/job/a", ...a }] } }));

describe("attacks on Argo Workflows' fields", () => {
  it.each<[string, string, Obj, string, string]>([
    [
      "a step's inline template runs a privileged container the readers never build",
      "Workflow",
      withRun(steps({ template: undefined, inline: { container: { image: "x", ...priv } } })),
      UNJUDGED,
      "spec.templates[1].steps[0][0].inline",
    ],
    [
      "a DAG task's inline template",
      "WorkflowTemplate",
      withRun({
        name: "run",
        dag: { tasks: [{ name: "a", inline: { container: { image: "x", ...priv } } }] },
      }),
      UNJUDGED,
      "spec.templates[1].dag.tasks[0].inline",
    ],
    [
      "a key outside WorkflowStep in a step (ParallelSteps refuses unknown keys; the walk names it)",
      "Workflow",
      withRun(steps({ template: "main", podSpecPatch: PRIV_PATCH })),
      UNJUDGED,
      "spec.templates[1].steps[0][0].podSpecPatch",
    ],
    [
      "an http template runs from the controller's agent pod",
      "Workflow",
      withRun({ name: "run", http: { url: "http://169.254.169.254/latest/meta-data/" } }),
      UNJUDGED,
      "spec.templates[1].http",
    ],
    [
      "a plugin template runs in the agent pod with the cluster's plugins",
      "Workflow",
      withRun({ name: "run", plugin: { hello: { text: "x" } } }),
      UNJUDGED,
      "spec.templates[1].plugin",
    ],
    [
      "a resource template's pod patched to run main privileged",
      "Workflow",
      withRun({
        name: "run",
        resource: { action: "get", manifest: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n" },
        podSpecPatch: PRIV_PATCH,
      }),
      PRIV,
      "spec.templates[1].podSpecPatch",
    ],
    [
      "a data template's privileged sidecar",
      "Workflow",
      withRun({
        name: "run",
        data: { source: { artifactPaths: { name: "a", s3: { key: "k" } } }, transformation: [] },
        sidecars: [sidecar(priv)],
      }),
      PRIV,
      "spec.templates[1].sidecars[0]",
    ],
    [
      "kubectl flags of a resource template (another server, a kubeconfig)",
      "Workflow",
      withRun({
        name: "run",
        resource: {
          action: "get",
          manifest: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
          flags: ["--server=https://10.0.0.1"],
        },
      }),
      UNJUDGED,
      "spec.templates[1].resource.flags",
    ],
    [
      "an S3 artifact with its own credentials Secret",
      "Workflow",
      artifactIn({
        s3: { bucket: "b", key: "k", endpoint: "minio:9000", accessKeySecret: { name: "creds", key: "a" } },
      }),
      UNJUDGED,
      "spec.templates[0].inputs.artifacts[0].s3",
    ],
    [
      "a git artifact with an SSH key from a Secret",
      "Workflow",
      artifactIn({ git: { repo: "git@example.com:x.git", sshPrivateKeySecret: { name: "k", key: "id" } } }),
      UNJUDGED,
      "spec.templates[0].inputs.artifacts[0].git",
    ],
    [
      "an HDFS artifact reaching host addresses with a Kerberos keytab",
      "Workflow",
      artifactIn({
        hdfs: { addresses: ["10.0.0.1:8020"], path: "/x", krbKeytabSecret: { name: "k", key: "t" } },
      }),
      UNJUDGED,
      "spec.templates[0].inputs.artifacts[0].hdfs",
    ],
    [
      "an artifact file made setuid",
      "Workflow",
      artifactIn({ raw: { data: "x" }, mode: 0o4755 }),
      UNJUDGED,
      "spec.templates[0].inputs.artifacts[0].mode",
    ],
    [
      "a mesh injector annotation in the workflow's pod metadata",
      "Workflow",
      { ...argoWorkflowSpec(), podMetadata: { annotations: { "sidecar.istio.io/inject": "true" } } },
      UNJUDGED,
      "spec.podMetadata",
    ],
    [
      "a mesh injector label in a template's pod metadata",
      "ClusterWorkflowTemplate",
      withMain((m) => ({ ...m, metadata: { labels: { "linkerd.io/inject": "enabled" } } })),
      UNJUDGED,
      "spec.templates[0].metadata",
    ],
    [
      "a sidecar mirroring the main container's mounts",
      "Workflow",
      withMain((m) => ({ ...m, sidecars: [{ ...sidecar({}), mirrorVolumeMounts: true }] })),
      UNJUDGED,
      "spec.templates[0].sidecars[0].mirrorVolumeMounts",
    ],
    [
      "tolerations the controller writes on every pod",
      "Workflow",
      { ...argoWorkflowSpec(), tolerations: [{ operator: "Exists" }] },
      UNJUDGED,
      "spec.tolerations",
    ],
    [
      "artifact garbage collection pods under another service account",
      "Workflow",
      { ...argoWorkflowSpec(), artifactGC: { strategy: "OnWorkflowDeletion", serviceAccountName: "admin" } },
      UNJUDGED,
      "spec.artifactGC",
    ],
    [
      "claims the controller creates and mounts",
      "Workflow",
      {
        ...argoWorkflowSpec(),
        volumeClaimTemplates: [{ metadata: { name: "w" }, spec: { accessModes: ["ReadWriteOnce"] } }],
      },
      UNJUDGED,
      "spec.volumeClaimTemplates",
    ],
    [
      "a default resource merged into every resource template",
      "Workflow",
      { ...argoWorkflowSpec(), templateDefaults: { resource: { manifest: "kind: Pod" } } },
      UNJUDGED,
      "spec.templateDefaults.resource",
    ],
    [
      "a workflow field in another case (Go would not decode it; a newer release may)",
      "Workflow",
      { ...argoWorkflowSpec(), HostNetwork: true },
      UNJUDGED,
      "spec.HostNetwork",
    ],
    [
      "the metadata of the workflows a CronWorkflow submits, with owner references",
      "CronWorkflow",
      {
        schedule: "0 * * * *",
        workflowSpec: argoWorkflowSpec(),
        workflowMetadata: { ownerReferences: [{ name: "x" }] },
      },
      UNJUDGED,
      "spec.workflowMetadata",
    ],
  ])("%s", (_, kind, spec, rule, path) => {
    expect(at(kind, spec, rule)).toContain(path);
  });

  it.each<[string, string, Obj]>([
    [
      "a key inside the configured artifact repository",
      "Workflow",
      artifactIn({ s3: { key: "inputs/a.tgz" } }),
    ],
    [
      "a key inside the configured repository beside empty settings",
      "Workflow",
      artifactIn({ s3: { key: "inputs/a.tgz", bucket: "", accessKeySecret: null } }),
    ],
    ["an artifact file mode without setuid", "Workflow", artifactIn({ raw: { data: "x" }, mode: 0o755 })],
    [
      "ordinary labels in the pod metadata",
      "Workflow",
      { ...argoWorkflowSpec(), podMetadata: { labels: { team: "a" } } },
    ],
    ["a node selector", "Workflow", { ...argoWorkflowSpec(), nodeSelector: { pool: "sandbox" } }],
    [
      "a garbage collection strategy alone",
      "Workflow",
      { ...argoWorkflowSpec(), artifactGC: { strategy: "OnWorkflowDeletion" } },
    ],
    [
      "a resource template reading a ConfigMap",
      "Workflow",
      withRun({
        name: "run",
        resource: { action: "get", manifest: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n" },
      }),
    ],
    ["a suspend template", "Workflow", withRun({ name: "run", suspend: { duration: "10s" } })],
    [
      "a semaphore sized from a ConfigMap key",
      "Workflow",
      {
        ...argoWorkflowSpec(),
        synchronization: { semaphores: [{ configMapKeyRef: { name: "sem", key: "w" } }] },
      },
    ],
    [
      "CronWorkflow labels on the submitted workflows",
      "CronWorkflow",
      {
        schedule: "0 * * * *",
        workflowSpec: argoWorkflowSpec(),
        workflowMetadata: { labels: { team: "a" } },
      },
    ],
  ])("passes: %s", (_, kind, spec) => {
    expect(rules(kind, spec)).toEqual([]);
  });

  it("a hook passing a value to a template's podSpecPatch parameter is judged with it", () => {
    const spec = withMain(
      (m) => ({
        ...m,
        inputs: { parameters: [{ name: "p", default: "{}" }] },
        podSpecPatch: "{{inputs.parameters.p}}",
      }),
      {
        hooks: { exit: { template: "main", arguments: { parameters: [{ name: "p", value: PRIV_PATCH }] } } },
      },
    );
    expect(rules("Workflow", spec).length).toBeGreaterThan(0);
    const calm = withMain((m) => ({
      ...m,
      inputs: { parameters: [{ name: "p", default: "{}" }] },
      podSpecPatch: "{{inputs.parameters.p}}",
    }));
    expect(rules("Workflow", calm)).toEqual([]);
  });

  it("hostile shapes never throw and fail closed where a field is refused", () => {
    const deep: Obj = { name: "run", steps: [[{ name: "a", template: "main" }]] };
    let cur: Obj = deep;
    for (let i = 0; i < 200; i++) {
      const next: Obj = { name: `n${i}`, template: "main" };
      cur.steps = [[next]];
      cur = next;
    }
    for (const spec of [
      "templates: []",
      { templates: "main" },
      { templates: [{ name: "x", steps: "a" }] },
      { templates: [{ name: "x", steps: [["a"]] }] },
      { templates: [{ name: "x", container: "busybox" }] },
      { templates: [{ name: "x", podSpecPatch: { hostPID: true } }] },
      withRun(deep),
      { ...argoWorkflowSpec(), podMetadata: "sidecar.istio.io/inject: true" },
    ])
      expect(() => findings("Workflow", spec)).not.toThrow();
    expect(at("Workflow", { ...argoWorkflowSpec(), podMetadata: "x" }, UNJUDGED)).toContain(
      "spec.podMetadata",
    );
  });
});

describe("volumes the controller adds", () => {
  it("a podSpecPatch mounting the executor's token volume in main fails closed (applied after the controller checks mounts)", () => {
    const patch = JSON.stringify({
      containers: [{ name: "main", volumeMounts: [{ name: "exec-sa-token", mountPath: "/t" }] }],
    });
    const spec = withMain((m) => ({ ...m, podSpecPatch: patch }));
    // The patched container is main, so the mount is named in it (the mapper follows the container, not the patch).
    const f = findings("Workflow", spec).filter((x) => x.rule === "sandbox-require-readable-values");
    expect(f.map((x) => x.path)).toEqual(["spec.templates[0].container.volumeMounts[2]"]);
    expect(f[0]?.message).toContain('a mount of volume "exec-sa-token"');
  });

  it("a container mounting the executor's token volume by name fails closed", () => {
    const spec = withMain((m) => ({
      ...m,
      container: {
        ...(m.container as Obj),
        volumeMounts: [
          { name: "job", mountPath: "/job" },
          { name: "exec-sa-token", mountPath: "/t" },
        ],
      },
    }));
    expect(findings("Workflow", spec).map((f) => f.path)).toContain(
      "spec.templates[0].container.volumeMounts[1]",
    );
  });

  it("a sidecar mounting an artifact repository's Secret volume by its name fails closed", () => {
    const spec = withMain((m) => ({
      ...m,
      sidecars: [{ name: "s", image: "x", volumeMounts: [{ name: "my-minio-cred", mountPath: "/c" }] }],
    }));
    expect(findings("Workflow", spec).map((f) => f.path)).toContain(
      "spec.templates[0].sidecars[0].volumeMounts[0]",
    );
  });
});
