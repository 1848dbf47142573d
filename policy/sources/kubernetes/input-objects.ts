/**
 * What a pod takes from other objects of the same input, read with it in `scan` (the pack judges one resource at a
 * time and cannot):
 *
 * - The ServiceAccount's own `automountServiceAccountToken`. Kubernetes' ServiceAccount admission plugin
 *   (plugin/pkg/admission/serviceaccount, `shouldAutomount`) mounts the token when the pod's field is true, not when
 *   it is false, and when the pod leaves it unset, as the pod's ServiceAccount says (its own unset field mounts). So
 *   a pod with no field of its own gets no token when its account, in the input, says false.
 * - An `envFrom` ConfigMap's keys, where a pod reader left them unreadable for want of them (`configMapEnv`: the
 *   Spark operator's driver and executor, whose JVM options variables can set Spark properties). The kubelet makes a
 *   variable of each key of the ConfigMap's `data` under the envFrom's prefix (`binaryData` is not read); so with the
 *   ConfigMap in the input, the variables are known, and only one the JVM reads as options, with a value that sets a
 *   Spark property, stays refused.
 *
 * Only what cannot be another object is read: an object of the name the pod gives, in the pod's namespace, a
 * namespace left unwritten matching only another left unwritten (both land in the namespace they are applied to);
 * every such object of the input must agree (of two with one name the set may deploy either). A cloud identity on
 * the account (its annotations, which project a token whatever the field says) is judged apart, with the set
 * (policy/stack/disallow-linked-credentials.ts).
 */
import type { Subject, UnreadablePart } from "../../workload";
import { at, field, isObj, str } from "../lenient";
import type { ScanItem } from "../text/items";
import { JVM_OPTION_VARIABLES, jvmOptionsSafe } from "./crd-verdicts/spark-conf-keys";
import { parseKubeType } from "./sites";

/** A core object of the input: its kind, name, namespace ("" unwritten) and props. */
export interface InputObject {
  readonly kind: "ServiceAccount" | "ConfigMap";
  readonly name: string;
  readonly namespace: string;
  readonly props: unknown;
}

/** The core ServiceAccounts and ConfigMaps among the items. */
export function inputObjectsOf(items: readonly Pick<ScanItem, "type" | "props">[]): InputObject[] {
  return items.flatMap((i) => {
    const t = parseKubeType(i.type);
    if (t?.group !== "core" || (t.kind !== "ServiceAccount" && t.kind !== "ConfigMap")) return [];
    const name = str(at(i.props, "metadata.name"));
    const ns = str(at(i.props, "metadata.namespace"));
    if (typeof name !== "string") return [];
    return [{ kind: t.kind, name, namespace: typeof ns === "string" ? ns : "", props: i.props }];
  });
}

/** The objects of `kind` the pod names, in its namespace; none when the namespace is not plain text. */
function named(
  objects: readonly InputObject[],
  kind: InputObject["kind"],
  name: unknown,
  view: Subject,
): InputObject[] {
  if (view.subject !== "workload") return [];
  const ns = view.podNamespace === undefined ? "" : view.podNamespace;
  if (typeof name !== "string" || typeof ns !== "string") return [];
  return objects.filter((o) => o.kind === kind && o.name === name && o.namespace === ns);
}

/** The account's false where the pod leaves the field unset and every account it may be says false. */
function accountAutomount(view: Subject, objects: readonly InputObject[]): Subject {
  if (view.subject !== "workload" || view.automountServiceAccountToken !== undefined) return view;
  const same = named(objects, "ServiceAccount", view.serviceAccountName, view);
  // The API server takes a boolean only: a string "false" is no value it stores.
  if (same.length === 0 || !same.every((a) => field(a.props, "automountServiceAccountToken") === false))
    return view;
  return { ...view, automountServiceAccountToken: false };
}

/**
 * An envFrom ConfigMap part read with the ConfigMaps it may be: dropped when none of their keys makes a JVM options
 * variable that sets a Spark property, that finding instead when one does; kept when the input holds none of them
 * or one's data cannot be read.
 */
function configMapEnv(
  part: UnreadablePart,
  view: Subject,
  objects: readonly InputObject[],
): UnreadablePart[] {
  const use = part.configMapEnv;
  if (use === undefined) return [part];
  const maps = named(objects, "ConfigMap", use.name, view);
  if (maps.length === 0) return [part];
  const out: UnreadablePart[] = [];
  for (const cm of maps) {
    const data = field(cm.props, "data");
    if (data === undefined) continue;
    if (!isObj(data)) return [part];
    for (const [key, value] of Object.entries(data)) {
      const variable = `${use.prefix}${key}`;
      if (!JVM_OPTION_VARIABLES.test(variable)) continue;
      if (typeof value !== "string") return [part]; // a value the policy cannot read (a Pulumi secret, a value not known yet)
      if (!jvmOptionsSafe(value))
        out.push({
          path: part.path,
          reason: `the ${use.role}'s Spark container takes variable ${variable} from ConfigMap ${JSON.stringify(use.name)} key ${key} (envFrom): JVM options that set Spark properties (-Dspark.*) or read them from a file, which no rule reads`,
        });
    }
  }
  return out;
}

/** The view with what it takes from the input's objects read (the view itself when it takes nothing). */
export function withInputObjects(view: Subject, objects: readonly InputObject[]): Subject {
  if (objects.length === 0 || view.subject !== "workload" || view.origin.backend !== "kubernetes")
    return view;
  const read = accountAutomount(view, objects);
  if (read.subject !== "workload" || !read.unreadableParts.some((p) => p.configMapEnv !== undefined))
    return read;
  return { ...read, unreadableParts: read.unreadableParts.flatMap((p) => configMapEnv(p, read, objects)) };
}
