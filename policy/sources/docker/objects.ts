/**
 * The other Engine API create bodies, as the daemon decodes them (schema.generated.ts: network.CreateRequest,
 * volume.CreateRequest, a plugin's config.json), turned into what the rules judge:
 *
 * - a network body becomes the `docker.Network` props it would be (name, driver, internal, options), judged by
 *   sandbox-disallow-open-bridge, with its fields that fail closed (refused, or outside the claimed API);
 * - a volume body becomes the `docker.Volume` props (name, driver, driverOpts), judged with the containers that
 *   mount it and by itself by sandbox-disallow-host-path-claims (a local volume that binds a host folder);
 * - a plugin's config runs a process on the host with the privileges it lists, which no rule reads: unjudged.
 */
import { field, str } from "../lenient";
import { isGoZero, type UnjudgedField, type VerdictTable, verdictFor } from "../verdict";
import { engineDecode } from "./decode";
import type { JsonNode } from "./json-node";
import { ENGINE_API, NETWORK_CREATE, PLUGIN_CONFIG, VOLUME_CREATE } from "./schema.generated";
import { NETWORK_CREATE_VERDICTS, VOLUME_CREATE_VERDICTS } from "./verdicts-objects";

export const DOCKER_NETWORK = "docker:index/network:Network";
export const DOCKER_VOLUME = "docker:index/volume:Volume";
/** A plugin's config.json (`POST /plugins/create` reads it from the plugin's archive); no provider type names it. */
export const DOCKER_PLUGIN_CONFIG = "docker:engine:PluginConfig";

const unknownField = (p: string): UnjudgedField => ({
  path: p,
  field: p,
  reason: `it is not a field of Engine API ${ENGINE_API.apiVersion}, the version the project claims (${ENGINE_API.module} ${ENGINE_API.version})`,
});

/** A network create body as `docker.Network` props, with the fields that fail closed under `unjudgedFields`. */
export function networkBodyProps(n: JsonNode): Record<string, unknown> {
  const decoded = engineDecode(n, NETWORK_CREATE);
  const body = (typeof decoded.value === "object" && decoded.value !== null ? decoded.value : {}) as Record<
    string,
    unknown
  >;
  const fields = bodyFields(decoded, NETWORK_CREATE_VERDICTS);
  return {
    name: str(field(body, "Name")),
    driver: str(field(body, "Driver")),
    internal: field(body, "Internal"),
    options: field(body, "Options"),
    ...(fields.length === 0 ? {} : { unjudgedFields: fields }),
  };
}

/** The fields of a decoded body that fail closed: unknown to the claimed API, refused, or with no verdict. */
function bodyFields(
  decoded: { value: unknown; refused?: string; unknown: readonly string[] },
  table: VerdictTable,
): UnjudgedField[] {
  const body = (typeof decoded.value === "object" && decoded.value !== null ? decoded.value : {}) as Record<
    string,
    unknown
  >;
  const fields: UnjudgedField[] = decoded.unknown.map(unknownField);
  for (const [k, v] of Object.entries(body)) {
    const verdict = verdictFor(table, k);
    if (verdict === undefined)
      fields.push({ path: k, field: k, reason: `the project has no verdict for ${k}` });
    else if (verdict.v === "refused" && !isGoZero(v) && verdict.allows?.(v) !== true)
      fields.push({ path: k, field: k, reason: verdict.why });
  }
  if (decoded.refused !== undefined) fields.push({ path: "", field: "", reason: decoded.refused });
  return fields;
}

/** A volume create body as `docker.Volume` props, with the fields that fail closed under `unjudgedFields`. */
export function volumeBodyProps(n: JsonNode): Record<string, unknown> {
  const decoded = engineDecode(n, VOLUME_CREATE);
  const body = (typeof decoded.value === "object" && decoded.value !== null ? decoded.value : {}) as Record<
    string,
    unknown
  >;
  const fields = bodyFields(decoded, VOLUME_CREATE_VERDICTS);
  return {
    name: str(field(body, "Name")),
    driver: str(field(body, "Driver")),
    driverOpts: field(body, "DriverOpts"),
    ...(fields.length === 0 ? {} : { unjudgedFields: fields }),
  };
}

/** What a plugin's config asks of the host, in words (empty when it asks for nothing beyond a socket). */
export function pluginPrivileges(n: JsonNode): string[] {
  const { value } = engineDecode(n, PLUGIN_CONFIG);
  const out: string[] = [];
  const linux = field(value, "Linux");
  const caps = field(linux, "Capabilities");
  if (Array.isArray(caps) && caps.length > 0) out.push(`capabilities ${caps.join(", ")}`);
  if (field(linux, "AllowAllDevices") === true) out.push("every host device");
  const devices = field(linux, "Devices");
  if (Array.isArray(devices) && devices.length > 0) out.push("host devices");
  const mounts = field(value, "Mounts");
  if (Array.isArray(mounts) && mounts.length > 0) out.push("host mounts");
  if (str(field(field(value, "Network"), "Type")) === "host") out.push("the host's network");
  if (field(value, "PidHost") === true) out.push("the host's process namespace");
  if (field(value, "IpcHost") === true) out.push("the host's IPC namespace");
  const propagated = str(field(value, "PropagatedMount"));
  if (typeof propagated === "string" && propagated !== "") out.push("a mount propagated to the host");
  return out;
}
