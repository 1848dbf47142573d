/**
 * Mounts of an Engine API create body as the daemon reads them (docker v28.5.2, volume/mounts): `HostConfig.Binds`
 * in the Linux daemon's `src:dst[:mode]` syntax or, where Linux refuses the spec, the Windows daemon's (`C:\x:C:\y`,
 * `\\.\pipe\docker_engine:\\.\pipe\docker_engine`); `HostConfig.Mounts[]` of every type; and a `local`-driver
 * volume whose options bind a host path (`o: bind`, `device: /host/path`), which exposes the host like a bind.
 */
import { isUnknown, type MountView, Unreadable, type Val } from "../workload";
import { bool, field, isObj, str } from "./read";

export interface MountReading {
  readonly type: MountView["type"];
  readonly source: Val<string>;
  readonly target: Val<string>;
  readonly readOnly: Val<boolean>;
  readonly propagation: Val<string>;
}

const RW = new Set(["ro", "rw"]);
const LABEL = new Set(["z", "Z"]);
const PROPAGATION = new Set(["private", "rprivate", "slave", "rslave", "shared", "rshared"]);
const COPY = new Set(["nocopy"]);
const CONSISTENCY = new Set(["consistent", "cached", "delegated", "default"]);

/** linuxValidMountMode: known options only (case as written), at most one of each kind. */
function linuxValidMode(mode: string): boolean {
  if (mode === "") return true;
  const counts = [0, 0, 0, 0, 0];
  for (const o of mode.split(",")) {
    const i = [RW, LABEL, PROPAGATION, COPY, CONSISTENCY].findIndex((set) => set.has(o));
    if (i < 0) return false;
    counts[i] = (counts[i] ?? 0) + 1;
  }
  return counts.every((c) => c <= 1);
}

/** A bind spec as the Linux daemon parses it, or why it refuses it. */
export function parseLinuxBind(raw: string): MountReading | { readonly error: string } {
  const arr = splitN(raw, ":", 4);
  const [first = ""] = arr;
  if (first === "" || arr.length > 3) return { error: "invalid volume specification" };
  let source: string | undefined;
  let target: string;
  let mode = "";
  if (arr.length === 1) target = first;
  else if (arr.length === 2) {
    // `/foo:rw` is a destination with a mode, which a volume cannot have.
    if (linuxValidMode(arr[1] ?? "")) return { error: "invalid volume specification" };
    source = first;
    target = arr[1] ?? "";
  } else {
    source = first;
    target = arr[1] ?? "";
    mode = arr[2] ?? "";
  }
  if (!linuxValidMode(mode)) return { error: `invalid mode: ${mode}` };
  if (!target.startsWith("/")) return { error: "the destination must be an absolute path" };
  const opts = mode.split(",");
  return {
    type: source?.startsWith("/") === true ? "bind" : "volume",
    source,
    target,
    readOnly: opts.includes("ro"),
    propagation: opts.find((o) => PROPAGATION.has(o)) ?? "rprivate",
  };
}

/** Go's strings.SplitN: at most `n` parts, the last one holding the rest. */
function splitN(s: string, sep: string, n: number): string[] {
  const parts = s.split(sep);
  return parts.length <= n ? parts : [...parts.slice(0, n - 1), parts.slice(n - 1).join(sep)];
}

// The Windows daemon's spec grammar (windowsParser.splitRawSpec), matched on the lower-cased spec.
const W_HOST_DIR = String.raw`(?:\\\\\?\\)?[a-z]:[\\/](?:[^\\/:*?"<>|\r\n]+[\\/]?)*`;
const W_NAME = String.raw`[^\\/:*?"<>|\r\n]+`;
const W_PIPE = String.raw`[/\\]{2}.[/\\]pipe[/\\][^:*?"<>|\r\n]+`;
const W_DEST = String.raw`((?:\\\\\?\\)?(?:[a-z]):(?:(?:[\\/][^\\/:*?"<>\r\n]+)*[\\/]?)|${W_PIPE})`;
const W_SPEC = new RegExp(`^(?:(${W_HOST_DIR}|${W_NAME}|${W_PIPE}):)?${W_DEST}(?::(ro|rw))?$`);
const W_HOST_DIR_ONLY = new RegExp(`^${W_HOST_DIR}$`);
const PIPE = /^[/\\]{2}\.[/\\]pipe[/\\]/;

/** A bind spec as the Windows daemon parses it, or why it refuses it. */
export function parseWindowsBind(raw: string): MountReading | { readonly error: string } {
  const m = W_SPEC.exec(raw.toLowerCase());
  if (m === null) return { error: "invalid volume specification" };
  const source = m[1];
  const target = m[2] ?? "";
  const type: MountView["type"] =
    source === undefined ? "volume" : PIPE.test(source) || W_HOST_DIR_ONLY.test(source) ? "bind" : "volume";
  return { type, source, target, readOnly: m[3] === "ro", propagation: undefined };
}

/**
 * One `HostConfig.Binds` entry: the Linux reading, else the Windows one (the scan does not know the daemon's
 * platform, and each refuses what the other takes). A spec both refuse is unreadable: the rules fail closed.
 */
export function readBind(raw: Val<string>): MountReading {
  if (typeof raw !== "string") {
    const u: Val<string> = isUnknown(raw) ? raw : undefined;
    return { type: "bind", source: u, target: u, readOnly: u, propagation: u };
  }
  const linux = parseLinuxBind(raw);
  if (!("error" in linux)) return linux;
  const windows = parseWindowsBind(raw);
  if (!("error" in windows)) return windows;
  const why = new Unreadable(`the Engine refuses the bind (${linux.error})`);
  return { type: "bind", source: why, target: why, readOnly: why, propagation: why };
}

/** `o: bind` (or `rbind`) among a local volume's mount options. */
function bindsHostPath(o: Val<string>): boolean {
  return typeof o === "string" && o.split(",").some((x) => x.trim() === "bind" || x.trim() === "rbind");
}

/**
 * A volume whose driver is `local` (named, or the default when none is named) and whose options name a `device`:
 * with `o: bind` the device is a host folder; a device under /dev is a host device. Either way the host is exposed.
 */
export function localVolumeHostPath(driverConfig: unknown, defaultDriver: Val<string>): Val<string> {
  if (isUnknown(driverConfig)) return driverConfig;
  const name = str(field(driverConfig, "Name"));
  const driver = name === undefined || name === "" ? defaultDriver : name;
  if (isUnknown(driver)) return driver;
  if (driver !== undefined && driver !== "" && driver !== "local") return undefined;
  const opts = field(driverConfig, "Options");
  if (isUnknown(opts)) return opts;
  if (!isObj(opts)) return undefined;
  const device = str(opts.device);
  if (isUnknown(device) || device === undefined) return device;
  const o = str(opts.o);
  if (isUnknown(o)) return o;
  return bindsHostPath(o) || device.startsWith("/dev") ? device : undefined;
}

/** One `HostConfig.Mounts[]` entry. */
export function readMount(m: unknown, defaultDriver: Val<string>): MountReading {
  const t = str(field(m, "Type"));
  const type = typeof t === "string" ? t.toLowerCase() : t;
  const source = str(field(m, "Source"));
  const common: Pick<MountReading, "target" | "readOnly" | "propagation"> = {
    target: str(field(m, "Target")),
    readOnly: bool(field(m, "ReadOnly")),
    propagation: str(field(field(m, "BindOptions"), "Propagation")),
  };
  // A type not known yet may be a bind: judge the source as a host path (or say it cannot be checked).
  if (isUnknown(type)) return { type: "bind", source: typeof source === "string" ? source : type, ...common };
  // A named pipe is the Windows host's own endpoint, as exposed as a bind.
  if (type === "bind" || type === "npipe") return { type: "bind", source, ...common };
  if (type === "tmpfs") return { type: "tmpfs", source: undefined, ...common };
  if (type === "volume") {
    const host = localVolumeHostPath(field(field(m, "VolumeOptions"), "DriverConfig"), defaultDriver);
    if (host !== undefined) return { type: "bind", source: host, ...common };
    return { type: "volume", source, ...common };
  }
  // `image` mounts an image's files and `cluster` a Swarm CSI volume: neither is a host path.
  return { type: "other", source, ...common };
}
