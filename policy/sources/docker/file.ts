/** Docker Engine API create bodies (`POST /containers/create`) -> resources judged as the launcher's preflight judges them. */

import { idPart } from "../../exemptions";
import { pathSegments } from "../../rules/helpers";
import type { Lines } from "../text/lines";
import { type FileOutput, text } from "../text/output";
import { engineBody, engineBodyOf } from "./body";
import { foldKey } from "./decode";
import { fromValue, fromYaml } from "./json-node";
import {
  DOCKER_NETWORK,
  DOCKER_PLUGIN_CONFIG,
  DOCKER_VOLUME,
  networkBodyProps,
  pluginPrivileges,
  volumeBodyProps,
} from "./objects";
import { LAUNCH_TYPE } from "./read";

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

const has = (value: Record<string, unknown>, ...names: string[]) =>
  names.some((n) => hasEngineField(value, n));

/**
 * A network create body (`POST /networks/create`): a `Driver` or `Name` with a field only networks have (`IPAM`,
 * `Internal`, `Attachable`, `Ingress`, `ConfigOnly`, `ConfigFrom`, `EnableIPv4`, `EnableIPv6`), or `Options` naming
 * a network driver's option.
 */
export function isNetworkBody(value: Record<string, unknown>): boolean {
  if (!has(value, "driver", "name")) return false;
  if (
    has(
      value,
      "ipam",
      "internal",
      "attachable",
      "ingress",
      "configonly",
      "configfrom",
      "enableipv4",
      "enableipv6",
    )
  )
    return true;
  const options = Object.entries(value).find(([k]) => foldKey(k) === "OPTIONS")?.[1];
  return (
    typeof options === "object" &&
    options !== null &&
    Object.keys(options).some((k) => k.startsWith("com.docker.network."))
  );
}

/** A volume create body (`POST /volumes/create`): `DriverOpts` or `ClusterVolumeSpec`. */
export function isVolumeBody(value: Record<string, unknown>): boolean {
  return has(value, "driveropts", "clustervolumespec");
}

/** A plugin's config.json: its `Interface` (the socket the daemon talks to) and `Entrypoint` or `Linux`. */
export function isPluginConfig(value: Record<string, unknown>): boolean {
  return has(value, "interface") && has(value, "entrypoint", "linux", "mounts");
}

/** One network, volume or plugin body at key path `base`, as the resource the rules judge. */
export function readEngineObject(
  out: FileOutput,
  value: Record<string, unknown>,
  lines: Lines,
  base: readonly (string | number)[],
): void {
  const at = lines.line(base);
  const node = lines.node(base);
  const tree = node === undefined ? fromValue(value) : fromYaml(node);
  const kind = isNetworkBody(value) ? "network" : isVolumeBody(value) ? "volume" : "plugin";
  const ordinal = out.next(`engine-${kind}`);
  const given = text(value.Name ?? value.name);
  const name = given ?? `${kind}#${ordinal}`;
  const props =
    kind === "network"
      ? networkBodyProps(tree)
      : kind === "volume"
        ? volumeBodyProps(tree)
        : { privileges: pluginPrivileges(tree) };
  out.add({
    format: "engine-create-body",
    type: kind === "network" ? DOCKER_NETWORK : kind === "volume" ? DOCKER_VOLUME : DOCKER_PLUGIN_CONFIG,
    props,
    kind: kind === "network" ? "Network" : kind === "volume" ? "Volume" : "PluginConfig",
    name,
    id: `${out.file}:${kind}/${given === undefined ? name : idPart(given)}`,
    locate: (path) => out.loc(path === undefined ? at : lines.line([...base, ...pathSegments(path)])),
  });
}
