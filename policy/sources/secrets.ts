/**
 * Pulumi secrets as the rules read them. A secret in a task's environment is the secret-env rule's to report (the
 * pack's remediation leaves its marker there). A secret anywhere else a rule may read (privileged, network mode,
 * user, a mount's source, a sysctl) hides the value the wall depends on, so it is sealed as {@link Unreadable}: the
 * rules fail closed on it, in the pack and in `scan`, whether or not the input happens to show the plain text.
 */
import { pathSegments } from "../rules/helpers";
import { Unreadable } from "../workload";
import { SECRET_REASON } from "./lenient";

/**
 * The objects whose `env` list the adapters read as a container's environment: the pod spec's container lists and
 * the carriers' containers (Argo `container`/`script`, Tekton `steps`/`sidecars`/`stepTemplate`, Spark `driver`/
 * `executor`). A map key named `env` anywhere else (an annotation, a label, a node selector, a custom field) is not
 * an environment: a secret there is sealed like any other, so a rule that reads it fails closed.
 */
const ENV_HOLDER =
  /(?:^|\.)(?:(?:containers|initContainers|ephemeralContainers|sidecars|steps)\[\d+\]|container|script|stepTemplate|driver|executor)$/;

/**
 * Environment entries, whose secrets the secret-env rule reports by taint: Docker `envs`, Engine `Env` (at the top
 * of the props), Kubernetes `env` of a container (see {@link ENV_HOLDER}), as whole lists, entries, or (Kubernetes)
 * an entry's value.
 */
export function isEnvSecretPath(path: string): boolean {
  if (/^(?:envs|Env)(?:\[\d+\])?$/.test(path)) return true;
  const m = /^(.*)\.env(?:\[\d+\](?:\.value)?)?$/.exec(path);
  return m !== null && ENV_HOLDER.test(m[1] ?? "");
}

/** The value with every secret outside a task's environment replaced by {@link Unreadable}; `value` is not changed. */
export function sealSecrets(value: unknown, secretPaths: readonly string[]): unknown {
  let out = value;
  for (const p of secretPaths)
    if (!isEnvSecretPath(p)) out = setAt(out, pathSegments(p), new Unreadable(SECRET_REASON));
  return out;
}

/** A copy of `root` with `v` at `segs` (copying only the objects on the way); a missing path is left alone. */
function setAt(root: unknown, segs: readonly (string | number)[], v: unknown): unknown {
  if (segs.length === 0) return v;
  const [head, ...rest] = segs as [string | number, ...(string | number)[]];
  if (Array.isArray(root) && typeof head === "number" && head < root.length) {
    const copy = [...root];
    copy[head] = setAt(root[head], rest, v);
    return copy;
  }
  if (
    typeof root === "object" &&
    root !== null &&
    !Array.isArray(root) &&
    Object.hasOwn(root, String(head))
  ) {
    const rec = root as Record<string, unknown>;
    return { ...rec, [String(head)]: setAt(rec[String(head)], rest, v) };
  }
  return root;
}
