/**
 * One decoded document -> the resources the rules judge. A document is judged as every format whose engine would
 * take it; each format has its reader in its source's file.ts (policy/sources/<engine>/: Kubernetes objects, Pulumi
 * previews and state files, the runtime's launch spec, Docker Engine API create bodies; Compose files, which are
 * loaded per file, are read from policy/sources/text/documents.ts).
 */
import {
  hasEngineField,
  isEngineBody,
  isNetworkBody,
  isPluginConfig,
  isVolumeBody,
  readEngineBody,
  readEngineObject,
} from "../docker/file";
import { isLaunchSpec, readLaunchSpec } from "../docker/launch-spec-file";
import { isKubernetesObject, parseGroupVersion, readKubernetes } from "../kubernetes/file";
import { isPulumiPreview, isPulumiState, readPreview, readState } from "../pulumi/file";
import type { Lines } from "./lines";
import { type FileOutput, isObj, text } from "./output";

const NOT_A_RESOURCE =
  "not a Kubernetes object, Compose file, Pulumi preview or stack export, launch spec or Engine API create body (container, network, volume, plugin config)";

/** Reads a decoded value at key path `base` of its document; `index` numbers unnamed resources. */
export function readDocument(
  out: FileOutput,
  value: unknown,
  lines: Lines,
  base: readonly (string | number)[],
  index: number,
  item = false,
): void {
  if (value === undefined || value === null) return;
  if (Array.isArray(value)) {
    value.forEach((v, i) => {
      readDocument(out, v, lines, [...base, i], i);
    });
    return;
  }
  if (!isObj(value)) {
    out.skip(lines.line(base), typeof value, NOT_A_RESOURCE);
    return;
  }
  // Format detection never hides an object: a document is judged as every format whose engine would take it.
  // The Docker daemon ignores keys it does not know, so a body that also carries `kind`, `apiVersion`, `steps` or
  // `deployment` still runs as a body; a Kubernetes object is its apiVersion and kind whatever else it carries.
  const launch = isLaunchSpec(value);
  const kube = !launch && isKubernetesObject(value);
  const preview = isPulumiPreview(value);
  const state = isPulumiState(value);
  // A Kubernetes custom resource or a launch spec may have a top-level `image`: only a HostConfig makes it a body.
  const body = kube || launch ? hasEngineField(value, "hostconfig") : isEngineBody(value);
  if (launch) readLaunchSpec(out, value, lines, base, body);
  if (kube) kubernetes(out, value, lines, base, index, item);
  if (preview) readPreview(out, value);
  if (state) readState(out, value);
  if (body) readEngineBody(out, value, lines, base);
  if (launch || kube || preview || state || body) return;
  // The Engine's other create bodies: a network, a volume, a plugin's config.
  if (isNetworkBody(value) || isVolumeBody(value) || isPluginConfig(value)) {
    readEngineObject(out, value, lines, base);
    return;
  }
  // A `kind` without an apiVersion: a List's items are still read; anything else is skipped for the reason.
  if (typeof value.kind === "string") kubernetes(out, value, lines, base, index, item);
  else out.skip(lines.line(base), "unknown", NOT_A_RESOURCE);
}

/**
 * An object with a string `kind`, as kubectl's resource builder takes it (apimachinery v0.36.3 unstructured
 * `UnstructuredJSONScheme.decode` and `decodeToList`, cli-runtime `FlattenListVisitor`): a document with an `items`
 * key is a List whatever its kind (`kind: Pod` too), and kubectl sends its items, never the List itself. An item with
 * neither a kind nor an apiVersion (as strings) takes the List's kind without its `List` suffix and the List's
 * apiVersion (a `PodList`'s items are Pods). A List item (`item`) whose `items` is a list is a List inside a List,
 * which kubectl refuses with the List it is in; its items are still judged.
 */
function kubernetes(
  out: FileOutput,
  value: Record<string, unknown>,
  lines: Lines,
  base: readonly (string | number)[],
  index: number,
  item: boolean,
): void {
  const kind = value.kind as string;
  if (kind === "") {
    out.error(
      lines.line([...base, "kind"]),
      "kind is empty: kubectl refuses the object (Object 'Kind' is missing)",
    );
    return;
  }
  if (!(item ? Array.isArray(value.items) : Object.hasOwn(value, "items"))) {
    readKubernetes(out, value, lines, base, index);
    return;
  }
  const at = lines.line([...base, "items"]);
  const { items } = value;
  if (item)
    out.error(
      at,
      `${kind} is a List inside a List: kubectl refuses the List it is in (its items are still judged)`,
    );
  if (items === null) {
    out.skip(at, kind, "a List with `items: null`: kubectl sends none of it");
    return;
  }
  if (!Array.isArray(items)) {
    out.error(
      at,
      `${kind} has an \`items\` key, so kubectl reads it as a List, and refuses it: \`items\` is ${describe(items)}, not a list`,
    );
    return;
  }
  const itemKind = kind.endsWith("List") ? kind.slice(0, -"List".length) : kind;
  const listVersion = typeof value.apiVersion === "string" ? value.apiVersion : "";
  items.forEach((v, i) => {
    const path = [...base, "items", i];
    if (!isObj(v)) {
      out.error(
        lines.line(path),
        `${kind} items[${i}] is ${describe(v)}: kubectl refuses a List item that is not an object`,
      );
      return;
    }
    const typed = item || text(v.kind) !== undefined || text(v.apiVersion) !== undefined;
    const sent = typed ? v : { ...v, kind: itemKind, apiVersion: listVersion };
    // kubectl types each item before it sends it (unstructuredscheme's typer): a kind and a version are required.
    const version =
      typeof sent.apiVersion === "string" ? parseGroupVersion(sent.apiVersion)?.version : undefined;
    if (text(sent.kind) === undefined || version === undefined || version === "")
      out.error(
        lines.line(path),
        `${kind} items[${i}] has no ${text(sent.kind) === undefined ? "kind" : "version in its apiVersion"}: kubectl refuses the item (it is still judged)`,
      );
    readDocument(out, sent, lines, path, i, true);
  });
}

function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "a list";
  return typeof v === "object" ? "a map" : `${typeof v} ${JSON.stringify(v)}`;
}
