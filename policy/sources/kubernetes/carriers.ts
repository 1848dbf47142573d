/**
 * Where a Kubernetes object keeps its pods. Known kinds come from a table (built-in kinds in any group, custom
 * resources by their own group, since a CRD may reuse a built-in Kind name with another shape); custom resources
 * whose pods are not a plain pod template are rebuilt by `crd-pods.ts`; any other object is searched by shape
 * (`pod-shape.ts`). Each pod found is one {@link PodSite}.
 */
import { isUnknown } from "../../workload";
import { at, entries, field, join } from "../lenient";
import { synthesizedSites } from "./crd-pods";
import { withRayOperator } from "./crd-ray";
import { shapeSites } from "./pod-shape";
import { type KubeType, type PodSite, parseKubeType } from "./sites";

/** How one known kind keeps its pods. Paths are patterns: `[]` is every list element, `*` every map value. */
interface Carrier {
  /** API groups the Kind is read in; absent: any group (the built-in kinds, also served by old groups). */
  readonly groups?: readonly string[];
  /** Pod templates (`metadata` + `spec`); "" is the object itself (a Pod). */
  readonly templates?: readonly string[];
  /** Bare pod specs. */
  readonly specs?: readonly string[];
  /** The template's parent is a JobSpec (backoffLimit, activeDeadlineSeconds, ttlSecondsAfterFinished). */
  readonly job?: boolean;
  /** The sibling of the template that counts copies (`replicas`, `parallelism`). */
  readonly replicas?: string;
  readonly controller: boolean;
  readonly defaultAlways?: boolean;
}

const CONTROLLER = { replicas: "replicas", controller: true } as const;

/**
 * Built-in kinds: k8s.io/api (core/v1, apps/v1, batch/v1) and their old groups (extensions, apps/v1beta*, batch/v2alpha1).
 * Custom resources, each from its project's API reference:
 * - agent-sandbox (kubernetes-sigs/agent-sandbox, agents.x-k8s.io): Sandbox/SandboxTemplate `spec.podTemplate`;
 * - Argo Rollouts (argoproj.io Rollout): `spec.template`, like a Deployment (a `workloadRef` names the object
 *   whose template it copies: references-rollouts.ts); Experiment `spec.templates[].template` (its analysis
 *   kinds' job metrics are read by crd-rollouts.ts);
 * - OpenShift (apps.openshift.io DeploymentConfig): `spec.template`;
 * - OpenKruise (apps.kruise.io CloneSet, Advanced StatefulSet/DaemonSet, BroadcastJob; AdvancedCronJob's
 *   `spec.template.jobTemplate` / `broadcastJobTemplate`);
 * - Kubeflow training operator (kubeflow.org PyTorchJob, TFJob, MPIJob, XGBoostJob, PaddleJob, JAXJob):
 *   `spec.<framework>ReplicaSpecs.<role>.template`; Notebook `spec.template`;
 * - KubeRay (ray.io RayCluster `spec.headGroupSpec.template`, `spec.workerGroupSpecs[].template`; RayJob under
 *   `spec.rayClusterSpec` and `spec.submitterPodTemplate`; RayService under `spec.rayClusterConfig`);
 * - Flink Kubernetes operator (flink.apache.org FlinkDeployment `spec.podTemplate`, `spec.jobManager.podTemplate`,
 *   `spec.taskManager.podTemplate`: each a Pod);
 * - Volcano (batch.volcano.sh Job `spec.tasks[].template`);
 * - KEDA (keda.sh ScaledJob `spec.jobTargetRef`, a JobSpec: keda.sh/docs/latest/reference/scaledjob-spec);
 * - Kubeflow Trainer v2 (trainer.kubeflow.org TrainingRuntime, ClusterTrainingRuntime: a JobSet spec under
 *   `spec.template.spec`, its jobs' pods at `replicatedJobs[].template.spec.template`);
 * - JobSet (jobset.x-k8s.io `spec.replicatedJobs[].template.spec.template`); LeaderWorkerSet
 *   (leaderworkerset.x-k8s.io `spec.leaderWorkerTemplate.leaderTemplate` / `workerTemplate`);
 * - Knative Serving (serving.knative.dev Service/Configuration `spec.template`, Revision `spec` is a pod spec).
 */
const CARRIERS: Readonly<Record<string, readonly Carrier[]>> = {
  Pod: [{ templates: [""], controller: false, defaultAlways: true }],
  PodTemplate: [{ templates: ["template"], controller: false }],
  Deployment: [{ templates: ["spec.template"], ...CONTROLLER }],
  StatefulSet: [{ templates: ["spec.template"], ...CONTROLLER }],
  DaemonSet: [{ templates: ["spec.template"], controller: true }],
  ReplicaSet: [{ templates: ["spec.template"], ...CONTROLLER }],
  ReplicationController: [{ templates: ["spec.template"], ...CONTROLLER }],
  Job: [
    { groups: ["batch.volcano.sh"], templates: ["spec.tasks[].template"], ...CONTROLLER, controller: false },
    { templates: ["spec.template"], job: true, replicas: "parallelism", controller: false },
  ],
  CronJob: [
    { templates: ["spec.jobTemplate.spec.template"], job: true, replicas: "parallelism", controller: false },
  ],
  Sandbox: [{ templates: ["spec.podTemplate"], ...CONTROLLER }],
  SandboxTemplate: [{ templates: ["spec.podTemplate"], controller: true }],
  Rollout: [{ groups: ["argoproj.io"], templates: ["spec.template"], ...CONTROLLER }],
  Experiment: [{ groups: ["argoproj.io"], templates: ["spec.templates[].template"], ...CONTROLLER }],
  DeploymentConfig: [{ groups: ["apps.openshift.io"], templates: ["spec.template"], ...CONTROLLER }],
  CloneSet: [{ groups: ["apps.kruise.io"], templates: ["spec.template"], ...CONTROLLER }],
  BroadcastJob: [{ groups: ["apps.kruise.io"], templates: ["spec.template"], job: true, controller: false }],
  AdvancedCronJob: [
    {
      groups: ["apps.kruise.io"],
      templates: [
        "spec.template.jobTemplate.spec.template",
        "spec.template.broadcastJobTemplate.spec.template",
      ],
      job: true,
      controller: false,
    },
  ],
  ...Object.fromEntries(
    ["PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob", "JAXJob", "MXJob"].map((k) => [
      k,
      [
        {
          groups: ["kubeflow.org"],
          templates: ["spec.*ReplicaSpecs.*.template"],
          ...CONTROLLER,
          controller: false,
        },
      ],
    ]),
  ),
  Notebook: [{ groups: ["kubeflow.org"], templates: ["spec.template"], controller: true }],
  RayCluster: [
    {
      groups: ["ray.io"],
      templates: ["spec.headGroupSpec.template", "spec.workerGroupSpecs[].template"],
      ...CONTROLLER,
    },
  ],
  RayJob: [
    {
      groups: ["ray.io"],
      templates: [
        "spec.rayClusterSpec.headGroupSpec.template",
        "spec.rayClusterSpec.workerGroupSpecs[].template",
        "spec.submitterPodTemplate",
      ],
      ...CONTROLLER,
    },
  ],
  RayService: [
    {
      groups: ["ray.io"],
      templates: [
        "spec.rayClusterConfig.headGroupSpec.template",
        "spec.rayClusterConfig.workerGroupSpecs[].template",
      ],
      ...CONTROLLER,
    },
  ],
  FlinkDeployment: [
    {
      groups: ["flink.apache.org"],
      templates: ["spec.podTemplate", "spec.jobManager.podTemplate", "spec.taskManager.podTemplate"],
      controller: true,
    },
  ],
  ScaledJob: [
    { groups: ["keda.sh"], templates: ["spec.jobTargetRef.template"], job: true, controller: false },
  ],
  JobSet: [
    {
      groups: ["jobset.x-k8s.io"],
      templates: ["spec.replicatedJobs[].template.spec.template"],
      job: true,
      replicas: "parallelism",
      controller: false,
    },
  ],
  ...Object.fromEntries(
    ["TrainingRuntime", "ClusterTrainingRuntime"].map((k) => [
      k,
      [
        {
          groups: ["trainer.kubeflow.org"],
          templates: ["spec.template.spec.replicatedJobs[].template.spec.template"],
          job: true,
          replicas: "parallelism",
          controller: false,
        },
      ],
    ]),
  ),
  LeaderWorkerSet: [
    {
      groups: ["leaderworkerset.x-k8s.io"],
      templates: ["spec.leaderWorkerTemplate.leaderTemplate", "spec.leaderWorkerTemplate.workerTemplate"],
      controller: true,
    },
  ],
  Service: [{ groups: ["serving.knative.dev"], templates: ["spec.template"], controller: true }],
  Configuration: [{ groups: ["serving.knative.dev"], templates: ["spec.template"], controller: true }],
  Revision: [{ groups: ["serving.knative.dev"], specs: ["spec"], controller: true }],
};

/** The Kinds read from the table (custom resources rebuilt by crd-pods.ts come on top), for the pack's wiring. */
export const POD_CARRIER_KINDS: readonly string[] = Object.keys(CARRIERS);

/** The custom resources the table reads, each in its own group (the built-in kinds aside). */
export function carrierCustomKinds(): { group: string; kind: string }[] {
  return Object.entries(CARRIERS).flatMap(([kind, all]) =>
    all.flatMap((c) => (c.groups ?? []).map((group) => ({ group, kind }))),
  );
}

function carrierOf(t: KubeType): Carrier | undefined {
  const all = CARRIERS[t.kind];
  if (all === undefined || !Object.hasOwn(CARRIERS, t.kind)) return undefined;
  return (
    all.find((c) => c.groups?.includes(t.group)) ??
    all.find((c) => c.groups === undefined && !(t.kind === "Service" || t.kind === "Configuration"))
  );
}

/** True when the table reads the kind: a custom resource in its own group, a built-in kind in a built-in group. */
export function readsCarrierKind(t: KubeType): boolean {
  const c = carrierOf(t);
  return c !== undefined && (c.groups !== undefined || isBuiltInGroup(t.group));
}

/** Follows a display path with list indexes (`spec.tasks[0].template.spec`); unknown stays unknown. */
export function follow(o: unknown, path: string): unknown {
  let cur = o;
  for (const part of path.split(".")) {
    const m = /^([^[]*)((?:\[\d+\])*)$/.exec(part);
    const key = m?.[1] ?? part;
    if (key !== "") cur = field(cur, key);
    for (const idx of (m?.[2] ?? "").matchAll(/\[(\d+)\]/g)) {
      if (isUnknown(cur)) return cur;
      cur = Array.isArray(cur) ? cur[Number(idx[1])] : undefined;
      if (cur === null) cur = undefined;
    }
  }
  return cur;
}

/** Expands a path pattern over an object: concrete paths of every value it names (absent ones left out). */
export function expand(o: unknown, pattern: string): { path: string; value: unknown }[] {
  let cur: { path: string; value: unknown }[] = [{ path: "", value: o }];
  if (pattern === "") return cur;
  for (const seg of pattern.split(".")) {
    const next: { path: string; value: unknown }[] = [];
    const listed = seg.endsWith("[]");
    const key = listed ? seg.slice(0, -2) : seg;
    for (const { path, value } of cur) {
      const matches: (readonly [string, unknown])[] = key.includes("*")
        ? entries(value).filter(([k]) => new RegExp(`^${key.replace(/\*/g, ".*")}$`).test(k))
        : [[key, field(value, key)]];
      for (const [k, v] of matches) {
        if (v === undefined) continue;
        const p = join(path, k);
        if (listed && Array.isArray(v))
          v.forEach((x, i) => {
            next.push({ path: join(p, i), value: x });
          });
        else next.push({ path: p, value: v });
      }
    }
    cur = next;
  }
  return cur;
}

function parentOf(path: string): string | undefined {
  if (path === "") return undefined;
  const i = path.lastIndexOf(".");
  return i < 0 ? "" : path.slice(0, i);
}

function tableSites(c: Carrier, props: unknown): PodSite[] {
  const out: PodSite[] = [];
  const common = { props, controller: c.controller, defaultAlways: c.defaultAlways === true };
  for (const pattern of c.templates ?? []) {
    const found = pattern === "" ? [{ path: "", value: props }] : expand(props, pattern);
    for (const { path } of found) {
      const parent = parentOf(path);
      out.push({
        ...common,
        specPath: join(path, "spec"),
        metaPath: join(path, "metadata"),
        ...(c.job && parent !== undefined ? { jobPath: parent } : {}),
        ...(c.replicas !== undefined && parent !== undefined
          ? { replicasPath: join(parent, c.replicas) }
          : {}),
        where: path,
      });
    }
  }
  for (const pattern of c.specs ?? [])
    for (const { path } of expand(props, pattern)) out.push({ ...common, specPath: path, where: path });
  return out;
}

/**
 * Every pod an object runs, or undefined when it runs none the rules can find. A known carrier whose pod is not
 * written yet (a preview unknown) still gives its one site, so the unknown is reported, never taken as "no pod".
 */
export function podSites(type: string, props: unknown): PodSite[] | undefined {
  const t = parseKubeType(type);
  if (t === undefined) return undefined;
  const synthesized = synthesizedSites(t, props);
  if (synthesized !== undefined) return synthesized;
  const c = carrierOf(t);
  if (c !== undefined && (c.groups !== undefined || isBuiltInGroup(t.group))) {
    // KubeRay writes the `ray start` command into each group's Ray container and adds its autoscaler container.
    const ray = t.group === "ray.io" ? withRayOperator(t.kind, props) : undefined;
    const sites =
      ray === undefined
        ? tableSites(c, props)
        : tableSites(c, ray.props).map((s) => ({ ...s, remap: ray.remap }));
    if (sites.length > 0) return sites;
    // A built-in carrier, or a pod not known yet (preview): one site whose missing pod the rules report, never
    // "no pod". A custom resource that writes no pod (an Argo Rollout with a `workloadRef`) runs none itself.
    if (isBuiltInGroup(t.group) || isUnknown(props) || isUnknown(field(props, "spec")))
      return tableFallback(c, props);
    return undefined;
  }
  // Unknown kinds, and a built-in Kind name reused by a custom resource of another shape: found by shape.
  if (c !== undefined && isUnknown(at(props, "spec"))) return tableFallback(c, props);
  const shaped = shapeSites(props);
  return shaped.length > 0 ? shaped : undefined;
}

/** Groups whose Kinds have the built-in schema (the API server prunes anything else). */
function isBuiltInGroup(group: string): boolean {
  return (
    group === "core" ||
    group === "apps" ||
    group === "batch" ||
    group === "extensions" ||
    group === "agents.x-k8s.io" ||
    group === "extensions.agents.x-k8s.io"
  );
}

/** The table's first site, even when its pod is absent or unknown: the rules then report what is missing. */
function tableFallback(c: Carrier, props: unknown): PodSite[] {
  const first = c.templates?.[0] ?? c.specs?.[0];
  if (first === undefined) return [];
  // A pattern over a list or map names no single place: the unknown (or absent) `spec` is what is reported.
  const simple = !first.includes("[]") && !first.includes("*");
  if (c.specs !== undefined && c.templates === undefined)
    return [
      { props, specPath: simple ? first : "spec", controller: c.controller, defaultAlways: false, where: "" },
    ];
  const pattern = simple ? first : "spec.template";
  const parent = parentOf(pattern);
  return [
    {
      props,
      specPath: join(pattern, "spec"),
      metaPath: join(pattern, "metadata"),
      ...(c.job && parent !== undefined ? { jobPath: parent } : {}),
      ...(c.replicas !== undefined && parent !== undefined ? { replicasPath: join(parent, c.replicas) } : {}),
      controller: c.controller,
      defaultAlways: c.defaultAlways === true,
      where: pattern,
    },
  ];
}

/** True when the type token is an object that runs pods the rules can find (by table, rebuild or shape). */
export function isPodCarrierType(type: string, props?: unknown): boolean {
  const t = parseKubeType(type);
  if (t === undefined) return false;
  if (props === undefined) return carrierOf(t) !== undefined;
  return (podSites(type, props) ?? []).length > 0;
}
