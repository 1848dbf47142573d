/**
 * The fields of an operator's object whose CRD schema the project pins (crds.generated.ts, from the operator's own
 * API package): every key under `spec` is a field of the pinned version's schema, with a verdict in the operator's
 * table (crd-verdicts/), as a pod's fields are (fields.ts). A key outside the schema fails closed where it is
 * written (the operator decodes names exactly as written, and a newer release may act on it); a refused field fails
 * when set to anything but Go's zero value or a value its verdict allows. Core Kubernetes values inside (a pod
 * template, a container's env) are checked against the claimed Kubernetes version (fields.ts `coreFields`), and the
 * metadata of every pod the carriers read for mesh injectors.
 */
import { isUnknown } from "../../workload";
import type { Shape } from "../docker/shape";
import { at, field, join } from "../lenient";
import { isGoZero, type UnjudgedField, type VerdictTable } from "../verdict";
import { follow, podSites } from "./carriers";
import { AGENT_SANDBOX_ANNOTATIONS, AGENT_SANDBOX_VERDICTS } from "./crd-verdicts/agent-sandbox";
import { ARGO_ROLLOUTS_VERDICTS } from "./crd-verdicts/argo-rollouts";
import { ARGO_WORKFLOWS_VERDICTS } from "./crd-verdicts/argo-workflows";
import { KEDA_VERDICTS } from "./crd-verdicts/keda";
import {
  KNATIVE_ANNOTATION_DOMAINS,
  KNATIVE_ANNOTATIONS,
  KNATIVE_SERVING_VERDICTS,
} from "./crd-verdicts/knative-serving";
import { KUBEFLOW_TRAINER_VERDICTS } from "./crd-verdicts/kubeflow-trainer";
import { KUBERAY_ANNOTATIONS, KUBERAY_VERDICTS } from "./crd-verdicts/kuberay";
import { SPARK_OPERATOR_VERDICTS } from "./crd-verdicts/spark-operator";
import { TEKTON_VERDICTS } from "./crd-verdicts/tekton";
import { CRD_SCHEMAS } from "./crds.generated";
import { type FieldWalk, walkFields } from "./field-walk";
import { coreFields, injectorFields } from "./fields";
import type { KubeType } from "./sites";

/** The name of an operator whose schema is pinned: a key of CRD_SCHEMAS. */
export type Operator = keyof typeof CRD_SCHEMAS;

/** Each pinned operator's verdicts, keyed `<Kind>.<path under spec>` (lists `[]`, maps `{}`). */
export const CRD_VERDICTS: Readonly<Record<Operator, VerdictTable>> = {
  "agent-sandbox": AGENT_SANDBOX_VERDICTS,
  kuberay: KUBERAY_VERDICTS,
  "kubeflow-trainer": KUBEFLOW_TRAINER_VERDICTS,
  "argo-workflows": ARGO_WORKFLOWS_VERDICTS,
  "argo-rollouts": ARGO_ROLLOUTS_VERDICTS,
  "spark-operator": SPARK_OPERATOR_VERDICTS,
  tekton: TEKTON_VERDICTS,
  "knative-serving": KNATIVE_SERVING_VERDICTS,
  keda: KEDA_VERDICTS,
};

/**
 * Annotations of the object itself each operator acts on, by key: a refused one fails unless its value is allowed;
 * any other key is data, except under a prefix of ANNOTATION_PREFIXES.
 */
export const CRD_ANNOTATIONS: Readonly<Record<Operator, VerdictTable>> = {
  "agent-sandbox": AGENT_SANDBOX_ANNOTATIONS,
  kuberay: KUBERAY_ANNOTATIONS,
  "kubeflow-trainer": {},
  "argo-workflows": {},
  "argo-rollouts": {},
  "spark-operator": {},
  tekton: {},
  "knative-serving": KNATIVE_ANNOTATIONS,
  keda: {},
};

/**
 * Metadata inside a kind's spec whose annotations the operator reads as its own (Knative copies a revision
 * template's onto each Revision it stamps, where the autoscaler and the revision reconciler read them).
 */
const ANNOTATED_TEMPLATES: Partial<Record<Operator, Readonly<Record<string, string>>>> = {
  "knative-serving": { Service: "spec.template.metadata", Configuration: "spec.template.metadata" },
};

/**
 * Annotation keys an operator reads by prefix, on every kind of it:
 *
 * - `closed`: a domain the operator reads (Knative Serving's controllers): a key under it with no verdict in
 *   CRD_ANNOTATIONS fails closed (the domain compared in lower case, as the keys' domains are written);
 * - `refused`: a family the operator acts on whatever its value, refused with `why`. Argo Rollouts' controller sends
 *   a notification of a Rollout's or an AnalysisRun's events to every destination its
 *   `notifications.argoproj.io/subscribe.<trigger>.<service>` (or `…/subscriptions`) annotations name, through the
 *   services of its notifications ConfigMap (utils/record sendNotifications, notifications-engine subscriptions): a
 *   request from the controller, outside the sandbox's egress walls, carrying what the object holds.
 */
type AnnotationPrefix =
  | { readonly prefix: string; readonly verdict: "closed" }
  | { readonly prefix: string; readonly verdict: "refused"; readonly why: string };

const ANNOTATION_PREFIXES: Partial<Record<Operator, readonly AnnotationPrefix[]>> = {
  "knative-serving": KNATIVE_ANNOTATION_DOMAINS.map((prefix) => ({ prefix, verdict: "closed" as const })),
  "argo-rollouts": [
    {
      prefix: "notifications.argoproj.io/subscri",
      verdict: "refused",
      why: "Argo Rollouts' controller sends the object's events to the destinations this annotation names, from the cluster, outside the sandbox's egress walls",
    },
  ],
};

/**
 * Operators that copy the object's own labels onto a pod they run (the Spark operator puts a SparkApplication's
 * labels, Kueue's aside, on its driver and executor pods: submission.go `driverConfOption`, `executorConfOption`;
 * a ScheduledSparkApplication's go to the applications it makes): a mesh injector's label there adds containers no
 * rule saw.
 */
const LABELS_TO_PODS: ReadonlySet<Operator> = new Set(["spark-operator"]);

/**
 * Kinds whose own labels and annotations the operator copies onto the pods it makes: Tekton copies a TaskRun's onto
 * its pod (pkg/pod/pod.go `Build`, `makeLabels`), a Task's onto the TaskRun that runs it (pkg/reconciler/taskrun
 * `storeTaskSpecAndMergeMeta`), and a Pipeline's and a PipelineRun's onto their TaskRuns (pkg/reconciler/pipelinerun).
 */
const POD_METADATA: Readonly<Record<Operator, readonly string[]>> = {
  "agent-sandbox": [],
  kuberay: [],
  "kubeflow-trainer": [],
  "argo-workflows": [],
  "argo-rollouts": [],
  "spark-operator": [],
  tekton: ["Task", "TaskRun", "Pipeline", "PipelineRun"],
  // Knative puts a Revision's labels and annotations on its pods (pkg/reconciler/revision/resources/deploy.go).
  "knative-serving": ["Revision"],
  keda: [],
};

/** Annotations the kubelet reads as a pod's seccomp or AppArmor profile, by prefix. */
const PROFILE_ANNOTATIONS = [
  "seccomp.security.alpha.kubernetes.io/pod",
  "container.seccomp.security.alpha.kubernetes.io/",
  "container.apparmor.security.beta.kubernetes.io/",
];

/** Mesh injectors and security profiles in an object's own metadata that its operator copies onto its pods. */
function copiedMetadata(meta: unknown, operator: string, out: UnjudgedField[]): void {
  injectorFields(meta, "metadata", out);
  const notes = field(meta, "annotations");
  if (!isPlain(notes)) return;
  for (const [key, value] of Object.entries(notes))
    if (
      PROFILE_ANNOTATIONS.some((p) => key.toLowerCase().startsWith(p)) &&
      value !== "runtime/default" &&
      !isUnknown(value)
    )
      out.push({
        path: join("metadata.annotations", key),
        field: `ObjectMeta.annotations{}.${key}`,
        reason: `${operator} copies this annotation onto the pods it makes, where it sets a seccomp or AppArmor profile (${JSON.stringify(value)}) that no rule judged; only runtime/default passes`,
      });
}

type Kinds = Readonly<Record<string, Readonly<Record<string, Readonly<Record<string, Shape>>>>>>;

/** The pinned operator of a kind and the kind's spec shape by version, or undefined when none pins it. */
export function pinnedKind(
  t: Pick<KubeType, "group" | "kind">,
): { operator: Operator; versions: Readonly<Record<string, Shape>> } | undefined {
  for (const operator of Object.keys(CRD_SCHEMAS) as Operator[]) {
    const kinds: Kinds = CRD_SCHEMAS[operator].kinds;
    const group = Object.hasOwn(kinds, t.group) ? kinds[t.group] : undefined;
    const versions = group !== undefined && Object.hasOwn(group, t.kind) ? group[t.kind] : undefined;
    if (versions !== undefined) return { operator, versions };
  }
  return undefined;
}

const isPlain = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;

/** How the reasons name an operator's release. */
const RELEASE: Readonly<Record<Operator, string>> = {
  "agent-sandbox": "agent-sandbox",
  kuberay: "KubeRay",
  "kubeflow-trainer": "Kubeflow Trainer",
  "argo-workflows": "Argo Workflows",
  "argo-rollouts": "Argo Rollouts",
  "spark-operator": "Kubeflow Spark operator",
  tekton: "Tekton Pipelines",
  "knative-serving": "Knative Serving",
  keda: "KEDA",
};

/**
 * Every field of an object of a pinned operator's kind that fails closed, or undefined when no operator's schema
 * is pinned for the kind. An apiVersion the pinned release does not serve fails at `apiVersion`.
 */
export function crdFields(t: KubeType, type: string, props: unknown): UnjudgedField[] | undefined {
  const pinned = pinnedKind(t);
  if (pinned === undefined) return undefined;
  const { module, version } = CRD_SCHEMAS[pinned.operator];
  const release = `${RELEASE[pinned.operator]} ${version} (${module})`;
  const shape = Object.hasOwn(pinned.versions, t.version) ? pinned.versions[t.version] : undefined;
  if (shape === undefined)
    return [
      {
        path: "apiVersion",
        field: `${t.kind}.apiVersion`,
        reason: `${t.group}/${t.version} is not a version of ${t.kind} in ${release}, the release the project claims (it serves ${Object.keys(pinned.versions).join(", ")}): a release that serves it may read fields no rule judged`,
      },
    ];
  const out: UnjudgedField[] = [];
  const w: FieldWalk = {
    malformed: (what, v) =>
      `it is ${what} in ${release}; ${String(JSON.stringify(v)).slice(0, 40)} cannot be read`,
    table: CRD_VERDICTS[pinned.operator],
    name: (p) => `${t.kind}.${p}`,
    key: (p) => `${t.kind}.${p}`,
    notAField: `it is not a field of ${t.kind} in ${release}, the version the project claims, whose operator reads field names exactly as written: a release that knows it acts on what no rule judged`,
    core: coreFields,
    out,
  };
  const spec = field(props, "spec");
  if (spec !== undefined && spec !== null && !isUnknown(spec) && !isPlain(spec))
    out.push({
      path: "spec",
      field: `${t.kind}.spec`,
      reason: `${t.kind}'s spec is an object in ${release}; ${JSON.stringify(spec).slice(0, 40)} cannot be read`,
    });
  walkFields(w, spec, shape, "", "spec");
  annotationFields(pinned.operator, release, field(props, "metadata"), "metadata", t.kind, out);
  const inSpec = ANNOTATED_TEMPLATES[pinned.operator]?.[t.kind];
  if (inSpec !== undefined)
    annotationFields(pinned.operator, release, at(props, inSpec), inSpec, t.kind, out);
  if (LABELS_TO_PODS.has(pinned.operator))
    injectorFields({ labels: field(field(props, "metadata"), "labels") }, "metadata", out);
  if (POD_METADATA[pinned.operator].includes(t.kind))
    copiedMetadata(field(props, "metadata"), RELEASE[pinned.operator], out);
  // Operators' pod metadata is often a type of their own (agent-sandbox's PodMetadata): the injectors are checked
  // on every pod the carriers read, whatever its type, as the carrier reads it (an AnalysisRun's with its arguments
  // substituted).
  for (const site of podSites(type, props) ?? [])
    if (site.metaPath !== undefined && site.remap === undefined)
      injectorFields(follow(site.props, site.metaPath), site.metaPath, out);
  return dedupe(out);
}

/** The annotations of the metadata at `metaPath` an operator acts on that fail closed. */
function annotationFields(
  operator: Operator,
  release: string,
  meta: unknown,
  metaPath: string,
  kind: string,
  out: UnjudgedField[],
): void {
  const notes = field(meta, "annotations");
  if (!isPlain(notes)) return;
  const annotations = CRD_ANNOTATIONS[operator];
  const prefixes = ANNOTATION_PREFIXES[operator] ?? [];
  for (const [key, value] of Object.entries(notes)) {
    const verdict = Object.hasOwn(annotations, key) ? annotations[key] : undefined;
    const path = join(join(metaPath, "annotations"), key);
    const name = `${kind}.${metaPath}.annotations{}.${key}`;
    const family = prefixes.find((f) => f.verdict === "refused" && key.startsWith(f.prefix));
    const domain = prefixes.find((f) => f.verdict === "closed" && key.toLowerCase().startsWith(f.prefix));
    if (family?.verdict === "refused" && !isUnknown(value))
      out.push({ path, field: name, reason: family.why });
    else if (verdict === undefined && domain !== undefined)
      out.push({
        path,
        field: name,
        reason: `${release} reads annotations under ${domain.prefix}, and this key is not one the project knows: the controller may act on it in ways no rule judged`,
      });
    else if (
      verdict?.v === "refused" &&
      !isGoZero(value) &&
      !isUnknown(value) &&
      verdict.allows?.(value) !== true
    )
      out.push({ path, field: name, reason: verdict.why });
  }
}

/** One finding per place and field (a PodTemplateSpec's injectors are found by both walks). */
function dedupe(all: UnjudgedField[]): UnjudgedField[] {
  const seen = new Set<string>();
  return all.filter((f) => {
    const key = `${f.path}\u0000${f.field}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
