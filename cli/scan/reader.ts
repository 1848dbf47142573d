/**
 * One decoded document -> the resources the rules judge. A document is judged as every format whose engine would
 * take it; each format has its reader in cli/scan/formats/ (Kubernetes objects, Pulumi previews and state files,
 * the runtime's launch spec, Docker Engine API create bodies; Compose files, which are loaded per file, are read
 * from cli/scan/documents.ts).
 */
import { hasEngineField, isEngineBody, readEngineBody } from "./formats/engine-body";
import { isKubernetesObject, readKubernetes } from "./formats/kubernetes";
import { isLaunchSpec, readLaunchSpec } from "./formats/launch-spec";
import { type FileOutput, isObj } from "./formats/output";
import { isPulumiPreview, isPulumiState, readPreview, readState } from "./formats/pulumi";
import type { Lines } from "./lines";

const NOT_A_RESOURCE =
  "not a Kubernetes object, Compose file, Pulumi preview or stack export, launch spec or Engine API create body";

/** Reads a decoded value at key path `base` of its document; `index` numbers unnamed resources. */
export function readDocument(
  out: FileOutput,
  value: unknown,
  lines: Lines,
  base: readonly (string | number)[],
  index: number,
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
  if (kube) kubernetes(out, value, lines, base, index);
  if (preview) readPreview(out, value);
  if (state) readState(out, value);
  if (body) readEngineBody(out, value, lines, base);
  if (launch || kube || preview || state || body) return;
  // A `kind` without an apiVersion: a `List`'s items are still read; anything else is skipped for the reason.
  if (typeof value.kind === "string") kubernetes(out, value, lines, base, index);
  else out.skip(lines.line(base), "unknown", NOT_A_RESOURCE);
}

/** An object with a string `kind`: a `List` (`kind: ...List` with `items`) is read item by item, as documents. */
function kubernetes(
  out: FileOutput,
  value: Record<string, unknown>,
  lines: Lines,
  base: readonly (string | number)[],
  index: number,
): void {
  const kind = value.kind as string;
  if (kind.endsWith("List") && Array.isArray(value.items)) {
    value.items.forEach((v, i) => {
      readDocument(out, v, lines, [...base, "items", i], i);
    });
    return;
  }
  readKubernetes(out, value, lines, base, index);
}
