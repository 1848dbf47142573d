/**
 * Objects that may create workloads the rules cannot see inside. Such an object is never passed in silence: it is
 * judged by `sandbox-disallow-unjudged-workloads`, which fails closed on it.
 */
import { isObj, join } from "./read";

/**
 * Pulumi types that deploy containers from content the engine hands the pack only as opaque inputs: Helm releases
 * and charts, YAML config groups and files, kustomizations, server-side patches of existing objects, and Docker
 * swarm services (whose task spec no adapter reads).
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
  [/^docker:index\/service:Service$/, "a Docker swarm service runs containers whose task spec no rule reads"],
];

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

/** Why an object no adapter read may still create workloads, or undefined when it does not look like it. */
export function unjudgedReason(type: string, props: unknown): string | undefined {
  for (const [re, why] of OPAQUE_TYPES) if (re.test(type)) return why;
  if (!type.startsWith("kubernetes:")) return undefined;
  const at = containerLike(props);
  return at === undefined
    ? undefined
    : `it names a container image at ${at || "the top level"}, but no pod spec the rules can read`;
}
