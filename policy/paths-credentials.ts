/**
 * Host paths that hand over a credential of the host's user: agent sockets (SSH, GPG, the desktop keyring), the
 * display servers (X11, Wayland: keystrokes and the screen), and the folders where command-line tools keep their
 * keys and tokens (SSH, GPG, kubectl, the cloud CLIs, Pulumi, Docker's registry logins, git, npm, PyPI, Vault,
 * GitHub's CLI). A container that sees one acts as that user wherever the credential reaches. Paths are normalized
 * (policy/paths.ts) before they come here; `~` is any user's home.
 */

/**
 * A node's folders outside the system folders (`/etc`, `/usr`, `/lib`, `/root`, `/var/lib/kubelet`, which
 * SENSITIVE_HOST_PATHS names already) that run code as root or hold the cluster's credentials. Each is named by the
 * project that uses it:
 * - cron spools: cronie `src/pathnames.h` (CRONDIR `/var/spool/cron`), Debian cron (`/var/spool/cron/crontabs`),
 *   at (`ATJOB_DIR`: `/var/spool/cron/atjobs` on Debian, `/var/spool/at` on Fedora), anacron, incron;
 * - cloud-init `cloudinit/settings.py` (`cloud_dir: /var/lib/cloud`, whose `scripts/per-boot` run as root at each
 *   boot; `run_dir: /run/cloud-init`, which holds `instance-data-sensitive.json`); the Azure agent's `/var/lib/waagent`
 *   (the provisioning certificates and `ovf-env.xml`);
 * - node binaries the kubelet, containerd and CRI-O execute as root: `/opt/bin` (Flatcar, Container Linux),
 *   `/opt/libexec` (FlexVolume drivers where `/usr` is read-only), containerd's `opt` plugin root `/opt/containerd`,
 *   NRI's `plugin_path` `/opt/nri`, GKE COS's `/home/kubernetes` (kubelet, CNI binaries, FlexVolume drivers);
 * - kubeconfigs and certificates: kube-apiserver `--cert-dir` (default `/var/run/kubernetes`), kops and legacy GCE
 *   `/srv/kubernetes`, Kubernetes The Hard Way `/var/lib/kubernetes` and `/var/lib/kube-proxy`, minikube
 *   `/var/lib/minikube`, MicroK8s `/var/snap/microk8s` (`current/credentials`, `certs`);
 * - systemd: `/run/systemd` (transient units, the manager's socket), its encrypted credentials' host key
 *   `/var/lib/systemd/credential.secret` and services' credentials under `/run/credentials`.
 */
export const NODE_HOST_PATHS: readonly string[] = [
  "/var/spool/cron",
  "/var/spool/at",
  "/var/spool/anacron",
  "/var/spool/incron",
  "/var/lib/cloud",
  "/run/cloud-init",
  "/var/lib/waagent",
  "/opt/bin",
  "/opt/sbin",
  "/opt/libexec",
  "/opt/containerd",
  "/opt/nri",
  "/home/kubernetes",
  "/run/kubernetes",
  "/srv/kubernetes",
  "/var/lib/kubernetes",
  "/var/lib/kube-proxy",
  "/var/lib/minikube",
  "/var/snap/microk8s",
  "/run/systemd",
  "/run/credentials",
  "/var/lib/systemd",
];

/**
 * Credential files and folders under a home folder (`~/.ssh`, `/home/<user>/.aws/credentials`), in any case: on a
 * Mac's file system, where Docker Desktop binds `/Users/...`, `~/.SSH` is `~/.ssh`.
 */
const IN_HOME =
  /^\/(?:~|root|home\/[^/]+|Users\/[^/]+|var\/home\/[^/]+)\/(\.ssh|\.gnupg|\.kube|\.aws|\.azure|\.oci|\.pulumi|\.docker\/config\.json|\.config\/(?:gcloud|gh|hub|op|doctl|helm)|\.password-store|\.terraform\.d|\.vault-token|\.netrc|\.git-credentials|\.npmrc|\.pypirc|\.cargo\/credentials(?:\.toml)?|\.m2\/settings\.xml|\.gradle\/gradle\.properties|\.local\/share\/keyrings)(?:\/|$)/i;

/**
 * The same folders in a home outside `/home` (a service's home, `/var/lib/jenkins/.ssh`, `/srv/git/.ssh`): a folder
 * named `.ssh`, `.kube`, `.gnupg`, `.aws`... holds its user's keys, `authorized_keys` (a login on the node) and
 * kubeconfigs wherever it is.
 */
const ANYWHERE =
  /(?:^|\/)(\.ssh|\.gnupg|\.kube|\.aws|\.azure|\.oci|\.pulumi|\.docker\/config\.json|\.config\/(?:gcloud|gh|hub|op|doctl|helm)|\.password-store|\.vault-token|\.netrc|\.git-credentials|\.npmrc|\.pypirc|authorized_keys2?|id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?)(?:\/|$)/i;

/** A user's own units and autostart entries: the user's systemd manager and desktop session start them as that user. */
const USER_STARTUP =
  /^\/(?:~|root|home\/[^/]+|Users\/[^/]+|var\/home\/[^/]+)\/(\.config\/(?:systemd|autostart))(?:\/|$)/;

/** Agent and display sockets, and the folders that hold them. */
const SOCKETS: readonly [RegExp, string][] = [
  [/^\/tmp\/ssh-[^/]+(?:\/|$)/, "an SSH agent's socket folder"],
  [/^\/tmp\/\.X11-unix(?:\/|$)/, "the X11 display's sockets (keystrokes and the screen)"],
  [/^\/tmp\/\.ICE-unix(?:\/|$)/, "the desktop session's ICE sockets"],
  [
    /^\/run\/user\/[^/]+\/(?:gnupg|keyring|gcr|openssh_agent|ssh-agent(?:\.socket)?|wayland-[^/]*|\.?ssh[^/]*)(?:\/|$)/,
    "an agent or display socket of a user's session",
  ],
  [/^\/run\/host-services\/ssh-auth\.sock$/, "Docker Desktop's SSH agent socket"],
];

/** A home folder, or the folder of homes: it holds the credential folders above. */
const HOME = /^\/(?:~|home|Users|var\/home)(?:\/[^/]+)?$/;

/** `re` comparing without case when `fold` (the path lies on a case-insensitive host folder, policy/paths.ts). */
function test(re: RegExp, p: string, fold: boolean): boolean {
  return fold && !re.flags.includes("i") ? new RegExp(re.source, `${re.flags}i`).test(p) : re.test(p);
}

/** Why a path names a credential folder or key file wherever it lies (`.ssh`, `.kube`, `id_ed25519`), or undefined. */
export function credentialNameReason(p: string): string | undefined {
  const anywhere = ANYWHERE.exec(p);
  return anywhere === null ? undefined : `it holds a user's credentials (${anywhere[1]})`;
}

/** Why a normalized host path hands over a credential, or undefined; `fold`: its folder compares names without case. */
export function credentialPathReason(p: string, fold = false): string | undefined {
  const home = IN_HOME.exec(p);
  if (home !== null) return `it holds the host user's credentials (${home[1]})`;
  const anywhere = credentialNameReason(p);
  if (anywhere !== undefined) return anywhere;
  const startup = fold ? new RegExp(USER_STARTUP.source, "i").exec(p) : USER_STARTUP.exec(p);
  if (startup !== null)
    return `it holds programs the host user's session starts (${startup[1]}), which run on the host as that user`;
  for (const [re, what] of SOCKETS)
    if (test(re, p, fold)) return `it is ${what}, a credential of the host's user`;
  if (test(HOME, p, fold)) return "the folder holds home folders' credentials (~/.ssh, ~/.aws, ~/.kube, ...)";
  return undefined;
}
