/**
 * What KubeRay's operator (ray-operator v1.5.0, controllers/ray/common/pod.go) writes into the pods of a Ray kind
 * besides their templates:
 *
 * - the `ray start` command of each group's Ray container (the first): `generateRayStartCommand` writes every entry
 *   of the group's `rayStartParams` as ` --key=value ` (`convertParamMap`; `"true"` as ` --key `, `"false"` as
 *   nothing), unescaped, into the container's `/bin/bash -c` script (or, when the container's own command already
 *   runs `ray start`, into its KUBERAY_GEN_RAY_START_CMD variable). The rules read those words as the container's
 *   arguments, after its own, their findings pointing into `rayStartParams`;
 * - the autoscaler sidecar (`DefaultHeadPodTemplate`): with `enableInTreeAutoscaling: true` the operator appends a
 *   container to the head pod, built by `BuildAutoscalerContainer` (the head's first container's image, three
 *   field-ref env vars, limits 500m / 512Mi, no securityContext of its own) and overridden by `autoscalerOptions`
 *   (`mergeAutoscalerOverrides`: resources, image, imagePullPolicy and securityContext replace; env, envFrom and
 *   volumeMounts are appended). The rules judge the head pod with that container in it, its findings pointing into
 *   `autoscalerOptions`.
 */
import { isUnknown, UNKNOWN } from "../../workload";
import { field, isObj, join } from "../lenient";

/** Where each Ray kind keeps its cluster spec. */
const CLUSTER_SPEC: Readonly<Record<string, string>> = {
  RayCluster: "spec",
  RayJob: "spec.rayClusterSpec",
  RayService: "spec.rayClusterConfig",
};

type Obj = Record<string, unknown>;

/** A path's steps: object keys and list indices. */
type Steps = readonly (string | number)[];

/** A copy of `o` with `value` at `path` (objects and lists along the path copied, nothing else). */
function putAt(o: unknown, path: Steps, value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path as [string | number, ...Steps];
  if (typeof head === "number") {
    const list = Array.isArray(o) ? [...o] : [];
    list[head] = putAt(list[head], rest, value);
    return list;
  }
  const base: Obj = isObj(o) ? { ...o } : {};
  base[head] = putAt(base[head], rest, value);
  return base;
}

function at(o: unknown, path: Steps): unknown {
  let cur = o;
  for (const p of path)
    cur = typeof p === "number" ? (Array.isArray(cur) ? cur[p] : undefined) : field(cur, p);
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

/** `ray start` options whose `"true"`/`"false"` is a value, not a switch (pod.go `convertParamMap`). */
const VALUED = new Set(["log-color", "include-dashboard"]);

/** The words of the group's `ray start` command, each with the `rayStartParams` key it comes from. */
function rayStartWords(params: unknown, head: boolean): { word: unknown; key?: string }[] {
  const words: { word: unknown; key?: string }[] = [{ word: "ray" }, { word: "start" }];
  if (head) words.push({ word: "--head" });
  if (isUnknown(params)) return [...words, { word: UNKNOWN }];
  if (!isObj(params)) return words;
  for (const key of Object.keys(params).sort()) {
    const v = params[key];
    if (isUnknown(v)) words.push({ word: UNKNOWN, key });
    else {
      const text = typeof v === "string" ? v : String(v);
      const flag = text.toLowerCase();
      if ((flag === "true" || flag === "false") && !VALUED.has(key)) {
        if (flag === "true") words.push({ word: `--${key}`, key });
      } else words.push({ word: `--${key}=${text}`, key });
    }
  }
  return words;
}

/** Where a finding in the rebuilt object points in the object as written. */
type Remap = (path: string) => string;

/** `props` with the `ray start` words after the Ray container's own arguments in the group at `group` (`where`). */
function withRayStart(
  props: unknown,
  group: Steps,
  where: string,
  head: boolean,
  next: Remap,
): [unknown, Remap] {
  const path = [...group, "template", "spec", "containers"];
  const containers = at(props, path);
  const ray = Array.isArray(containers) ? containers[0] : undefined;
  const own = field(ray, "args");
  if (!isObj(ray) || isUnknown(own) || (own !== undefined && !Array.isArray(own))) return [props, next];
  const args: unknown[] = Array.isArray(own) ? own : [];
  const words = rayStartWords(field(at(props, group), "rayStartParams"), head);
  const rebuilt = { ...ray, args: [...args, ...words.map((w) => w.word)] };
  const argsAt = `${where}.template.spec.containers[0].args`;
  const params = `${where}.rayStartParams`;
  const remap: Remap = (p) => {
    const m = p.startsWith(`${argsAt}[`) ? /^\[(\d+)\]/.exec(p.slice(argsAt.length)) : null;
    const i = m === null ? -1 : Number(m[1]) - args.length;
    if (i < 0) return next(p);
    const key = words[i]?.key;
    return key === undefined ? params : join(params, key);
  };
  return [putAt(props, [...path, 0], rebuilt), remap];
}

/**
 * The Ray object as the operator's pods have it: each group's Ray container with its `ray start` words, and the
 * autoscaler container appended to the head pod when autoscaling is on; with a map from the rebuilt parts' paths to
 * where their settings are written. Undefined for a kind that is not Ray's.
 */
export function withRayOperator(
  kind: string,
  props: unknown,
): { props: unknown; remap: (path: string) => string } | undefined {
  const base = Object.hasOwn(CLUSTER_SPEC, kind) ? CLUSTER_SPEC[kind] : undefined;
  if (base === undefined) return undefined;
  const spec = base.split(".");
  let remap: Remap = (p) => p;
  let out = props;
  [out, remap] = withRayStart(out, [...spec, "headGroupSpec"], `${base}.headGroupSpec`, true, remap);
  const workers = at(out, [...spec, "workerGroupSpecs"]);
  if (Array.isArray(workers))
    for (let i = 0; i < workers.length; i++)
      [out, remap] = withRayStart(
        out,
        [...spec, "workerGroupSpecs", i],
        `${base}.workerGroupSpecs[${i}]`,
        false,
        remap,
      );
  const autoscaled = withRayAutoscaler(base, out);
  if (autoscaled === undefined) return { props: out, remap };
  const after = remap;
  return { props: autoscaled.props, remap: (p) => after(autoscaled.remap(p)) };
}

/**
 * The Ray object with the operator's autoscaler container appended to the head pod, and a map from the rebuilt
 * container's paths to where its settings are written; undefined when autoscaling is off.
 */
function withRayAutoscaler(
  base: string,
  props: unknown,
): { props: unknown; remap: (path: string) => string } | undefined {
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
