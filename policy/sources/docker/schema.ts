/**
 * The Engine API body shapes the readers decode with, derived from the generated tables (schema.generated.ts, the
 * Engine API's own Go types at the version the project claims, {@link ENGINE_API}).
 *
 * One deliberate widening: `Cmd`, `Entrypoint`, `Shell`, `HostConfig.CapAdd` and `HostConfig.CapDrop` are read as
 * `strslice.StrSlice` (a list of texts, or one text as a one-element list), as every daemon up to v28 decodes them.
 * The claimed API decodes them as plain lists and refuses a body with one text there, so reading the text as a list
 * is never looser than the daemon: an older one runs it that way, a newer one runs nothing.
 */
import { CONTAINER_CREATE, ENGINE_API } from "./schema.generated";
import { fieldsOf, ptr, type Shape, strslice, struct } from "./shape";

export type { Shape };
export { ENGINE_API };

const STRSLICE_CONFIG = ["Cmd", "Entrypoint", "Shell"];
const STRSLICE_HOST = ["CapAdd", "CapDrop"];

function widen(fields: Readonly<Record<string, Shape>>, keys: readonly string[]): Record<string, Shape> {
  const out: Record<string, Shape> = { ...fields };
  for (const k of keys) {
    if (!Object.hasOwn(out, k)) throw new Error(`the generated Engine API table has no field ${k}`);
    out[k] = strslice;
  }
  return out;
}

const create = fieldsOf(CONTAINER_CREATE);
const hostFields = widen(fieldsOf(create.HostConfig as Shape), STRSLICE_HOST);

/** `container.HostConfig` with `Resources` promoted. */
export const HOST_CONFIG: Shape = struct(hostFields);

/** `container.CreateRequest`: `*Config` promoted, plus HostConfig and NetworkingConfig. */
export const CREATE_REQUEST: Shape = struct({
  ...widen(create, STRSLICE_CONFIG),
  HostConfig: ptr(HOST_CONFIG),
});

/**
 * The body as docker v20.10 ... v26 decode it (runconfig `ContainerConfigWrapper`: `*Config`, `HostConfig`, `Cpuset`,
 * `NetworkingConfig` and an embedded `*HostConfig`, whose fields are promoted to the top level). v27 and later decode
 * {@link CREATE_REQUEST}, where the top-level HostConfig fields are unknown and ignored.
 */
export const CONFIG_WRAPPER: Shape = struct({
  ...fieldsOf(CREATE_REQUEST),
  ...hostFields,
  Cpuset: { k: "string" },
});

/** The HostConfig fields the wrapper promotes to the top level. */
export const TOP_LEVEL_HOST_FIELDS: readonly string[] = Object.keys(hostFields);
