/**
 * The fields of a pod spec and its template's metadata that no rule may pass in silence: keys outside the claimed
 * Kubernetes version's PodSpec and ObjectMeta (schema.generated.ts; the API server decodes field names as written,
 * case-sensitive, and a newer server may act on a field this version does not have) and fields whose verdict is
 * refused (verdicts.ts), each where it is written. sandbox-disallow-unjudged-fields turns them into findings.
 */
import type { Shape } from "../docker/shape";
import { field, join } from "../lenient";
import type { UnjudgedField, VerdictTable } from "../verdict";
import { type FieldWalk, walkFields } from "./field-walk";
import { KUBERNETES_API, OBJECT_META, POD_SPEC } from "./schema.generated";
import { OBJECT_META_VERDICTS, POD_SPEC_VERDICTS } from "./verdicts";

const isPlain = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;

/** A walk of the claimed Kubernetes tables from `root` (`PodSpec`, `ObjectMeta`), whose table keys omit the root. */
function builtIn(table: VerdictTable, root: string, out: UnjudgedField[]): FieldWalk {
  return {
    table,
    name: (p) => `${root}.${p}`,
    key: (p) => p,
    notAField: `it is not a field of ${root} in Kubernetes ${KUBERNETES_API.kubernetes} (${KUBERNETES_API.module} ${KUBERNETES_API.version}), the version the project claims, which reads field names exactly as written: a server that knows it acts on what no rule judged`,
    out,
  };
}

/**
 * Injector labels and annotations in pod metadata at `metaPath` (exported for operators' pod metadata, which is not
 * an ObjectMeta).
 *
 * Pod labels and annotations that make a mesh's admission injector add containers to the pod after the rules judged
 * it (Istio's `istio-proxy` and its NET_ADMIN `istio-init`, Linkerd's `linkerd-init`, Kuma's and Consul's init
 * containers, each unless a CNI plugin replaces the init container), or volumes and images to those containers
 * (Istio's `userVolume`, `userVolumeMount`, `proxyImage`, `bootstrapOverride`). Keys as each project reads them;
 * a value turning injection off passes.
 */
const INJECTORS: readonly {
  readonly key: string;
  readonly on: (v: string) => boolean;
  readonly what: string;
}[] = [
  {
    key: "sidecar.istio.io/inject",
    on: (v) => v.trim().toLowerCase() !== "false",
    what: "Istio injects its proxy and NET_ADMIN init container",
  },
  {
    key: "istio.io/rev",
    on: (v) => v.trim() !== "",
    what: "Istio injects its proxy and NET_ADMIN init container",
  },
  {
    key: "sidecar.istio.io/userVolume",
    on: () => true,
    what: "Istio adds these volumes (host paths among what it takes) to its injected containers",
  },
  {
    key: "sidecar.istio.io/userVolumeMount",
    on: () => true,
    what: "Istio mounts these volumes in its injected containers",
  },
  { key: "sidecar.istio.io/proxyImage", on: () => true, what: "Istio runs this image as the injected proxy" },
  {
    key: "sidecar.istio.io/bootstrapOverride",
    on: () => true,
    what: "Istio's proxy takes this bootstrap configuration",
  },
  {
    key: "linkerd.io/inject",
    on: (v) => v.trim() !== "disabled",
    what: "Linkerd injects its proxy and NET_ADMIN init container",
  },
  {
    key: "kuma.io/sidecar-injection",
    on: (v) => v.trim() !== "disabled" && v.trim() !== "false",
    what: "Kuma injects its sidecar and NET_ADMIN init container",
  },
  {
    key: "consul.hashicorp.com/connect-inject",
    on: (v) => v.trim() !== "false",
    what: "Consul injects its sidecar and NET_ADMIN init container",
  },
];

/** True when `value` of the injector key `key` turns its injection on (false for a key that is no injector's). */
export function injects(key: string, value: unknown): boolean {
  const inj = INJECTORS.find((i) => i.key === key);
  return inj !== undefined && typeof value === "string" && inj.on(value);
}

export function injectorFields(meta: unknown, metaPath: string, out: UnjudgedField[]): void {
  for (const where of ["labels", "annotations"] as const) {
    const map = isPlain(meta) ? meta[where] : undefined;
    if (!isPlain(map)) continue;
    for (const inj of INJECTORS) {
      const v = map[inj.key];
      if (typeof v !== "string" || !inj.on(v)) continue;
      out.push({
        path: join(join(metaPath, where), inj.key),
        field: `ObjectMeta.${where}{}.${inj.key}`,
        reason: `${where === "labels" ? "the label" : "the annotation"} ${inj.key}: ${JSON.stringify(v)} means ${inj.what} at admission, after the rules judged the pod: containers no rule saw`,
      });
    }
  }
}

/** Every field of a pod spec at `specPath` and of its template metadata at `metaPath` that fails closed. */
export function podSpecFields(
  spec: unknown,
  specPath: string,
  meta: unknown,
  metaPath: string | undefined,
): UnjudgedField[] {
  const out: UnjudgedField[] = [];
  walkFields(builtIn(POD_SPEC_VERDICTS, "PodSpec", out), spec, POD_SPEC, "", specPath);
  if (metaPath !== undefined) {
    walkFields(builtIn(OBJECT_META_VERDICTS, "ObjectMeta", out), meta, OBJECT_META, "", metaPath);
    injectorFields(meta, metaPath, out);
  }
  return out;
}

/**
 * Where each core type an operator's CRD holds sits in the claimed PodSpec: its fields are those of that place, with
 * that place's verdicts (a refused container field is refused in an operator's autoscaler options too).
 */
const IN_POD_SPEC: Readonly<Record<string, string>> = {
  "core/v1.PodSpec": "",
  "core/v1.Container": "containers[]",
  "core/v1.EnvVar": "containers[].env[]",
  "core/v1.EnvVarSource": "containers[].env[].valueFrom",
  "core/v1.EnvFromSource": "containers[].envFrom[]",
  "core/v1.ResourceRequirements": "containers[].resources",
  "core/v1.SecurityContext": "containers[].securityContext",
  "core/v1.VolumeMount": "containers[].volumeMounts[]",
  "core/v1.Volume": "volumes[]",
  "core/v1.PersistentVolumeClaimSpec": "volumes[].ephemeral.volumeClaimTemplate.spec",
  "core/v1.Lifecycle": "containers[].lifecycle",
  "core/v1.PodSecurityContext": "securityContext",
  "core/v1.Affinity": "affinity",
  "core/v1.Toleration": "tolerations[]",
  "core/v1.PodDNSConfig": "dnsConfig",
  "core/v1.HostAlias": "hostAliases[]",
};

/** The shape at a schema path of the PodSpec (`containers[].env[]`). */
function podSpecShape(path: string): Shape | undefined {
  let s: Shape | undefined = POD_SPEC;
  for (const part of path === "" ? [] : path.split(".")) {
    const name = part.replace(/\[\]$/, "");
    while (s?.k === "ptr") s = s.to;
    if (s?.k !== "struct" || !Object.hasOwn(s.fields, name)) return undefined;
    s = s.fields[name];
    if (part.endsWith("[]")) {
      while (s?.k === "ptr") s = s.to;
      s = s?.k === "slice" ? s.of : undefined;
    }
  }
  return s;
}

/** The keys of a core value at `path` other than `known`, each a field the claimed version's `type` does not have. */
function outside(value: unknown, known: readonly string[], type: string, path: string): UnjudgedField[] {
  if (!isPlain(value)) return [];
  return Object.keys(value)
    .filter((k) => !known.includes(k))
    .map((k) => ({
      path: join(path, k),
      field: `${type}.${k}`,
      reason: `it is not a field of ${type} in Kubernetes ${KUBERNETES_API.kubernetes} (${KUBERNETES_API.module} ${KUBERNETES_API.version}), the version the project claims`,
    }));
}

/**
 * The fields of a core Kubernetes value an operator's CRD holds at `path` that fail closed, against the claimed
 * version's PodSpec and ObjectMeta and their verdicts; undefined for a core type the claimed tables do not hold
 * (its verdict in the operator's table decides alone).
 */
export function coreFields(type: string, value: unknown, path: string): UnjudgedField[] | undefined {
  if (type === "core/v1.PodTemplateSpec") {
    return [
      ...outside(value, ["metadata", "spec"], "PodTemplateSpec", path),
      ...podSpecFields(
        field(value, "spec"),
        join(path, "spec"),
        field(value, "metadata"),
        join(path, "metadata"),
      ),
    ];
  }
  if (type === "batch/v1.JobTemplateSpec") {
    // The claimed tables hold no JobSpec: its pod template is checked, its other keys are the job's settings.
    const spec = field(value, "spec");
    return [
      ...outside(value, ["metadata", "spec"], "JobTemplateSpec", path),
      ...(coreFields(
        "core/v1.PodTemplateSpec",
        field(spec, "template"),
        join(join(path, "spec"), "template"),
      ) ?? []),
    ];
  }
  if (type === "batch/v1.JobSpec") {
    // The claimed tables hold no JobSpec: its pod template is checked, its other keys are the job's settings.
    return coreFields("core/v1.PodTemplateSpec", field(value, "template"), join(path, "template")) ?? [];
  }
  if (type === "meta/v1.ObjectMeta") {
    const out: UnjudgedField[] = [];
    walkFields(builtIn(OBJECT_META_VERDICTS, "ObjectMeta", out), value, OBJECT_META, "", path);
    return out;
  }
  const at = Object.hasOwn(IN_POD_SPEC, type) ? IN_POD_SPEC[type] : undefined;
  const shape = at === undefined ? undefined : podSpecShape(at);
  if (at === undefined || shape === undefined) return undefined;
  const out: UnjudgedField[] = [];
  walkFields(builtIn(POD_SPEC_VERDICTS, "PodSpec", out), value, shape, at, path);
  return out;
}
