/**
 * Verdicts of the parts of Argo Workflows' kinds that recur (github.com/argoproj/argo-workflows/v3
 * pkg/apis/workflow/v1alpha1, the version crds.generated.ts pins): artifacts, arguments, the steps and DAG tasks
 * that call templates, and the small core values (a ConfigMap key, a label selector) whose well-formed values are
 * as good as unset. Reasons from the controller's and the executor's own source (workflow/controller/workflowpod.go,
 * operator.go, steps.go, dag.go; workflow/executor; workflow/artifacts). Used by ./argo-workflows.ts.
 */
import { inert, isGoZero, judged, refused, type UnjudgedField, type Verdict } from "../../verdict";
import { injectorFields } from "../fields";

export const PRIV = "sandbox-disallow-privileged";
export const UNJUDGED = "sandbox-disallow-unjudged-fields";
/** A placeholder no declared value fills, left where it could weaken a wall. */
export const READABLE = "sandbox-require-readable-values";

const isPlain = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;

/** An object whose keys are all named, each of the type named. */
const only =
  (fields: Readonly<Record<string, "string" | "boolean" | "strings">>) =>
  (v: unknown): boolean =>
    isPlain(v) &&
    Object.entries(v).every(([k, x]) => {
      const t = Object.hasOwn(fields, k) ? fields[k] : undefined;
      if (t === undefined) return false;
      if (t === "strings") return isPlain(x) && Object.values(x).every((s) => typeof s === "string");
      return typeof x === t;
    });

/** A well-formed core/v1.ConfigMapKeySelector (name, key, optional). */
export const keySelector = only({ name: "string", key: "string", optional: "boolean" });

/** A well-formed meta/v1.LabelSelector of the claimed version. */
export function labelSelector(v: unknown): boolean {
  if (!isPlain(v)) return false;
  return Object.entries(v).every(([k, x]) => {
    if (k === "matchLabels") return isPlain(x) && Object.values(x).every((s) => typeof s === "string");
    if (k !== "matchExpressions" || !Array.isArray(x)) return false;
    return x.every(
      (e) =>
        isPlain(e) &&
        Object.entries(e).every(([ek, ev]) =>
          ek === "values"
            ? Array.isArray(ev) && ev.every((s) => typeof s === "string")
            : (ek === "key" || ek === "operator") && typeof ev === "string",
        ),
    );
  });
}

/** Pod metadata with no mesh injector's label or annotation turned on (fields.ts `injectorFields`). */
export function noInjector(v: unknown): boolean {
  const out: UnjudgedField[] = [];
  injectorFields(v, "", out);
  return isPlain(v) && out.length === 0;
}

export const POD_METADATA =
  "the controller writes these labels and annotations on the step's pod (workflowpod.go `addMetadata`), which the rules judge without them: a mesh injector's key (sidecar.istio.io/inject, linkerd.io/inject, ...) adds containers at admission that no rule saw; other keys pass";

/** A core/v1.LocalObjectReference list (imagePullSecrets), each naming an object and nothing else. */
export const namesOnly = (v: unknown): boolean => Array.isArray(v) && v.every(only({ name: "string" }));

const CONFIGMAP =
  "the controller reads the value from a ConfigMap when the workflow runs: core/v1.ConfigMapKeySelector holds only name, key and optional";

/**
 * A location's keys that only name an object inside the artifact repository the cluster's configuration gives
 * (workflow/artifacts: the repository's endpoint, bucket and credentials fill the rest).
 */
const KEY_ONLY: Readonly<Record<string, string>> = {
  s3: "key",
  gcs: "key",
  oss: "key",
  azure: "blob",
  hdfs: "path",
};

const LOCATION = (where: string) =>
  `the executor's init and wait containers reach this ${where} storage with the credentials its Secret references name (workflowpod.go mounts each Secret into them, workflow/artifacts), an address and Secrets no rule reads; only a key inside the cluster's configured artifact repository passes`;

/** The verdicts of an artifact location's storages at `base` (an Artifact, an ArtifactLocation). */
export function locations(base: string): Record<string, Verdict> {
  const out: Record<string, Verdict> = {};
  for (const [s, key] of Object.entries(KEY_ONLY))
    out[`${base}.${s}`] = refused(
      LOCATION(s),
      (v) =>
        isPlain(v) && Object.entries(v).every(([k, x]) => (k === key ? typeof x === "string" : isGoZero(x))),
    );
  out[`${base}.artifactory`] = refused(LOCATION("Artifactory"));
  out[`${base}.git`] = refused(
    "the executor clones this repository with the user, password or SSH key from the Secrets named (mounted into its containers), and may skip host-key and TLS checks; no rule reads any of it",
  );
  out[`${base}.http`] = refused(
    "the executor fetches this URL with headers and client certificates or OAuth credentials from the Secrets named; no rule reads the address or the Secrets",
  );
  out[`${base}.raw`] = inert("text the executor writes as the artifact's file; nothing is fetched");
  out[`${base}.archiveLogs`] = inert(
    "whether the main container's logs are saved to the artifact repository",
  );
  return out;
}

/** The verdicts of an Artifact at `base`. */
export function artifact(base: string): Record<string, Verdict> {
  const own: Record<string, Verdict> = base.endsWith("[]")
    ? {}
    : {
        [base]: inert(
          "a file the executor places in, or takes from, the step's pod; where it is fetched from has its own verdict",
        ),
      };
  return {
    ...own,
    [`${base}.mode`]: refused(
      "the executor chmods the artifact's file to this mode inside the task's container; only modes without the setuid and setgid bits pass",
      (v) => typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= 0o777,
    ),
    ...locations(base),
    [`${base}.artifactGC`]: refused(
      "an artifact's own garbage collection runs a pod of the controller's with these pod labels, annotations and service account; no rule reads that pod (only the strategy passes)",
      only({ strategy: "string" }),
    ),
  };
}

/** The verdicts of Arguments (or Inputs, Outputs) at `base`; `hostile` passes a value that makes a pod privileged. */
export function parameters(base: string, hostile: unknown): Record<string, Verdict> {
  return {
    [base]: judged([PRIV, READABLE], hostile),
    [`${base}.parameters`]: judged([PRIV, READABLE], hostile),
    [`${base}.parameters[].valueFrom`]: inert(
      "a value known only when the workflow runs: the reader leaves its placeholders unfilled, unreadable wherever they could weaken a wall (templating.ts)",
    ),
    [`${base}.parameters[].valueFrom.configMapKeyRef`]: refused(CONFIGMAP, keySelector),
    [`${base}.parameters[].enum`]: inert("the values a submitter may choose from; the value is judged"),
    [`${base}.parameters[].description`]: inert("text shown in the UI"),
    [`${base}.parameters[].globalName`]: inert("the name the value is exported under"),
    ...artifact(`${base}.artifacts[]`),
  };
}

const REF =
  "it names a WorkflowTemplate's template, run inside this workflow: references.ts adds that object's templates to the workflow's, judged with them, and one the input does not hold fails closed";

/** The verdicts of a step or DAG task at `base` (WorkflowStep, DAGTask); `hostile` (`hookHostile` from a hook) passes a hostile value. */
export function call(base: string, hostile: unknown, hookHostile: unknown): Record<string, Verdict> {
  const hookBase = `${base}.hooks{}`;
  return {
    [`${base}.inline`]: refused(
      "the controller runs an inline template as its own step (steps.go, dag.go), a pod the readers do not build: write it under `templates` and call it by name",
    ),
    [`${base}.templateRef`]: inert(REF),
    ...parameters(`${base}.arguments`, hostile),
    [`${base}.withItems`]: inert(
      "the values of `{{item}}`: the reader never fills that placeholder, so it is unreadable wherever it could weaken a wall",
    ),
    [`${base}.hooks`]: inert(
      "templates of the workflow run when the expression holds; each is judged as its own",
    ),
    [`${hookBase}.templateRef`]: inert(REF),
    ...parameters(`${hookBase}.arguments`, hookHostile),
  };
}
