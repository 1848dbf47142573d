/**
 * The names a host path also has (policy/paths.ts judges the path, not its spelling): `/var/run` ≡ `/run`, macOS's
 * other names for its root and system folders, WSL's Windows drives, and the host folders that compare names without
 * case.
 */
import { type WindowsPath, windowsPath } from "./paths-windows";

/** `/var/run` is a symlink to `/run` on every current distribution; both spellings name one folder. */
export function canonicalRun(p: string): string {
  if (p === "/var/run") return "/run";
  if (p.startsWith("/var/run/")) return `/run/${p.slice("/var/run/".length)}`;
  return p;
}

/**
 * Host folders whose file systems compare names without case: Docker Desktop on macOS shares `/Users`, `/Volumes`,
 * `/private` (and `/tmp`, `/var/folders`, links into it) and the data volume `/System/Volumes/Data` from APFS,
 * case-insensitive by default, so
 * `/Users/alice/.DOCKER` is `~/.docker`; WSL shows Windows drives as `/mnt/<letter>` (DrvFs, case-insensitive unless a
 * folder is marked otherwise). A path under one is compared with the tables below without case.
 */
const CASE_INSENSITIVE_ROOTS =
  /^\/(?:users|volumes|private|tmp|var\/folders|system\/volumes\/data|mnt\/[a-z])(?:\/|$)/i;

/** True when `p` lies on a host folder that compares names without case (CASE_INSENSITIVE_ROOTS). */
export function caseInsensitiveHostPath(p: string): boolean {
  return CASE_INSENSITIVE_ROOTS.test(p);
}

/** `re` comparing without case when `fold` (the path lies on a case-insensitive host folder). */
export function test(re: RegExp, p: string, fold: boolean): boolean {
  return fold && !re.flags.includes("i") ? new RegExp(re.source, `${re.flags}i`).test(p) : re.test(p);
}

/** `p`, lower case when it lies on a case-insensitive host folder: the key it is compared by. */
export function key(p: string, fold: boolean): string {
  return fold ? p.toLowerCase() : p;
}

/**
 * The paths a normalized path also is on macOS, each fold applied in turn: `/private/tmp|var|etc` are `/tmp`, `/var`,
 * `/etc` (those are links into `/private`); `/System/Volumes/Data/<p>` is `/<p>` (the data volume, firmlinked into
 * `/`: `/System/Volumes/Data/private/var/run` is /var/run); `/Volumes/<name>/<p>` may be `/<p>` (the system volume
 * is mounted there as well: `/Volumes/Macintosh HD` links to `/`, and any name may be it). A folder that holds one of
 * those roots (`/private`, which holds /etc and /var; `/Volumes`; `/System`; `/System/Volumes`) is read as `/`.
 * Compared without case: the names exist only on macOS, whose volumes compare names without case by default.
 */
function macNames(p: string): string[] {
  const out = [p];
  for (let cur = p; ; ) {
    const data = /^\/system\/volumes\/data(\/.*)?$/i.exec(cur);
    const volume = /^\/volumes\/[^/]+(\/.*)?$/i.exec(cur);
    const linked = /^\/private(\/(?:tmp|var|etc)(?:\/.*)?)$/i.exec(cur);
    const holder = /^\/(?:private|volumes|system|system\/volumes)$/i.test(cur);
    const next =
      data !== null
        ? (data[1] ?? "/")
        : volume !== null
          ? (volume[1] ?? "/")
          : linked !== null
            ? (linked[1] ?? "/")
            : holder
              ? "/"
              : undefined;
    if (next === undefined || out.includes(next)) return out;
    out.push(next);
    cur = next;
  }
}

/**
 * What a macOS path that is, or holds, a disk's root is (`macNames` reads it as `/`), for the message; undefined for
 * any other path.
 */
export function macRootReason(p: string, fold: boolean): string | undefined {
  if (p === "/" || !spellings(p, fold).includes("/")) return undefined;
  const what = /^\/private$/i.test(p)
    ? "macOS's /private, which holds the host's /etc, /var and /tmp (they are links into it)"
    : /^\/volumes\/[^/]+$/i.test(p)
      ? "a disk's root as macOS mounts it, which may be the system volume (/Volumes/Macintosh HD links to /)"
      : /^\/system\/volumes\/data$/i.test(p)
        ? "macOS's data volume, firmlinked into / (/Users, /private, /usr/local are in it)"
        : "a macOS folder that holds the disks' roots (the system volume among them)";
  return `it is ${what}, read as the host's root folder`;
}

/**
 * The spellings a normalized path may have on a host: itself, its `/run` ≡ `/var/run` twin and, on macOS, the paths
 * it also is (`macNames`: `/private/var` ≡ `/var`, `/System/Volumes/Data/etc` ≡ `/etc`, `/Volumes/<name>` ≡ `/`). On a
 * case-insensitive folder they are lower case, to be compared with lower-cased tables (`key`).
 */
export function spellings(raw: string, fold = false): string[] {
  const out: string[] = [];
  for (const p of macNames(key(raw, fold))) {
    const c = canonicalRun(p);
    const twin = c === "/run" ? "/var/run" : c.startsWith("/run/") ? `/var${c}` : c;
    out.push(p, c, twin);
  }
  return [...new Set(out)];
}

/**
 * The Windows drive path a WSL path is: WSL shows each Windows drive `X:` at `/mnt/x` (DrvFs), so
 * `/mnt/c/Users/alice` is `C:\Users\alice` and `/mnt/c` the whole drive. Undefined for any other path.
 */
export function wslDrive(p: string): { readonly w: WindowsPath; readonly at: string } | undefined {
  const m = /^\/mnt\/([a-z])(\/.*)?$/i.exec(p);
  if (m === null) return undefined;
  const letter = (m[1] ?? "").toLowerCase();
  const w = windowsPath(`${letter}:${m[2] ?? "/"}`);
  return w === undefined
    ? undefined
    : { w, at: `WSL shows the Windows drive ${letter.toUpperCase()}: at /mnt/${letter}` };
}
