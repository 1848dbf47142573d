/**
 * KubeRay's autoscaler sidecar (ray-operator v1.5.0, controllers/ray/common/pod.go `DefaultHeadPodTemplate`): with
 * `enableInTreeAutoscaling: true` the operator appends a container to the head pod, built by
 * `BuildAutoscalerContainer` (the head's first container's image, three field-ref env vars, limits 500m / 512Mi, no
 * securityContext of its own) and overridden by `autoscalerOptions` (`mergeAutoscalerOverrides`: resources, image,
 * imagePullPolicy and securityContext replace; env, envFrom and volumeMounts are appended). The rules judge the head
 * pod with that container in it, its findings pointing into `autoscalerOptions`.
 */
import { isUnknown, UNKNOWN } from "../../workload";
import { field, isObj } from "../lenient";

/** Where each Ray kind keeps its cluster spec. */
const CLUSTER_SPEC: Readonly<Record<string, string>> = {
  RayCluster: "spec",
  RayJob: "spec.rayClusterSpec",
  RayService: "spec.rayClusterConfig",
};

type Obj = Record<string, unknown>;

/** A copy of `o` with `value` at the dotted `path` (objects along the path copied, nothing else). */
function putAt(o: unknown, path: readonly string[], value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path as [string, ...string[]];
  const base: Obj = isObj(o) ? { ...o } : {};
  base[head] = putAt(base[head], rest, value);
  return base;
}

function at(o: unknown, path: readonly string[]): unknown {
  let cur = o;
  for (const p of path) cur = field(cur, p);
  return cur;
}

/** The operator's autoscaler container for a head pod whose first container is `ray`, with `options` merged. */
function autoscaler(ray: unknown, options: unknown): Obj {
  const c: Obj = {
    name: "autoscaler",
    image: field(ray, "image"),
    imagePullPolicy: "IfNotPresent",
    env: [
      {
        name: "RAY_CLUSTER_NAME",
        valueFrom: { fieldRef: { fieldPath: "metadata.labels['ray.io/cluster']" } },
      },
      { name: "RAY_CLUSTER_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
      { name: "RAY_HEAD_POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
      { name: "KUBERAY_CRD_VER", value: "v1" },
    ],
    args: [
      "ray kuberay-autoscaler --cluster-name $(RAY_CLUSTER_NAME) --cluster-namespace $(RAY_CLUSTER_NAMESPACE)",
    ],
    resources: { limits: { cpu: "500m", memory: "512Mi" }, requests: { cpu: "500m", memory: "512Mi" } },
  };
  if (isUnknown(options)) return { ...c, securityContext: UNKNOWN, env: UNKNOWN, volumeMounts: UNKNOWN };
  for (const k of ["resources", "image", "imagePullPolicy", "securityContext"]) {
    const v = field(options, k);
    if (v !== undefined && v !== null) c[k] = v;
  }
  for (const k of ["env", "envFrom", "volumeMounts"]) {
    const v = field(options, k);
    if (Array.isArray(v) && v.length > 0) c[k] = [...((c[k] as unknown[] | undefined) ?? []), ...v];
    else if (isUnknown(v)) c[k] = UNKNOWN;
  }
  return c;
}

/**
 * The Ray object with the operator's autoscaler container appended to the head pod, and a map from the rebuilt
 * container's paths to where its settings are written; undefined when autoscaling is off (or not a Ray kind).
 */
export function withRayAutoscaler(
  kind: string,
  props: unknown,
): { props: unknown; remap: (path: string) => string } | undefined {
  const base = Object.hasOwn(CLUSTER_SPEC, kind) ? CLUSTER_SPEC[kind] : undefined;
  if (base === undefined) return undefined;
  const spec = base.split(".");
  const enabled = at(props, [...spec, "enableInTreeAutoscaling"]);
  if (enabled !== true && !isUnknown(enabled)) return undefined;
  const containersPath = [...spec, "headGroupSpec", "template", "spec", "containers"];
  const containers = at(props, containersPath);
  if (!Array.isArray(containers)) return undefined;
  const options = at(props, [...spec, "autoscalerOptions"]);
  const index = containers.length;
  const added = `${containersPath.join(".")}[${index}]`;
  const target = `${base}.autoscalerOptions`;
  return {
    props: putAt(props, containersPath, [...containers, autoscaler(containers[0], options)]),
    remap: (p) => {
      if (p !== added && !p.startsWith(`${added}.`)) return p;
      const rest = p.slice(added.length);
      // The operator's four variables come first; the options' own follow them.
      const env = /^\.env\[(\d+)\](.*)$/.exec(rest);
      if (env !== null)
        return Number(env[1]) < 4 ? target : `${target}.env[${Number(env[1]) - 4}]${env[2] ?? ""}`;
      return target + rest;
    },
  };
}
