/**
 * Windows host paths and named pipes, for bodies sent to a Windows daemon (or Docker Desktop): `C:\ProgramData\docker`,
 * `\\?\C:\`, `\\.\pipe\docker_engine` and `//./pipe/docker_engine` (the daemon takes either slash). Drive letters and
 * names compare without case, as Windows does.
 */

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

/** System folders of a Windows host (under any drive). */
const SYSTEM_FOLDERS = ["windows", "program files", "program files (x86)", "programdata", "users"];

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

/** Why a Windows path is sensitive, or undefined: the drive root, a system folder, or any host named pipe. */
export function windowsSensitiveReason(w: WindowsPath): string | undefined {
  if ("pipe" in w) return `it is the host's named pipe ${w.pipe}`;
  if (!w.drive.includes("/")) return "it is the root of a host drive";
  const folder = SYSTEM_FOLDERS.find((f) => under(w.drive, f) || isAncestor(w.drive, f));
  return folder === undefined ? undefined : `it is, holds or lies in the host folder ${folder}`;
}
