/**
 * Windows host paths and named pipes, for bodies sent to a Windows daemon (or Docker Desktop): `C:\ProgramData\docker`,
 * `\\?\C:\`, `\\.\pipe\docker_engine` and `//./pipe/docker_engine` (the daemon takes either slash). Drive letters and
 * names compare without case, as Windows does. WSL's `/mnt/<letter>/...` is the same drive path (policy/paths.ts), so
 * a Windows drive is judged here whichever way it is spelled.
 */

import { credentialNameReason, credentialPathReason } from "./paths-credentials";

/** A Windows host path: a named pipe, or a drive path as `c:/a/b` (lower case, `/`, `.`/`..` resolved). */
export type WindowsPath = { readonly pipe: string } | { readonly drive: string };

const PIPE = /^[/\\]{2}[.?][/\\]pipe[/\\](.+)$/i;
const DRIVE = /^(?:[/\\]{2}\?[/\\])?([a-z]):(?:[/\\](.*))?$/i;

export function windowsPath(raw: string): WindowsPath | undefined {
  const s = raw.trim();
  const p = PIPE.exec(s);
  if (p !== null) return { pipe: (p[1] ?? "").toLowerCase() };
  const d = DRIVE.exec(s);
  if (d === null) return undefined;
  const out: string[] = [];
  for (const seg of (d[2] ?? "").toLowerCase().split(/[/\\]/)) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") out.pop();
    else out.push(seg);
  }
  return { drive: [`${(d[1] ?? "").toLowerCase()}:`, ...out].join("/") };
}

/** Pipes that are a container runtime's API (Docker Engine, Docker Desktop, containerd, Podman, BuildKit). */
const RUNTIME_PIPE = /docker|containerd|podman|buildkit|moby|cri-?dockerd|crio/;

/** Runtime state folders on a Windows host (under any drive). */
const RUNTIME_FOLDERS = ["programdata/docker", "programdata/containerd", "programdata/docker desktop"];

/** System folders of a Windows host (under any drive). `Users` is judged by its homes (`windowsHomeReason`). */
const SYSTEM_FOLDERS = ["windows", "program files", "program files (x86)", "programdata"];

/**
 * What a Windows home holds besides the dot-folders of every home (`.ssh`, `.aws`, `.kube`, `.docker`: the one table
 * in paths-credentials.ts): `AppData` (Roaming: gcloud's and the GitHub CLI's tokens, browsers' saved passwords and
 * cookies, the Start Menu's Startup folder, which runs programs at the user's login; Local: Docker Desktop's and WSL's
 * disks; Microsoft\Credentials and Protect, the Credential Manager's store and DPAPI's master keys), the registry
 * hive `NTUSER.DAT` with its logs and `ntuser.ini` (the user's Run keys), `_netrc` (curl's and git's on Windows), and
 * `.docker` whole (registry logins, Docker Desktop's contexts and settings).
 */
const WINDOWS_HOME_CREDENTIALS = /^(appdata|ntuser\.[^/]*|_netrc|\.docker)(?:\/|$)/;

/** The path of a drive path below its drive (`c:/users/a` -> `users/a`), empty for the drive root. */
function below(drivePath: string): string {
  const i = drivePath.indexOf("/");
  return i < 0 ? "" : drivePath.slice(i + 1);
}

/**
 * Why a drive path in `\Users` hands over a user's credentials, or undefined: `\Users` (every home), a home (`\Users\<name>`,
 * which holds them all), or what a home holds: its dot-folders, read with the one table of homes' credentials, and
 * Windows' own (WINDOWS_HOME_CREDENTIALS). A project folder in a home (`C:\Users\alice\src\app`) passes.
 */
function windowsHomeReason(drivePath: string): string | undefined {
  const segs = below(drivePath).split("/");
  if (segs[0] !== "users") return undefined;
  if (segs.length === 1)
    return "it is the folder of the host's home folders (\\Users), which hold every user's credentials";
  if (segs.length === 2)
    return `it is the home folder \\Users\\${segs[1]}, which holds its user's credentials (.ssh, .aws, AppData, ...)`;
  const own = WINDOWS_HOME_CREDENTIALS.exec(segs.slice(2).join("/"));
  if (own !== null) return `it holds the host user's credentials or login programs (${own[1]})`;
  return credentialPathReason(`/Users/${segs.slice(1).join("/")}`, true);
}

function under(drivePath: string, folder: string): boolean {
  const rest = drivePath.slice(drivePath.indexOf("/") + 1);
  const p = drivePath.includes("/") ? rest : "";
  return p === folder || p.startsWith(`${folder}/`);
}

/** Why a Windows path exposes a runtime API, or undefined. */
export function windowsRuntimeReason(w: WindowsPath): string | undefined {
  if ("pipe" in w)
    return RUNTIME_PIPE.test(w.pipe) ? `it is the runtime named pipe \\\\.\\pipe\\${w.pipe}` : undefined;
  const folder = RUNTIME_FOLDERS.find((f) => under(w.drive, f) || isAncestor(w.drive, f));
  return folder === undefined ? undefined : `it is or holds the runtime folder ${folder}`;
}

function isAncestor(drivePath: string, folder: string): boolean {
  const i = drivePath.indexOf("/");
  const p = i < 0 ? "" : drivePath.slice(i + 1);
  return p === "" || folder.startsWith(`${p}/`);
}

/**
 * Why a Windows path is sensitive, or undefined: the drive root, a system folder, any host named pipe, a home or
 * the credentials it holds, or a credential folder anywhere on the drive (`D:\backup\.ssh`).
 */
export function windowsSensitiveReason(w: WindowsPath): string | undefined {
  if ("pipe" in w) return `it is the host's named pipe ${w.pipe}`;
  if (!w.drive.includes("/")) return "it is the root of a host drive";
  const folder = SYSTEM_FOLDERS.find((f) => under(w.drive, f) || isAncestor(w.drive, f));
  if (folder !== undefined) return `it is, holds or lies in the host folder ${folder}`;
  return windowsHomeReason(w.drive) ?? credentialNameReason(`/${below(w.drive)}`);
}
