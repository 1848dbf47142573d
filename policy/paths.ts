/**
 * Host paths as the kernel resolves them, and what they expose. A socket rule that compares strings is beaten by
 * `/var/run/../run/docker.sock/` or by mounting `/run` whole; these functions judge the path, not its spelling.
 */

import { caseInsensitiveHostPath, key, macRootReason, spellings, test, wslDrive } from "./host-spellings";
import { credentialPathReason, NODE_HOST_PATHS } from "./paths-credentials";
import { windowsPath, windowsRuntimeReason, windowsSensitiveReason } from "./paths-windows";

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

/** True when `child` is `parent` or lies under it. */
export function isWithin(child: string, parent: string): boolean {
  if (parent === "/") return true;
  return child === parent || child.startsWith(`${parent}/`);
}

/**
 * Container runtime API sockets, and the host's own control sockets that start processes outside any container
 * (systemd's private bus, D-Bus, LXD/Incus, the kubelet's pod-resources and device-plugin APIs): whoever reaches
 * one controls the host. Rootful locations; rootless ones live under /run/user/<uid> and in home folders (below).
 */
export const RUNTIME_SOCKETS: readonly string[] = [
  "/run/docker.sock",
  "/run/docker.sock.raw",
  "/run/dockershim.sock",
  "/run/balena-engine.sock",
  "/run/balena.sock",
  "/run/containerd/containerd.sock",
  "/run/containerd/containerd.sock.ttrpc",
  "/run/k3s/containerd/containerd.sock",
  "/run/k0s/containerd.sock",
  "/run/crio/crio.sock",
  "/run/cri-dockerd.sock",
  "/run/podman/podman.sock",
  "/run/buildkit/buildkitd.sock",
  "/run/systemd/private",
  "/run/systemd/notify",
  "/run/systemd/journal/socket",
  "/run/systemd/journal/stdout",
  "/run/dbus/system_bus_socket",
  // containerd's and CRI-O's NRI plugin socket: a plugin on it may change every container the runtime creates.
  "/run/nri/nri.sock",
  "/var/snap/microk8s/common/run/containerd.sock",
  "/var/snap/lxd/common/lxd/unix.socket",
  "/var/lib/lxd/unix.socket",
  "/var/lib/incus/unix.socket",
  "/var/lib/kubelet/pod-resources/kubelet.sock",
  "/var/lib/kubelet/device-plugins/kubelet.sock",
];

/** Folders that hold only runtime sockets and state: anything under them is the runtime's. */
export const RUNTIME_SOCKET_FOLDERS: readonly string[] = [
  "/run/containerd",
  "/run/crio",
  "/run/docker",
  "/run/podman",
  "/run/containers",
  "/run/k3s",
  "/run/k0s",
  "/run/buildkit",
  "/run/cri-dockerd",
  "/run/balena-engine",
  "/run/snap.docker",
  "/run/kata-containers",
  "/run/runc",
  "/run/crun",
  "/run/runsc",
  "/run/systemd",
  "/run/dbus",
  "/run/nri",
  "/run/lxd",
  "/run/incus",
  // libvirt's daemons (libvirtd, virtqemud, virtproxyd...) start VMs with host devices and files.
  "/run/libvirt",
  "/var/lib/libvirt",
  "/var/snap/microk8s/common/run",
  "/var/snap/lxd/common/lxd",
  "/var/snap/docker",
  "/var/lib/lxd",
  "/var/lib/incus",
  "/var/lib/kubelet/pod-resources",
  "/var/lib/kubelet/device-plugins",
];

/**
 * The host folders where daemons keep their control sockets, the one table of them. A read-only mount does not
 * guard a socket: `connect()` needs write permission on the socket file, and Linux refuses a write on a read-only
 * mount (EROFS, fs/namei.c `sb_permission`) only for regular files, folders and links, never for a socket, so a task
 * connects to every socket a mount shows it (net/unix/af_unix.c `unix_find_bsd`). A mount of one of these folders,
 * of anything in it, or of a folder holding one, read-only or not, is refused; the runtime sockets above are named
 * more precisely. An entry ending in `*` is every folder of that name prefix (`/tmp/ssh-*`: ssh-agent's folders).
 */
export const HOST_SOCKET_FOLDERS: readonly { readonly path: string; readonly what: string }[] = [
  // systemd makes /run a tmpfs for runtime state and sockets; /var/run is a link to it.
  { path: "/run", what: "the host's runtime folder, where its daemons keep their control sockets" },
  // systemd-tmpfiles (legacy.conf) makes /var/lock a link to /run/lock.
  { path: "/var/lock", what: "a link to /run/lock, inside the host's runtime folder" },
  { path: "/var/lib/kubelet/pod-resources", what: "the kubelet's pod-resources API socket folder" },
  { path: "/var/lib/kubelet/device-plugins", what: "the kubelet's device-plugin socket folder" },
  { path: "/var/lib/kubelet/plugins", what: "the kubelet's CSI and DRA driver socket folder" },
  { path: "/var/lib/kubelet/plugins_registry", what: "the kubelet's plugin registration socket folder" },
  // X11, the session manager (ICE), input methods (XIM) and font servers: systemd's tmp.conf makes them.
  { path: "/tmp/.X11-unix", what: "the X11 display's socket folder" },
  { path: "/tmp/.ICE-unix", what: "the desktop session's ICE socket folder" },
  { path: "/tmp/.XIM-unix", what: "the input method's socket folder" },
  { path: "/tmp/.font-unix", what: "the font server's socket folder" },
  { path: "/tmp/ssh-*", what: "an SSH agent's socket folder" },
  { path: "/tmp/tmux-*", what: "a tmux server's socket folder (it runs commands as its user)" },
  { path: "/tmp/dbus-*", what: "a D-Bus bus's socket" },
  // WSL: a dockerd shared between distros listens in /mnt/wsl/shared-docker (the tmpfs WSL shares with every distro);
  // Docker Desktop's WSL integration keeps its engine and guest-services sockets in /mnt/wsl/docker-desktop and shows
  // containers' host binds (sockets among them) under /mnt/wsl/docker-desktop-bind-mounts.
  { path: "/mnt/wsl/shared-docker", what: "a WSL dockerd's socket folder, shared between distros" },
  {
    path: "/mnt/wsl/docker-desktop",
    what: "Docker Desktop's WSL integration socket folder (the engine's socket)",
  },
  {
    path: "/mnt/wsl/docker-desktop-bind-mounts",
    what: "Docker Desktop's WSL staging folder of containers' host binds, sockets among them",
  },
  // SSSD's responders (sssd.conf(5), `pipes`): nss, pam (password checks for any user), sudo, ssh, and the
  // privileged `pipes/private` bus sockets of its daemons.
  {
    path: "/var/lib/sss/pipes",
    what: "SSSD's responder sockets (PAM authentication, sudo rules, its private bus)",
  },
  // Postfix (postfix(1) queue layout): `private` holds the unix sockets of its internal services (local delivery,
  // pipe transports, and often Dovecot's auth socket), `public` the pickup and queue-manager sockets.
  { path: "/var/spool/postfix/private", what: "Postfix's internal service sockets" },
  { path: "/var/spool/postfix/public", what: "Postfix's pickup and queue-manager sockets" },
];

/** The table entry `p` lies in (`inside`), or that lies in `p` (`holds`), or undefined. */
function socketFolderOf(
  p: string,
  fold: boolean,
): { readonly entry: (typeof HOST_SOCKET_FOLDERS)[number]; readonly inside: boolean } | undefined {
  for (const entry of HOST_SOCKET_FOLDERS) {
    const path = key(entry.path, fold);
    const star = path.endsWith("*");
    const folder = star ? path.slice(0, path.lastIndexOf("/")) || "/" : path;
    if (!star) {
      if (isWithin(p, folder)) return { entry, inside: true };
      if (isWithin(folder, p)) return { entry, inside: false };
      continue;
    }
    // A prefix entry: a folder of `folder` whose name starts with the prefix, or anything in one.
    const prefix = path.slice(folder.length + (folder === "/" ? 0 : 1), -1);
    const rest = p.startsWith(`${folder}/`) ? p.slice(folder.length + 1) : undefined;
    if (rest?.split("/")[0]?.startsWith(prefix) === true) return { entry, inside: true };
    if (isWithin(folder, p)) return { entry, inside: false };
  }
  return undefined;
}

/** A file named as a unix socket (`tailscaled.sock`, `cilium.sock`, `snapd.socket`), wherever it is. */
const SOCKET_FILE = /\.(?:sock|socket)$/i;

/**
 * Per-user folders of desktop and rootless runtimes, wherever the home is (`~`, /home/<user>, /Users/<user>):
 * Docker Desktop `~/.docker/run/docker.sock`, Colima `~/.colima/<profile>/docker.sock`, Rancher Desktop
 * `~/.rd/docker.sock`, OrbStack `~/.orbstack/run/docker.sock`, Lima `~/.lima`, rootless Podman's
 * `~/.local/share/containers`. Compose resolves `~` to the home of whoever runs it; the daemon refuses a relative
 * source, so a `~` that reaches here is read as the home folder either way.
 */
const USER_RUNTIME_DIRS =
  /(?:^|\/)(?:\.docker|\.colima|\.rd|\.orbstack|\.lima|\.local\/share\/(?:containers|docker|containerd|buildkit|nerdctl|lxc))(?:\/|$)/;

/** The folders that hold the rootless data-roots above (`~/.local`, `~/.local/share`). */
const USER_RUNTIME_PARENTS = /(?:^|\/)\.local(?:\/share)?$/;

/** A home folder, or the folder of homes, which holds the per-user runtime folders above. */
const HOME_FOLDER = /^\/(?:~|home|Users|var\/home)(?:\/[^/]+)?$/;

/** Socket file names that are a runtime API wherever they live (rootless Docker, Docker Desktop, Colima). */
const SOCKET_NAMES =
  /^(?:docker|dockershim|containerd|crio|cri-dockerd|podman|buildkitd|balena-engine|balena|kubelet)\.sock(?:\.raw|\.ttrpc)?$|^system_bus_socket$|^(?:libvirt|virt[a-z]*d)-sock(?:-ro|-admin)?$/;

/**
 * Why a host path exposes a container runtime socket, or undefined. Catches the socket itself in any spelling,
 * a folder that contains one (`/run`, `/var/run`, `/var`, `/`), and anything under a runtime's socket folder.
 */
export function runtimeSocketReason(raw: string): string | undefined {
  const w = windowsPath(raw);
  if (w === undefined) return linuxRuntimeSocketReason(raw);
  return windowsRuntimeReason(w) ?? (linuxAbsolute(raw) ? linuxRuntimeSocketReason(raw) : undefined);
}

/**
 * True when a Linux daemon reads the path as an absolute host path of its own: a Windows spelling that starts with
 * `/` (`//?/c:/../../run/docker.sock`, `//./pipe/../../run`) is one, cleaned there like any other path.
 */
function linuxAbsolute(raw: string): boolean {
  return raw.trim().startsWith("/");
}

function linuxRuntimeSocketReason(raw: string): string | undefined {
  const p = normalizeHostPath(raw);
  if (p === undefined) return undefined;
  const wsl = wslDrive(p);
  const onDrive = wsl === undefined ? undefined : windowsRuntimeReason(wsl.w);
  if (onDrive !== undefined) return `${onDrive} (${wsl?.at})`;
  const fold = caseInsensitiveHostPath(p);
  const base = p.slice(p.lastIndexOf("/") + 1);
  for (const s of spellings(p, fold)) {
    const hit = RUNTIME_SOCKETS.find((sock) => key(sock, fold) === s);
    if (hit !== undefined) return `it is the runtime socket ${hit}`;
  }
  if (test(SOCKET_NAMES, base, fold)) return `it is a container runtime socket (${base})`;
  for (const s of spellings(p, fold)) {
    const folder = RUNTIME_SOCKET_FOLDERS.find((f) => isWithin(s, key(f, fold)));
    if (folder !== undefined) return `it is inside the runtime folder ${folder}`;
  }
  for (const s of spellings(p, fold)) {
    for (const sock of RUNTIME_SOCKETS) {
      for (const sockSpelling of spellings(sock, fold)) {
        if (isWithin(sockSpelling, s)) return `the folder contains the runtime socket ${sockSpelling}`;
      }
    }
  }
  // Rootless Docker and Podman keep their sockets under /run/user/<uid> ($XDG_RUNTIME_DIR).
  for (const s of spellings(p, fold)) {
    if (s === "/run/user" || /^\/run\/user\/[^/]+$/.test(s))
      return "the folder contains per-user runtime sockets";
    if (
      /^\/run\/user\/[^/]+\/(?:docker|podman|containerd|buildkit|containers|libpod|dockerd-rootless|containerd-rootless|nerdctl)(?:\/|$)/.test(
        s,
      )
    )
      return "it is inside a rootless runtime's folder";
    // The user's session bus and systemd manager: the peer uid is the task's own (no user namespace), so it may
    // start a transient unit (`systemd-run --user`) on the host, outside every wall.
    if (/^\/run\/user\/[^/]+\/(?:bus|systemd|dbus-1)(?:\/|$)/.test(s))
      return "it is the user's D-Bus session bus or systemd manager, which starts processes on the host";
  }
  // Every other control socket: the folders daemons keep them in, and a file named as one.
  for (const s of spellings(p, fold)) {
    const hit = socketFolderOf(s, fold);
    if (hit === undefined) continue;
    const ro = "a read-only mount does not stop connecting to a socket";
    return hit.inside
      ? `it is inside ${hit.entry.path} (${hit.entry.what}): ${ro}`
      : `the folder contains ${hit.entry.path} (${hit.entry.what}): ${ro}`;
  }
  if (SOCKET_FILE.test(base))
    return `it is named as a unix socket (${base}), a daemon's control socket: a read-only mount does not stop connecting to it`;
  if (test(USER_RUNTIME_DIRS, p, fold))
    return "it is inside a per-user runtime folder (Docker Desktop, Colima, Rancher Desktop, OrbStack, Lima, Podman)";
  if (test(USER_RUNTIME_PARENTS, p, fold))
    return "the folder contains rootless runtimes' data (~/.local/share/containers, docker, containerd, buildkit)";
  if (test(HOME_FOLDER, p, fold))
    return "the folder contains per-user runtime folders (~/.docker, ~/.colima, ~/.rd, ~/.orbstack)";
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
  "/var/lib/containers",
  "/var/lib/balena-engine",
  "/var/lib/kubelet",
  "/var/lib/rancher",
  "/var/lib/k0s",
  "/var/lib/etcd",
  "/var/lib/lxd",
  "/var/lib/incus",
  "/var/snap/lxd",
  "/var/snap/docker",
  "/var/log",
  "/etc/kubernetes",
  // CNI plugins, which the runtime executes as root at every sandbox set-up, and their state.
  "/opt/cni",
  "/var/lib/cni",
  "/var/lib/buildkit",
  "/var/lib/nerdctl",
  // LXC containers' configurations hold hooks that run as root.
  "/var/lib/lxc",
  // Where /root and /usr/local live on ostree hosts (Fedora CoreOS, Silverblue, RHEL for Edge).
  "/var/roothome",
  "/var/usrlocal",
  ...NODE_HOST_PATHS,
];

/**
 * Why a host path is sensitive, or undefined: it is one of the host's system folders, lies under one, or is a
 * folder (such as `/`, `/var` or `/var/lib`) that contains one.
 */
export function sensitiveHostPathReason(raw: string): string | undefined {
  const w = windowsPath(raw);
  if (w === undefined) return linuxSensitiveReason(raw);
  return windowsSensitiveReason(w) ?? (linuxAbsolute(raw) ? linuxSensitiveReason(raw) : undefined);
}

function linuxSensitiveReason(raw: string): string | undefined {
  const p = normalizeHostPath(raw);
  if (p === undefined) return undefined;
  if (p === "/") return "it is the host's root folder";
  const wsl = wslDrive(p);
  const onDrive = wsl === undefined ? undefined : windowsSensitiveReason(wsl.w);
  if (onDrive !== undefined) return `${onDrive} (${wsl?.at})`;
  const fold = caseInsensitiveHostPath(p);
  const root = macRootReason(p, fold);
  if (root !== undefined) return root;
  for (const s of spellings(p, fold)) {
    const under = SENSITIVE_HOST_PATHS.find((h) => isWithin(s, key(h, fold)));
    if (under !== undefined)
      return s === key(under, fold)
        ? `it is the host folder ${under}`
        : `it is inside the host folder ${under}`;
  }
  for (const s of spellings(p, fold)) {
    const why = credentialPathReason(s, fold);
    if (why !== undefined) return why;
  }
  for (const s of spellings(p, fold)) {
    const contained = SENSITIVE_HOST_PATHS.find((h) => isWithin(key(h, fold), s));
    if (contained !== undefined) return `the folder contains the host folder ${contained}`;
  }
  return undefined;
}
