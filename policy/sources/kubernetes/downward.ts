/**
 * The downward API's `fieldRef` as the kubelet resolves it (k8s.io/kubernetes pkg/fieldpath
 * ExtractFieldPathAsString): `metadata.annotations['<key>']` and `metadata.labels['<key>']` give that entry's value
 * (an exact key lookup; a missing key gives ""), `metadata.annotations` and `metadata.labels` without a subscript give
 * every entry as `key="value"` lines, and the other paths (`metadata.name`, `status.podIP`, `spec.nodeName`...) give
 * the pod's own identity, which is not a credential. `resourceFieldRef` gives a number.
 */
import { isUnknown, UNKNOWN, type Val } from "../../workload";
import { field, isObj, str } from "../lenient";

/** `metadata.annotations['k']` -> [`metadata.annotations`, `k`], as SplitMaybeSubscriptedPath splits it. */
function splitSubscript(path: string): [string, string | undefined] {
  if (!path.endsWith("']")) return [path, undefined];
  const i = path.indexOf("['");
  if (i <= 0) return [path, undefined];
  return [path.slice(0, i), path.slice(i + 2, -2)];
}

/** Every entry of a map as the kubelet formats it (FormatMap: `key="value"` lines, keys sorted). */
function formatMap(m: unknown): Val<string> {
  if (isUnknown(m)) return m;
  if (!isObj(m)) return "";
  const lines: string[] = [];
  for (const k of Object.keys(m).sort()) {
    const v = str(m[k]);
    if (isUnknown(v)) return v;
    lines.push(`${k}=${JSON.stringify(v ?? "")}`);
  }
  return lines.join("\n");
}

/**
 * The value a `fieldRef` gives when it reads a map written in the manifest (`metadata.annotations` or
 * `metadata.labels`, given as `source`); undefined for the pod's own identity fields.
 */
export function downwardValue(
  fieldPath: Val<string>,
  map: "annotations" | "labels",
  source: unknown,
): Val<string> {
  if (isUnknown(fieldPath)) return UNKNOWN;
  if (fieldPath === undefined) return undefined;
  const [base, key] = splitSubscript(fieldPath.trim());
  if (base !== `metadata.${map}`) return undefined;
  if (key === undefined) return formatMap(source);
  const v = str(field(source, key));
  return v === undefined ? "" : v;
}
