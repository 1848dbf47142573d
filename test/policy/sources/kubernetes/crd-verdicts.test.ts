/**
 * Conformance of the operators' verdict tables (crd-verdicts/) with their pinned CRD schemas (crds.generated.ts):
 * every field of every pinned kind and version has a verdict; every verdict names a field some version has, and
 * rules that exist; a pod template or pod spec judged by the pod rules is one the carriers really read (derived
 * from carriers.ts, not trusted); a core Kubernetes value no rule reads is refused; a judged field's hostile
 * fragment, laid over a hardened object of its kind, is refused by one of its rules (and its control passes); a
 * hardened object of every kind and version passes every rule; and a key outside the pinned schema fails closed
 * where it is written.
 */
import { describe, expect, it } from "vitest";
import { ALL_RULES, judge } from "../../../../policy/rules/registry";
import type { Shape } from "../../../../policy/sources/docker/shape";
import { podSites } from "../../../../policy/sources/kubernetes/carriers";
import { CRD_VERDICTS, type Operator } from "../../../../policy/sources/kubernetes/crd-fields";
import { CRD_SCHEMAS } from "../../../../policy/sources/kubernetes/crds.generated";
import { kindVerdict } from "../../../../policy/sources/kubernetes/kinds";
import { adaptResources } from "../../../../policy/sources/subject";
import { verdictFor } from "../../../../policy/sources/verdict";
import type { Subject } from "../../../../policy/workload";
import { safePodSpec } from "../../fixtures";
import { validate } from "../../harness";
import { ARGO_HARDENED } from "./crd-hardened-argo";
import { HARDENED_ROLLOUTS } from "./crd-hardened-rollouts";
import { SPARK_BY_DESIGN, SPARK_HARDENED } from "./crd-hardened-spark";
import { TEKTON_HARDENED, TEKTON_NEEDS_RUN, tektonStepViews } from "./crd-hardened-tekton";

const UNJUDGED = "sandbox-disallow-unjudged-fields";
const META = { labels: { "sandbox.project": "demo", "sandbox.role": "task" } };

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

const pod = () => ({ metadata: META, spec: safePodSpec() });
const rayCluster = () => ({
  headGroupSpec: { rayStartParams: { "dashboard-host": "0.0.0.0" }, template: pod() },
  workerGroupSpecs: [
    { groupName: "w", replicas: 1, minReplicas: 1, maxReplicas: 1, rayStartParams: {}, template: pod() },
  ],
});

const trainingRuntime = () => ({
  mlPolicy: { numNodes: 1, torch: { numProcPerNode: "auto" } },
  template: {
    spec: {
      replicatedJobs: [
        {
          name: "node",
          replicas: 1,
          template: {
            spec: {
              backoffLimit: 0,
              activeDeadlineSeconds: 3600,
              ttlSecondsAfterFinished: 60,
              template: pod(),
            },
          },
        },
      ],
    },
  },
});

/** A hardened `spec` of every pinned kind: it passes every rule. */
const HARDENED: Readonly<Record<string, (version: string) => object>> = {
  ...HARDENED_ROLLOUTS,
  ...SPARK_HARDENED,
  Sandbox: () => ({ podTemplate: pod(), service: true, operatingMode: "Running" }),
  SandboxTemplate: () => ({ podTemplate: pod(), networkPolicyManagement: "Managed" }),
  SandboxClaim: () => ({ warmPoolRef: { name: "pool" }, lifecycle: { shutdownPolicy: "Delete" } }),
  SandboxWarmPool: () => ({ replicas: 2, sandboxTemplateRef: { name: "tpl" } }),
  RayCluster: rayCluster,
  RayJob: () => ({
    entrypoint: "python run.py",
    rayClusterSpec: rayCluster(),
    submitterPodTemplate: pod(),
  }),
  RayService: () => ({ rayClusterConfig: rayCluster(), serveConfigV2: "applications: []" }),
  TrainingRuntime: trainingRuntime,
  ClusterTrainingRuntime: trainingRuntime,
  TrainJob: () => ({
    runtimeRef: { name: "torch-distributed", kind: "ClusterTrainingRuntime" },
    trainer: {
      command: ["torchrun", "train.py"],
      numNodes: 2,
    },
  }),
  ...ARGO_HARDENED,
  ...TEKTON_HARDENED,
};

/** Kinds judged only inside another object that names them: the views of that object, with it resolved. */
const CARRIED_BY: Readonly<Record<string, (object: object) => Subject[]>> = { StepAction: tektonStepViews };

interface PinnedKind {
  readonly operator: Operator;
  readonly group: string;
  readonly kind: string;
  readonly versions: Readonly<Record<string, Shape>>;
}

const KINDS: readonly PinnedKind[] = (Object.keys(CRD_SCHEMAS) as Operator[]).flatMap((operator) =>
  Object.entries(
    CRD_SCHEMAS[operator].kinds as Record<string, Record<string, Record<string, Shape>>>,
  ).flatMap(([group, kinds]) =>
    Object.entries(kinds).map(([kind, versions]) => ({ operator, group, kind, versions })),
  ),
);

/** Every field path of a shape with its shape, as fieldPaths lists them. */
function fieldShapes(s: Shape, base = ""): [string, Shape][] {
  switch (s.k) {
    case "ptr":
      return fieldShapes(s.to, base);
    case "slice":
    case "array":
      return fieldShapes(s.of, `${base}[]`);
    case "map":
      return fieldShapes(s.of, `${base}{}`);
    case "struct":
      return Object.entries(s.fields).flatMap(([k, f]) => {
        const p = base === "" ? k : `${base}.${k}`;
        return [[p, f] as [string, Shape], ...fieldShapes(f, p)];
      });
    default:
      return [];
  }
}

const leaf = (s: Shape): Shape => (s.k === "ptr" ? leaf(s.to) : s);

function object(k: PinnedKind, version: string, spec: unknown) {
  return {
    apiVersion: `${k.group}/${version}`,
    kind: k.kind,
    metadata: { name: "t", namespace: "agents" },
    spec,
  };
}

function views(k: PinnedKind, version: string, spec: unknown) {
  return adaptResources(`kubernetes:${k.group}/${version}:${k.kind}`, object(k, version, spec), "t");
}

/**
 * Rules every object of a kind fails by its operator's design, or that a hardened object of the kind cannot pass alone
 * (the run that starts it sets what they read), each helper saying why: left out of `failing`.
 */
const BY_DESIGN: Readonly<Record<string, readonly string[]>> = { ...SPARK_BY_DESIGN, ...TEKTON_NEEDS_RUN };

function failing(k: PinnedKind, version: string, spec: unknown, config = {}): string[] {
  const expected = BY_DESIGN[k.kind] ?? [];
  const carried = CARRIED_BY[k.kind]?.(object(k, version, spec)) ?? [];
  return [...views(k, version, spec), ...carried].flatMap((v) =>
    judge(v, ALL_RULES, config)
      .filter((r) => r.findings.some((f) => !f.unchecked) && !expected.includes(r.rule.id))
      .map((r) => r.rule.id),
  );
}

function unjudged(k: PinnedKind, version: string, spec: unknown): { path?: string; message: string }[] {
  return views(k, version, spec).flatMap((v) =>
    judge(v, ALL_RULES, {})
      .filter((r) => r.rule.id === UNJUDGED)
      .flatMap((r) => r.findings.map((f) => ({ path: f.path, message: f.message }))),
  );
}

/** A value of a path pattern's parent objects holding `value` (`a.b[].c` -> `{a: {b: [{c: value}]}}`). */
function placed(path: string, value: unknown): unknown {
  return path
    .split(".")
    .reverse()
    .reduce<unknown>(
      (v, part) => (part.endsWith("[]") ? { [part.slice(0, -2)]: [v] } : { [part]: v }),
      value,
    );
}

describe.each(KINDS)("$operator $kind", (k) => {
  const table = CRD_VERDICTS[k.operator];
  const byVersion = Object.entries(k.versions).map(([v, s]) => [v, fieldShapes(s)] as const);
  const all = new Set(byVersion.flatMap(([, f]) => f.map(([p]) => p)));

  it("has a kind verdict that lets a hardened object through", () => {
    for (const version of Object.keys(k.versions))
      expect(["read", "through"]).toContain(kindVerdict({ group: k.group, version, kind: k.kind })?.v);
  });

  it("gives every field of every pinned version a verdict", () => {
    expect(all.size).toBeGreaterThan(0);
    expect([...all].filter((p) => verdictFor(table, `${k.kind}.${p}`) === undefined)).toEqual([]);
  });

  it("a hardened object of every version passes every rule", () => {
    const hardened = HARDENED[k.kind];
    expect(hardened, `no hardened ${k.kind}`).toBeDefined();
    for (const version of Object.keys(k.versions))
      expect(failing(k, version, hardened?.(version)), `${k.kind} ${version}`).toEqual([]);
  });

  it("judges a pod template or pod spec by the pod rules only where the carriers read it", () => {
    for (const [version, fields] of byVersion)
      for (const [p, s] of fields) {
        const l = leaf(s);
        // Where each carries the pod spec, and a hardened value of it.
        const carried: Record<string, [string, () => object]> = {
          "core/v1.PodSpec": ["", safePodSpec],
          "core/v1.PodTemplateSpec": [".spec", pod],
          "batch/v1.JobTemplateSpec": [".spec.template.spec", () => ({ spec: { template: pod() } })],
          "batch/v1.JobSpec": [".template.spec", () => ({ template: pod() })],
        };
        const c = l.k === "core" && Object.hasOwn(carried, l.type) ? carried[l.type] : undefined;
        if (l.k !== "core" || c === undefined) continue;
        const v = verdictFor(table, `${k.kind}.${p}`);
        const concrete = `spec.${p.replace(/\[\]/g, "[0]")}`;
        const value = c[1]();
        const sites = podSites(
          `kubernetes:${k.group}/${version}:${k.kind}`,
          object(
            k,
            version,
            over(HARDENED[k.kind]?.(version), (placed(p, value) as Record<string, unknown>) ?? {}),
          ),
        );
        const specPath = `${concrete}${c[0]}`;
        // A rebuilt pod (remap) reads the template it starts from when its spec maps back there.
        const read = (sites ?? []).some(
          (site) => site.specPath === specPath || site.remap?.(site.specPath) === specPath,
        );
        expect({ path: p, version, read, verdict: v?.v }).toEqual({
          path: p,
          version,
          read: v?.v === "judged",
          verdict: read ? "judged" : "refused",
        });
      }
  });

  it("refuses every core Kubernetes value no rule reads", () => {
    for (const [, fields] of byVersion)
      for (const [p, s] of fields) {
        const l = leaf(s);
        // Values of a single JSON scalar (a time, a number or a name) carry nothing a rule could read.
        if (l.k !== "core" || ["meta/v1.Time", "meta/v1.Duration", "intstr.IntOrString"].includes(l.type))
          continue;
        expect({ path: p, verdict: verdictFor(table, `${k.kind}.${p}`)?.v }).not.toEqual({
          path: p,
          verdict: "inert",
        });
      }
  });

  it("names only fields a pinned version has, and rules that exist", () => {
    const ids = new Set(ALL_RULES.map((r) => r.id));
    for (const [key, v] of Object.entries(table)) {
      if (!key.startsWith(`${k.kind}.`)) continue;
      expect(all, key).toContain(key.slice(k.kind.length + 1));
      if (v.v === "judged") for (const r of v.rules) expect(ids.has(r), `${key}: ${r}`).toBe(true);
    }
  });

  const judgedFields = Object.entries(table).filter(
    ([key, v]) => key.startsWith(`${k.kind}.`) && v.v === "judged",
  );
  it.each(judgedFields)("%s: its hostile fragment is refused by its rules", (key, v) => {
    if (v.v !== "judged") return;
    const path = key.slice(k.kind.length + 1);
    for (const [version, fields] of byVersion) {
      if (!fields.some(([p]) => p === path)) continue;
      const hit = failing(k, version, over(HARDENED[k.kind]?.(version), v.hostile), v.config);
      expect(
        hit.filter((r) => v.rules.includes(r)).length,
        `${version}: ${JSON.stringify(hit)}`,
      ).toBeGreaterThan(0);
      if (v.control !== undefined)
        expect(failing(k, version, over(HARDENED[k.kind]?.(version), v.control), v.config), version).toEqual(
          [],
        );
    }
  });

  it("a key outside the pinned schema fails closed where it is written, in any case", () => {
    const [version] = Object.keys(k.versions);
    if (version === undefined) return;
    const hardened = HARDENED[k.kind]?.(version) ?? {};
    const first = Object.keys(hardened)[0] ?? "x";
    // A sidecar list where the kind has none (a Tekton Task has one: its misspelling there).
    const shape = k.versions[version];
    const own = shape?.k === "struct" && Object.hasOwn(shape.fields, "sidecars");
    for (const key of [
      own ? "sideCars" : "sidecars",
      first.toUpperCase(),
      `${first.charAt(0).toUpperCase()}${first.slice(1)}`,
    ]) {
      const f = unjudged(k, version, { ...hardened, [key]: [{ name: "x" }] });
      expect(f.map((x) => x.path)).toEqual([`spec.${key}`]);
      expect(f[0]?.message).toContain(`not a field of ${k.kind} in`);
    }
  });

  it("a version the pinned release does not serve fails closed at apiVersion", () => {
    const f = unjudged(k, "v9", HARDENED[k.kind]?.("v9"));
    expect(f.map((x) => x.path)).toEqual(["apiVersion"]);
  });
});

describe("attacks on the operators' fields", () => {
  const kind = (name: string): PinnedKind => {
    const k = KINDS.find((x) => x.kind === name);
    if (k === undefined) throw new Error(`no pinned ${name}`);
    return k;
  };
  const paths = (name: string, version: string, spec: unknown, metadata?: object) =>
    adaptResources(
      `kubernetes:${kind(name).group}/${version}:${name}`,
      { ...object(kind(name), version, spec), ...(metadata === undefined ? {} : { metadata }) },
      "t",
    ).flatMap((v) =>
      judge(v, ALL_RULES, {})
        .filter((r) => r.rule.id === UNJUDGED)
        .flatMap((r) => r.findings.map((f) => f.path)),
    );

  it.each([
    [
      "a pod field in another case inside an operator's pod template",
      "Sandbox",
      "v1beta1",
      { podTemplate: over(pod(), { spec: { HostNetwork: true } }) },
      ["spec.podTemplate.spec.HostNetwork"],
    ],
    [
      "a key beside metadata and spec in a core pod template",
      "RayCluster",
      "v1",
      over(rayCluster(), { headGroupSpec: { template: { sidecars: [{ name: "x" }] } } }),
      ["spec.headGroupSpec.template.sidecars"],
    ],
    [
      "a key of a newer KubeRay release (authOptions)",
      "RayCluster",
      "v1",
      { ...rayCluster(), authOptions: { mode: "token" } },
      ["spec.authOptions"],
    ],
    [
      "a v1 field written in a v1alpha1 object",
      "RayCluster",
      "v1alpha1",
      { ...rayCluster(), managedBy: "ray.io/kuberay-operator" },
      ["spec.managedBy"],
    ],
    [
      "a container field outside the claimed schema in the autoscaler's securityContext",
      "RayCluster",
      "v1",
      {
        ...rayCluster(),
        enableInTreeAutoscaling: true,
        autoscalerOptions: { securityContext: { privilegedMode: true } },
      },
      ["spec.autoscalerOptions.securityContext.privilegedMode"],
    ],
    [
      "environment variables a claim adds to the pod",
      "SandboxClaim",
      "v1beta1",
      { warmPoolRef: { name: "p" }, env: [{ name: "TOKEN", value: "x" }] },
      ["spec.env"],
    ],
    [
      "a mesh injector label the operator adds to the head pod",
      "RayCluster",
      "v1",
      over(rayCluster(), { headGroupSpec: { labels: { "sidecar.istio.io/inject": "true" } } }),
      ["spec.headGroupSpec.labels"],
    ],
    [
      "a ray start flag that carries a credential",
      "RayCluster",
      "v1",
      over(rayCluster(), { headGroupSpec: { rayStartParams: { "redis-password": "hunter2" } } }),
      ["spec.headGroupSpec.rayStartParams"],
    ],
    [
      "a mesh injector annotation in a Ray pod template's metadata",
      "RayCluster",
      "v1",
      over(rayCluster(), {
        headGroupSpec: { template: { metadata: { annotations: { "linkerd.io/inject": "enabled" } } } },
      }),
      ["spec.headGroupSpec.template.metadata.annotations.linkerd.io/inject"],
    ],
    [
      "a key outside agent-sandbox's own pod metadata type",
      "SandboxTemplate",
      "v1beta1",
      { podTemplate: over(pod(), { metadata: { namespace: "kube-system" } }) },
      ["spec.podTemplate.metadata.namespace"],
    ],
    ["a spec that is not an object", "SandboxWarmPool", "v1beta1", "replicas: 3", ["spec"]],
  ])("%s", (_, name, version, spec, want) => {
    expect(paths(name, version, spec)).toEqual(want);
  });

  it("a refused field at its zero value passes (an empty list of claim variables)", () => {
    expect(paths("SandboxClaim", "v1beta1", { warmPoolRef: { name: "p" }, env: [] })).toEqual([]);
  });

  it("annotations of the object the operator acts on fail closed; other keys are data", () => {
    expect(
      paths("Sandbox", "v1beta1", HARDENED.Sandbox?.("v1beta1"), {
        name: "t",
        annotations: { "agents.x-k8s.io/pod-name": "other", note: "x" },
      }),
    ).toEqual(["metadata.annotations.agents.x-k8s.io/pod-name"]);
    expect(
      paths("RayCluster", "v1", rayCluster(), { name: "t", annotations: { "ray.io/ft-enabled": "True" } }),
    ).toEqual(["metadata.annotations.ray.io/ft-enabled"]);
    expect(
      paths("RayCluster", "v1", rayCluster(), { name: "t", annotations: { "ray.io/ft-enabled": "false" } }),
    ).toEqual([]);
  });

  it("the rule's allowFields accepts a named operator field", () => {
    const views = adaptResources(
      "kubernetes:extensions.agents.x-k8s.io/v1beta1:SandboxClaim",
      object(kind("SandboxClaim"), "v1beta1", {
        warmPoolRef: { name: "p" },
        env: [{ name: "A", value: "b" }],
      }),
      "t",
    );
    const rule = ALL_RULES.find((r) => r.id === UNJUDGED);
    if (rule === undefined) throw new Error("no rule");
    expect(
      views.flatMap((v) =>
        judge(v, [rule], { [UNJUDGED]: { allowFields: ["SandboxClaim.env"] } }).flatMap((r) => r.findings),
      ),
    ).toEqual([]);
  });
});

describe("the pack judges the operators' fields as scan does", () => {
  it.each([
    [
      "kubernetes:extensions.agents.x-k8s.io/v1beta1:SandboxClaim",
      { warmPoolRef: { name: "p" }, env: [{ name: "A", value: "b" }] },
      "spec.env",
    ],
    [
      "kubernetes:ray.io/v1:RayCluster",
      { ...rayCluster(), authOptions: { mode: "token" } },
      "spec.authOptions",
    ],
    ["kubernetes:agents.x-k8s.io/v1alpha1:Sandbox", { podTemplate: pod() }, "apiVersion"],
  ])("%s", (type, spec, path) => {
    const props = { metadata: { name: "t", namespace: "agents" }, spec };
    const pack = validate(type, props).violations.filter((v) => v.policy === UNJUDGED);
    expect(pack.map((v) => v.message.startsWith(`${path} is not allowed`))).toEqual([true]);
    const scan = adaptResources(type, props, "fixture").flatMap((v) =>
      judge(v, ALL_RULES, {})
        .filter((r) => r.rule.id === UNJUDGED)
        .flatMap((r) => r.findings.map((f) => `${f.message} [${f.path}]`)),
    );
    // The pack renders the path after the message.
    expect(scan).toEqual(pack.map((v) => v.message));
  });

  it("a hardened object of each pinned kind passes the pack", () => {
    for (const k of KINDS) {
      const [version] = Object.keys(k.versions);
      const props = object(k, version ?? "", HARDENED[k.kind]?.(version ?? ""));
      const violations = validate(`kubernetes:${k.group}/${version}:${k.kind}`, props).violations;
      expect(
        violations.filter((v) => !(BY_DESIGN[k.kind] ?? []).includes(v.policy)),
        k.kind,
      ).toEqual([]);
    }
  });
});
