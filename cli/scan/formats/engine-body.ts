/** Docker Engine API create bodies (`POST /containers/create`) -> resources judged as the launcher's preflight judges them. */
import { engineBody, engineBodyOf, foldKey, fromYaml } from "../../../policy/adapters/engine-json";
import { LAUNCH_TYPE } from "../../../policy/adapters/launch";
import { pathSegments } from "../../../policy/rules/helpers";
import type { Lines } from "../lines";
import { type FileOutput, isObj, text } from "./output";

/**
 * A Docker Engine API create body: the Engine matches its fields case-insensitively (Go's encoding/json), so
 * `hostconfig` and `IMAGE` are the same fields as `HostConfig` and `Image`.
 */
export function isEngineBody(value: Record<string, unknown>): boolean {
  return hasEngineField(value, "hostconfig") || hasEngineField(value, "image");
}

/** True when the object has the Engine API field `name` (lower case) in any spelling the daemon matches. */
export function hasEngineField(value: Record<string, unknown>, name: string): boolean {
  return Object.keys(value).some((k) => foldKey(k) === name.toUpperCase());
}

/** One body at key path `base`, named by its `name`, else its `sandbox.template` label, else its position. */
export function readEngineBody(
  out: FileOutput,
  value: Record<string, unknown>,
  lines: Lines,
  base: readonly (string | number)[],
  index: number,
): void {
  const at = lines.line(base);
  // The body as the daemon decodes it (policy/adapters/engine-json.ts): from the document tree when there is one,
  // where repeated keys keep their order, else from the value.
  const node = lines.node(base);
  const body = node === undefined ? engineBodyOf(value) : engineBody(fromYaml(node));
  const decoded = isObj(body) ? body : {};
  const labels = isObj(decoded.Labels) ? decoded.Labels : {};
  const name = text(value.name) ?? text(labels["sandbox.template"]) ?? `container#${index + 1}`;
  out.add({
    format: "engine-create-body",
    type: LAUNCH_TYPE,
    props: body,
    kind: "launch",
    name,
    id: `${out.file}:launch/${name}`,
    locate: (path) => out.loc(path === undefined ? at : lines.line([...base, ...pathSegments(path)])),
  });
}
