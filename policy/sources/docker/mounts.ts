/**
 * Mounts of an Engine API create body as the daemon reads them (docker v28.5.2, volume/mounts): `HostConfig.Binds`
 * in the Linux daemon's `src:dst[:mode]` syntax or, where Linux refuses the spec, the Windows daemon's (`C:\x:C:\y`,
 * `\\.\pipe\docker_engine:\\.\pipe\docker_engine`); `HostConfig.Mounts[]` of every type; and a `local`-driver
 * volume whose options expose host paths (a bind, an overlay of host folders, a host device or kernel filesystem),
 * which exposes the host like a bind.
 */

import { isWithin, normalizeHostPath } from "../../paths";
import { isUnknown, type MountView, Unreadable, type Val } from "../../workload";
import { bool, entries, field, isObj, join, str } from "../lenient";

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

/** A host path that a `local` volume's options expose, and where in the options it is written. */
export interface LocalVolumeExposure {
  readonly source: Val<string>;
  /** The option key that names it (`device`, `o`). */
  readonly at: string;
  /** True for a layer the container only reads (an overlay's lowerdir). */
  readonly readOnly: boolean;
}

/** Kernel filesystems that show the host's kernel state when the daemon mounts them, as the host folder they are. */
const KERNEL_FS: Readonly<Record<string, string>> = {
  proc: "/proc",
  sysfs: "/sys",
  cgroup: "/sys/fs/cgroup",
  cgroup2: "/sys/fs/cgroup",
  debugfs: "/sys/kernel/debug",
  tracefs: "/sys/kernel/tracing",
  securityfs: "/sys/kernel/security",
  configfs: "/sys/kernel/config",
  bpf: "/sys/fs/bpf",
  pstore: "/sys/fs/pstore",
  efivarfs: "/sys/firmware/efi/efivars",
  selinuxfs: "/sys/fs/selinux",
  fusectl: "/sys/fs/fuse/connections",
  binfmt_misc: "/proc/sys/fs/binfmt_misc",
  nfsd: "/proc/fs/nfsd",
  devtmpfs: "/dev",
  devpts: "/dev/pts",
  mqueue: "/dev/mqueue",
  hugetlbfs: "/dev/hugepages",
  rpc_pipefs: "/run/rpc_pipefs",
};
/** Filesystems that hold only memory: the device is a label. */
const MEMORY_FS = new Set(["tmpfs", "ramfs"]);
/** Network filesystems: the device names a remote share, not a host path. */
const NETWORK_FS = new Set([
  "nfs",
  "nfs4",
  "cifs",
  "smb3",
  "smb",
  "ceph",
  "glusterfs",
  "9p",
  "sshfs",
  "fuse.sshfs",
]);

/** Overlay's `dir:dir` list, `\` escaping a separator; each folder unescaped. */
function overlayDirs(v: string): string[] {
  return (v.match(/(?:\\.|[^:\\])+/g) ?? []).map((d) => d.replace(/\\(.)/g, "$1"));
}

/**
 * What a `local`-driver volume's options expose of the host, as the daemon mounts them (docker v28.5.2 and v20.10.24
 * volume/local: `mount.Mount(device, path, type, o)`, run by the root daemon on the host, nothing normalised):
 * - `o` with `bind` or `rbind` binds the host path `device`, whatever `type` says;
 * - `type: overlay` stacks the host folders named by `lowerdir` (read), `upperdir` and `workdir` (written);
 * - a kernel filesystem (`proc`, `sysfs`, `cgroup2`, `debugfs`, ...) shows the host's own kernel state;
 * - `tmpfs` and `ramfs` hold memory: nothing of the host;
 * - `nfs`, `cifs` and the other network filesystems mount a remote share over the host's own network, a route off
 *   the machine that no egress wall sees: it fails closed;
 * - any other type mounts the block device `device` as the host kernel resolves it (`//dev/sda1`, `/./dev/sda1`
 *   and `/var/../dev/sda1` are `/dev/sda1`); a device outside /dev (a link, `/proc/1/root/dev/...`, a ZFS dataset)
 *   is what the host makes of it, which the policy cannot see: it fails closed.
 * Options the daemon refuses (an unknown key, `device` without `type`) never mount anything.
 */
export function localVolumeExposures(options: unknown): LocalVolumeExposure[] {
  if (isUnknown(options)) return [{ source: options, at: "", readOnly: false }];
  if (!isObj(options)) return [];
  const keys = Object.keys(options);
  if (keys.length === 0 || keys.some((k) => !["type", "o", "device", "size"].includes(k))) return [];
  const type = str(options.type);
  const o = str(options.o);
  const device = str(options.device);
  if (isUnknown(type)) return [{ source: type, at: "type", readOnly: false }];
  if (isUnknown(o)) return [{ source: o, at: "o", readOnly: false }];
  if (isUnknown(device)) return [{ source: device, at: "device", readOnly: false }];
  if (type === undefined || device === undefined || device === "") return [];
  const flags = (o ?? "").split(",").map((x) => x.trim());
  if (flags.includes("bind") || flags.includes("rbind"))
    return [{ source: device, at: "device", readOnly: false }];
  const fs = type.trim().toLowerCase();
  if (NETWORK_FS.has(fs))
    return [
      {
        source: new Unreadable(
          `a ${JSON.stringify(fs)} volume mounts a remote share (${JSON.stringify(device)}) from the host's own network, outside the project's egress walls`,
        ),
        at: "type",
        readOnly: false,
      },
    ];
  if (MEMORY_FS.has(fs) || fs === "none" || fs === "") return [];
  const kernel = KERNEL_FS[fs];
  if (kernel !== undefined) return [{ source: kernel, at: "type", readOnly: false }];
  if (fs === "overlay") {
    const out: LocalVolumeExposure[] = [];
    for (const opt of flags) {
      const m = /^(lowerdir\+?|datadir\+|upperdir|workdir)=(.*)$/.exec(opt);
      if (m === null) continue;
      const lower = m[1] !== "upperdir" && m[1] !== "workdir";
      for (const dir of overlayDirs(m[2] ?? "")) out.push({ source: dir, at: "o", readOnly: lower });
    }
    return out;
  }
  const p = normalizeHostPath(device);
  if (p !== undefined && isWithin(p, "/dev")) return [{ source: p, at: "device", readOnly: false }];
  return [
    {
      source: new Unreadable(
        `a ${JSON.stringify(type)} volume mounts the device ${JSON.stringify(device)}, which the host resolves (a block device, a link to one, a dataset); the policy cannot see what it is`,
      ),
      at: "device",
      readOnly: false,
    },
  ];
}

/**
 * The host paths a volume exposes through its driver: the `local` driver's options (named, or the default when none
 * is named; a `Mounts` volume's default is always `local`, `HostConfig.VolumeDriver` is for Binds only).
 */
export function volumeDriverExposures(name: Val<string>, options: unknown): LocalVolumeExposure[] {
  if (isUnknown(name)) return [{ source: name, at: "", readOnly: false }];
  if (name !== undefined && name.trim() !== "" && name.trim() !== "local")
    return [
      {
        source: new Unreadable(
          `the volume driver ${JSON.stringify(name.trim())} is a plugin: it mounts whatever its options say (a host folder, a remote share), which the rules cannot read`,
        ),
        at: "",
        readOnly: false,
      },
    ];
  return localVolumeExposures(options);
}

/** One `HostConfig.Mounts[]` entry: a `local` volume whose options expose host paths reads as binds of them. */
export function readMount(m: unknown): (MountReading & { readonly at?: string })[] {
  const t = str(field(m, "Type"));
  const type = typeof t === "string" ? t.toLowerCase() : t;
  const source = str(field(m, "Source"));
  const common: Pick<MountReading, "target" | "readOnly" | "propagation"> = {
    target: str(field(m, "Target")),
    readOnly: bool(field(m, "ReadOnly")),
    propagation: str(field(field(m, "BindOptions"), "Propagation")),
  };
  // A type not known yet may be a bind: judge the source as a host path (or say it cannot be checked).
  if (isUnknown(type))
    return [{ type: "bind", source: typeof source === "string" ? source : type, ...common }];
  // A named pipe is the Windows host's own endpoint, as exposed as a bind.
  if (type === "bind" || type === "npipe") return [{ type: "bind", source, ...common }];
  if (type === "tmpfs") return [{ type: "tmpfs", source: undefined, ...common }];
  if (type === "volume") {
    const dc = field(field(m, "VolumeOptions"), "DriverConfig");
    const host: LocalVolumeExposure[] = isUnknown(dc)
      ? [{ source: dc, at: "", readOnly: false }]
      : volumeDriverExposures(str(field(dc, "Name")), field(dc, "Options"));
    if (host.length === 0) return [{ type: "volume", source, ...common }];
    return host.map((h) => ({
      type: "bind",
      ...common,
      source: h.source,
      readOnly: h.readOnly || common.readOnly,
      at: `VolumeOptions.DriverConfig${h.at === "" ? "" : `.Options.${h.at}`}`,
    }));
  }
  // `image` mounts an image's files and `cluster` a Swarm CSI volume: neither is a host path.
  return [{ type: "other", source, ...common }];
}

/** The tmpfs mounts of a `target -> options` map (`HostConfig.Tmpfs`, `docker.Container` `tmpfs`) at `base`. */
export function tmpfsMounts(tmpfs: unknown, base: string): MountView[] {
  return entries(tmpfs).map(([target]) => ({
    type: "tmpfs",
    source: undefined,
    target,
    readOnly: false,
    propagation: undefined,
    tainted: false,
    path: join(base, target),
  }));
}
