/** Docker Engine API create bodies (`POST /containers/create`) -> resources judged as the launcher's preflight judges them. */

import { idPart } from "../../../policy/exemptions";
import { pathSegments } from "../../../policy/rules/helpers";
import { engineBody, engineBodyOf, foldKey, fromYaml } from "../../../policy/sources/docker/body";
import { LAUNCH_TYPE } from "../../../policy/sources/docker/read";
import type { Lines } from "../lines";
import { type FileOutput, text } from "./output";

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

/**
 * One body at key path `base`. Its id is `<file>:launch/<name>`: the name is the body's `name`, which is the
 * container's name when the body is sent as the project's launcher sends it (dockerode, docker-modem
 * `buildQuerystring`, puts the body's keys in the create call's query, and the daemon names the container by the
 * `?name=` query), written with `idPart` so a name holding `:` or `/` cannot pass for another kind or file (the
 * daemon refuses such a name anyway); a body without one is `container#<n>`, the file's n-th body. Labels are free
 * text the daemon does not name anything by, so they never name the body.
 */
export function readEngineBody(
  out: FileOutput,
  value: Record<string, unknown>,
  lines: Lines,
  base: readonly (string | number)[],
): void {
  const at = lines.line(base);
  // The body as the daemon decodes it (policy/sources/docker/body.ts): from the document tree when there is one,
  // where repeated keys keep their order, else from the value.
  const node = lines.node(base);
  const body = node === undefined ? engineBodyOf(value) : engineBody(fromYaml(node));
  const ordinal = out.next("engine-body");
  const given = text(value.name);
  const name = given ?? `container#${ordinal}`;
  out.add({
    format: "engine-create-body",
    type: LAUNCH_TYPE,
    props: body,
    kind: "launch",
    name,
    id: `${out.file}:launch/${given === undefined ? name : idPart(given)}`,
    locate: (path) => out.loc(path === undefined ? at : lines.line([...base, ...pathSegments(path)])),
  });
}
