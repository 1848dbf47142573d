/**
 * Objects that may create workloads the rules cannot see inside. Such an object is never passed in silence: it is
 * judged by `sandbox-disallow-unjudged-workloads`, which fails closed on it.
 */

import { type KubeType, parseKubeType } from "./kubernetes/sites";
import { isObj, join } from "./lenient";
import { refusedTypeReason } from "./pulumi/types";

/**
 * Pulumi types that deploy containers from content the engine hands the pack only as opaque inputs: Helm releases
 * and charts, YAML config groups and files, kustomizations, server-side patches of existing objects; the provider
 * types refused by policy/sources/pulumi/types.ts (swarm services, plugins, builds, commands) come first.
 */
const OPAQUE_TYPES: readonly [RegExp, string][] = [
  [/^kubernetes:helm\.sh\/v\d+:Release$/, "a Helm release installs a chart's objects inside the provider"],
  [/^kubernetes:helm\.sh\/v\d+:Chart$/, "a Helm chart renders objects from a chart the pack does not read"],
  [
    /^kubernetes:yaml(?:\/v2)?:Config(?:Group|File)$/,
    "a YAML config group or file applies manifests the pack does not read",
  ],
  [/^kubernetes:kustomize(?:\/v2)?:Directory$/, "a kustomization applies manifests the pack does not read"],
  [/^kubernetes:[^:]+:[A-Za-z0-9]+Patch$/, "a patch changes a live object the pack cannot see whole"],
  [
    /^docker:engine:PluginConfig$/,
    "a Docker plugin runs its own process on the host, outside every wall, with the privileges its config.json lists",
  ],
];

/**
 * Kubernetes kinds, by group, whose controller (or kubectl's own kustomize) renders and applies workloads from content
 * that is not in the object: a chart, a Git repository, a folder, patches over other files. They are the in-cluster
 * forms of the Pulumi types above, and a rule sees none of what they deploy.
 */
const OPAQUE_KINDS: Readonly<Record<string, readonly [readonly string[], string]>> = {
  "kustomize.config.k8s.io": [
    ["Kustomization", "Component"],
    "kubectl apply -k builds it: its resources, generators and patches make objects the scan does not see whole",
  ],
  "kustomize.toolkit.fluxcd.io": [
    ["Kustomization"],
    "Flux builds and applies the kustomization at its source path, which the scan does not read",
  ],
  "helm.toolkit.fluxcd.io": [
    ["HelmRelease"],
    "Flux installs the chart with these values; the chart's objects are not in the file",
  ],
  "argoproj.io": [
    ["Application", "ApplicationSet"],
    "Argo CD syncs the manifests of its source repository or chart, which the scan does not read",
  ],
  "helm.cattle.io": [
    ["HelmChart"],
    "the Helm controller installs the chart; its objects are not in the file",
  ],
  "fleet.cattle.io": [
    ["GitRepo", "Bundle", "HelmOp"],
    "Fleet deploys the repository's or bundle's manifests, which the scan does not read",
  ],
  "kappctrl.k14s.io": [
    ["App"],
    "kapp-controller fetches, templates and deploys content the scan does not read",
  ],
  "packaging.carvel.dev": [["PackageInstall"], "kapp-controller installs a package the scan does not read"],
};

/** Keys that, next to a string `image`, make an object a container someone will run. */
const CONTAINER_KEYS = [
  "name",
  "command",
  "args",
  "env",
  "script",
  "securityContext",
  "resources",
  "volumeMounts",
  "ports",
];

/** The first place an object names a container image with container settings, by shape. */
export function containerLike(v: unknown, path = "", depth = 0): string | undefined {
  if (depth > 24) return undefined;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const found = containerLike(v[i], join(path, i), depth + 1);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (!isObj(v)) return undefined;
  if (typeof v.image === "string" && CONTAINER_KEYS.some((k) => v[k] !== undefined)) return path;
  for (const [k, x] of Object.entries(v)) {
    if (depth === 0 && (k === "status" || k === "metadata")) continue;
    const found = containerLike(x, join(path, k), depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** A plugin's reason, with what its config asks of the host. */
function withPrivileges(why: string, props: unknown): string {
  const p = isObj(props) && Array.isArray(props.privileges) ? props.privileges : [];
  return p.length === 0 ? why : `${why} (${p.join(", ")})`;
}

/**
 * Why an object creates workloads the pack cannot see whole, whatever pods it also shows: a refused type, a chart,
 * a patch, a GitOps or packaging object. Undefined for any other object.
 */
export function opaqueReason(type: string, props: unknown): string | undefined {
  const refused = refusedTypeReason(type);
  if (refused !== undefined) return refused;
  for (const [re, why] of OPAQUE_TYPES) if (re.test(type)) return withPrivileges(why, props);
  if (!type.startsWith("kubernetes:")) return undefined;
  const t = parseKubeType(type);
  return t === undefined ? undefined : opaqueKindReason(t);
}

/** Why a GitOps or packaging kind deploys what the scan does not see, or undefined for any other kind. */
export function opaqueKindReason(t: KubeType): string | undefined {
  const opaque = Object.hasOwn(OPAQUE_KINDS, t.group) ? OPAQUE_KINDS[t.group] : undefined;
  return opaque?.[0].includes(t.kind) ? opaque[1] : undefined;
}

/** Why an object no reader read may still create workloads, or undefined when it does not look like it. */
export function unjudgedReason(type: string, props: unknown): string | undefined {
  const opaque = opaqueReason(type, props);
  if (opaque !== undefined || !type.startsWith("kubernetes:")) return opaque;
  const at = containerLike(props);
  return at === undefined
    ? undefined
    : `it names a container image at ${at || "the top level"}, but no pod spec the rules can read`;
}
