/**
 * Host paths as the kernel resolves them, and what they expose. A socket rule that compares strings is beaten by
 * `/var/run/../run/docker.sock/` or by mounting `/run` whole; these functions judge the path, not its spelling.
 */

/**
 * Normalizes a host path: collapses `//`, resolves `.` and `..` (never above `/`), drops the trailing `/`.
 * A relative path is read from `/` (Docker and Kubernetes refuse relative bind sources; reading it as absolute
 * errs on the side of catching it). Returns undefined for an empty path.
 */
export function normalizeHostPath(raw: string): string | undefined {
  const trimmed = raw.trim();
  if (trimmed === "") return undefined;
  const out: string[] = [];
  for (const seg of trimmed.replace(/\\/g, "/").split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") out.pop();
    else out.push(seg);
  }
  return `/${out.join("/")}`;
}

/** `/var/run` is a symlink to `/run` on every current distribution; both spellings name one folder. */
export function canonicalRun(p: string): string {
  if (p === "/var/run") return "/run";
  if (p.startsWith("/var/run/")) return `/run/${p.slice("/var/run/".length)}`;
  return p;
}

/** The spellings a normalized path may have on a host: itself and its `/run` ≡ `/var/run` twin. */
function spellings(p: string): string[] {
  const c = canonicalRun(p);
  const twin = c === "/run" ? "/var/run" : c.startsWith("/run/") ? `/var${c}` : c;
  return [...new Set([p, c, twin])];
}

/** True when `child` is `parent` or lies under it. */
export function isWithin(child: string, parent: string): boolean {
  if (parent === "/") return true;
  return child === parent || child.startsWith(`${parent}/`);
}

/** Container runtime API sockets: whoever reaches one controls every container on the host. */
export const RUNTIME_SOCKETS: readonly string[] = [
  "/run/docker.sock",
  "/run/docker.sock.raw",
  "/run/dockershim.sock",
  "/run/containerd/containerd.sock",
  "/run/containerd/containerd.sock.ttrpc",
  "/run/k3s/containerd/containerd.sock",
  "/run/crio/crio.sock",
  "/run/cri-dockerd.sock",
  "/run/podman/podman.sock",
  "/run/buildkit/buildkitd.sock",
  "/var/snap/microk8s/common/run/containerd.sock",
];

/** Folders that hold only runtime sockets and state: anything under them is the runtime's. */
export const RUNTIME_SOCKET_FOLDERS: readonly string[] = [
  "/run/containerd",
  "/run/crio",
  "/run/docker",
  "/run/podman",
  "/run/k3s/containerd",
  "/run/buildkit",
  "/run/cri-dockerd",
  "/var/snap/microk8s/common/run",
];

/** Socket file names that are a runtime API wherever they live (rootless Docker, Docker Desktop, Colima). */
const SOCKET_NAMES =
  /^(?:docker|dockershim|containerd|crio|cri-dockerd|podman|buildkitd)\.sock(?:\.raw|\.ttrpc)?$/;

/**
 * Why a host path exposes a container runtime socket, or undefined. Catches the socket itself in any spelling,
 * a folder that contains one (`/run`, `/var/run`, `/var`, `/`), and anything under a runtime's socket folder.
 */
export function runtimeSocketReason(raw: string): string | undefined {
  const p = normalizeHostPath(raw);
  if (p === undefined) return undefined;
  const base = p.slice(p.lastIndexOf("/") + 1);
  for (const s of spellings(p)) {
    const hit = RUNTIME_SOCKETS.find((sock) => sock === s);
    if (hit !== undefined) return `it is the runtime socket ${hit}`;
  }
  if (SOCKET_NAMES.test(base)) return `it is a container runtime socket (${base})`;
  for (const s of spellings(p)) {
    const folder = RUNTIME_SOCKET_FOLDERS.find((f) => isWithin(s, f));
    if (folder !== undefined) return `it is inside the runtime folder ${folder}`;
  }
  for (const s of spellings(p)) {
    for (const sock of RUNTIME_SOCKETS) {
      for (const sockSpelling of spellings(sock)) {
        if (isWithin(sockSpelling, s)) return `the folder contains the runtime socket ${sockSpelling}`;
      }
    }
  }
  // Rootless Docker and Podman keep their sockets under /run/user/<uid>.
  for (const s of spellings(p)) {
    if (s === "/run/user" || /^\/run\/user\/[^/]+$/.test(s))
      return "the folder contains per-user runtime sockets";
  }
  return undefined;
}

/** Host folders a container must never see: the host's system, kernel views, and runtime state. */
export const SENSITIVE_HOST_PATHS: readonly string[] = [
  "/boot",
  "/dev",
  "/etc",
  "/lib",
  "/lib32",
  "/lib64",
  "/proc",
  "/sys",
  "/usr",
  "/bin",
  "/sbin",
  "/root",
  "/var/lib/docker",
  "/var/lib/containerd",
  "/var/lib/kubelet",
  "/var/lib/rancher",
  "/var/log",
  "/etc/kubernetes",
];

/**
 * Why a host path is sensitive, or undefined: it is one of the host's system folders, lies under one, or is a
 * folder (such as `/`, `/var` or `/var/lib`) that contains one.
 */
export function sensitiveHostPathReason(raw: string): string | undefined {
  const p = normalizeHostPath(raw);
  if (p === undefined) return undefined;
  if (p === "/") return "it is the host's root folder";
  for (const s of spellings(p)) {
    const under = SENSITIVE_HOST_PATHS.find((h) => isWithin(s, h));
    if (under !== undefined)
      return s === under ? `it is the host folder ${under}` : `it is inside the host folder ${under}`;
  }
  for (const s of spellings(p)) {
    const contained = SENSITIVE_HOST_PATHS.find((h) => isWithin(h, s));
    if (contained !== undefined) return `the folder contains the host folder ${contained}`;
  }
  return undefined;
}
