/**
 * The shared parts of the operators' conformance tests (crd-verdicts.test.ts, crd-attacks.test.ts): every pinned kind,
 * a hardened object of each, and how an object's views are judged.
 */
import { ALL_RULES, judge } from "../../../../policy/rules/registry";
import type { Shape } from "../../../../policy/sources/docker/shape";
import type { Operator } from "../../../../policy/sources/kubernetes/crd-fields";
import { CRD_SCHEMAS } from "../../../../policy/sources/kubernetes/crds.generated";
import { adaptResources } from "../../../../policy/sources/subject";
import type { Subject } from "../../../../policy/workload";
import { safePodSpec } from "../../fixtures";
import { ARGO_HARDENED } from "./crd-hardened-argo";
import { KEDA_HARDENED } from "./crd-hardened-keda";
import { KNATIVE_BY_DESIGN, KNATIVE_HARDENED, KNATIVE_METADATA } from "./crd-hardened-knative";
import { HARDENED_ROLLOUTS } from "./crd-hardened-rollouts";
import { SPARK_BY_DESIGN, SPARK_HARDENED } from "./crd-hardened-spark";
import { TEKTON_HARDENED, TEKTON_NEEDS_RUN, tektonStepViews } from "./crd-hardened-tekton";

export const UNJUDGED = "sandbox-disallow-unjudged-fields";
export const META = { labels: { "sandbox.project": "demo", "sandbox.role": "task" } };

export const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** `b` laid over `a`: objects merged key by key, lists element by element, anything else replaced. */
export function over(a: unknown, b: unknown): unknown {
  if (Array.isArray(a) && Array.isArray(b)) return b.map((x, i) => over(a[i], x));
  if (!isObj(a) || !isObj(b)) return b;
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = over(a[k], v);
  return out;
}

export const pod = () => ({ metadata: META, spec: safePodSpec() });
export const rayCluster = () => ({
  headGroupSpec: { rayStartParams: { "dashboard-host": "0.0.0.0" }, template: pod() },
  workerGroupSpecs: [
    { groupName: "w", replicas: 1, minReplicas: 1, maxReplicas: 1, rayStartParams: {}, template: pod() },
  ],
});

export const trainingRuntime = () => ({
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
export const HARDENED: Readonly<Record<string, (version: string) => object>> = {
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
  ...KNATIVE_HARDENED,
  ...KEDA_HARDENED,
};

/** Kinds judged only inside another object that names them: the views of that object, with it resolved. */
export const CARRIED_BY: Readonly<Record<string, (object: object) => Subject[]>> = {
  StepAction: tektonStepViews,
};

export interface PinnedKind {
  readonly operator: Operator;
  readonly group: string;
  readonly kind: string;
  readonly versions: Readonly<Record<string, Shape>>;
}

export const KINDS: readonly PinnedKind[] = (Object.keys(CRD_SCHEMAS) as Operator[]).flatMap((operator) =>
  Object.entries(
    CRD_SCHEMAS[operator].kinds as Record<string, Record<string, Record<string, Shape>>>,
  ).flatMap(([group, kinds]) =>
    Object.entries(kinds).map(([kind, versions]) => ({ operator, group, kind, versions })),
  ),
);

/** Every field path of a shape with its shape, as fieldPaths lists them. */
export function fieldShapes(s: Shape, base = ""): [string, Shape][] {
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

export const leaf = (s: Shape): Shape => (s.k === "ptr" ? leaf(s.to) : s);

export function object(k: PinnedKind, version: string, spec: unknown) {
  return {
    apiVersion: `${k.group}/${version}`,
    kind: k.kind,
    metadata: { name: "t", namespace: "agents", ...(KNATIVE_METADATA[k.kind] ?? {}) },
    spec,
  };
}

export function views(k: PinnedKind, version: string, spec: unknown) {
  return adaptResources(`kubernetes:${k.group}/${version}:${k.kind}`, object(k, version, spec), "t");
}

/**
 * Rules every object of a kind fails by its operator's design, or that a hardened object of the kind cannot pass alone
 * (the run that starts it sets what they read), each helper saying why: left out of `failing`.
 */
export const BY_DESIGN: Readonly<Record<string, readonly string[]>> = {
  ...SPARK_BY_DESIGN,
  ...TEKTON_NEEDS_RUN,
  ...KNATIVE_BY_DESIGN,
};

export function failing(k: PinnedKind, version: string, spec: unknown, config = {}): string[] {
  const expected = BY_DESIGN[k.kind] ?? [];
  const carried = CARRIED_BY[k.kind]?.(object(k, version, spec)) ?? [];
  return [...views(k, version, spec), ...carried].flatMap((v) =>
    judge(v, ALL_RULES, config)
      .filter((r) => r.findings.some((f) => !f.unchecked) && !expected.includes(r.rule.id))
      .map((r) => r.rule.id),
  );
}

export function unjudged(
  k: PinnedKind,
  version: string,
  spec: unknown,
): { path?: string; message: string }[] {
  return views(k, version, spec).flatMap((v) =>
    judge(v, ALL_RULES, {})
      .filter((r) => r.rule.id === UNJUDGED)
      .flatMap((r) => r.findings.map((f) => ({ path: f.path, message: f.message }))),
  );
}

/** A value of a path pattern's parent objects holding `value` (`a.b[].c` -> `{a: {b: [{c: value}]}}`). */
export function placed(path: string, value: unknown): unknown {
  return path
    .split(".")
    .reverse()
    .reduce<unknown>(
      (v, part) => (part.endsWith("[]") ? { [part.slice(0, -2)]: [v] } : { [part]: v }),
      value,
    );
}
