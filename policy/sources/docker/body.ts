/**
 * The container create body the daemon applies: decoded as encoding/json does (decode.ts) into the create request,
 * then the top-level HostConfig fields moved as the daemon's version moves them, with the marks the rules read
 * (refused, unknown fields, top-level fields that differ by daemon).
 */
import { isUnreadable, Unreadable } from "../../workload";
import { engineDecode, setOwn, UNKNOWN_FIELDS_KEY, UnknownFields } from "./decode";
import { fromValue, type JsonNode } from "./json-node";
import { CONFIG_WRAPPER, TOP_LEVEL_HOST_FIELDS } from "./schema";

/**
 * The create body the daemon would decode from `n`, with canonical field names at every level. A body that is not
 * an object is refused by the daemon: it comes back {@link Unreadable}; a preview unknown stays unknown.
 */
export function engineBody(n: JsonNode): unknown {
  if (n.t === "opaque") return n.v;
  const { value: decoded, refused: first, unknown } = engineDecode(n, CONFIG_WRAPPER);
  const body = withTopLevelHostConfig(decoded);
  // A later key may hide the value the daemon choked on; the body as a whole is still refused.
  if (typeof body !== "object" || body === null || isUnreadable(body)) return body;
  if (first !== undefined) setOwn(body as Record<string, unknown>, REFUSED_KEY, new Unreadable(first));
  const unknownPaths = unknown.filter((p) => !QUERY_KEYS.has(p));
  // A body decoded before (scan decodes the document, the adapter decodes its result again) keeps its marks.
  if (n.t === "object")
    for (const [k, v] of n.members) {
      if ((k === REFUSED_KEY || k === TOP_LEVEL_KEY) && v.t === "opaque" && isUnreadable(v.v))
        setOwn(body as Record<string, unknown>, k, v.v);
      if (k === UNKNOWN_FIELDS_KEY && v.t === "opaque" && v.v instanceof UnknownFields)
        unknownPaths.unshift(...v.v.paths);
    }
  if (unknownPaths.length > 0)
    setOwn(
      body as Record<string, unknown>,
      UNKNOWN_FIELDS_KEY,
      new UnknownFields([...new Set(unknownPaths)]),
    );
  return body;
}

/**
 * Keys of the create call's query string, which the project's client (dockerode, docker-modem) takes from the same
 * object as the body: the container's name and the image's platform. Written exactly so; the query is
 * case-sensitive.
 */
const QUERY_KEYS = new Set(["name", "platform"]);

/** Fields that `getHostConfig` copies from the top level into a HostConfig that leaves them zero. */
const COPIED = ["Memory", "MemorySwap", "CpuShares", "CpusetCpus", "VolumeDriver"];

const isZero = (v: unknown) => v === undefined || v === 0 || v === "";

/**
 * The HostConfig the daemon applies, from a body decoded as {@link CONFIG_WRAPPER} (docker v20.10.24 ... v26.1.5
 * runconfig `getHostConfig`, the toolkit's docker.io): with no `HostConfig` (absent or null) the top-level fields are
 * the HostConfig; with one, only `Memory`, `MemorySwap`, `CpuShares`, `CpusetCpus` and `VolumeDriver` are copied
 * into it where it leaves them zero, and the rest of the top level is ignored. Docker v27 and later ignore the top
 * level, so a body whose top-level fields take effect means different things on different daemons: it carries an
 * unreadable value at {@link TOP_LEVEL_KEY}, and the rules fail closed on it. Decoding the result again changes
 * nothing (the top-level fields have moved).
 */
function withTopLevelHostConfig(decoded: unknown): unknown {
  if (typeof decoded !== "object" || decoded === null || isUnreadable(decoded)) return decoded;
  const body = decoded as Record<string, unknown>;
  const top: Record<string, unknown> = {};
  for (const k of TOP_LEVEL_HOST_FIELDS)
    if (Object.hasOwn(body, k)) {
      top[k] = body[k];
      delete body[k];
    }
  const cpuset = body.Cpuset;
  delete body.Cpuset;
  const present = Object.keys(top);
  const inner = body.HostConfig;
  let effective: string[] = [];
  if (present.length > 0) {
    if (inner === undefined) {
      setOwn(body, "HostConfig", top);
      effective = present;
    } else if (typeof inner === "object" && inner !== null && !isUnreadable(inner)) {
      const hc = inner as Record<string, unknown>;
      for (const k of COPIED)
        if (!isZero(top[k]) && isZero(hc[k])) {
          setOwn(hc, k, top[k]);
          effective.push(k);
        }
    }
  }
  const hc = body.HostConfig;
  if (
    typeof cpuset === "string" &&
    cpuset !== "" &&
    typeof hc === "object" &&
    hc !== null &&
    !isUnreadable(hc)
  )
    if (isZero((hc as Record<string, unknown>).CpusetCpus))
      setOwn(hc as Record<string, unknown>, "CpusetCpus", cpuset);
  const [first] = effective;
  if (first !== undefined)
    setOwn(
      body,
      TOP_LEVEL_KEY,
      new Unreadable(
        `HostConfig fields at the top level of the body (${effective.join(", ")}) apply on Docker up to v26 (API 1.43; the toolkit's docker.io 20.10) and are ignored from v27, so the container differs by daemon; write them under HostConfig`,
      ),
    );
  return body;
}

/** Where a body whose top-level HostConfig fields take effect says so (no API field has this name). */
export const TOP_LEVEL_KEY = "(HostConfig fields at the top level)";

/** Where a body the daemon refuses says why (no API field has this name). */
export const REFUSED_KEY = "(refused by the Engine)";

/** {@link engineBody} of a plain value (a body built in code, a Pulumi input). */
export function engineBodyOf(v: unknown): unknown {
  return engineBody(fromValue(v));
}
