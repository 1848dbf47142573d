/**
 * Host paths that hand over a credential of the host's user: agent sockets (SSH, GPG, the desktop keyring), the
 * display servers (X11, Wayland: keystrokes and the screen), and the folders where command-line tools keep their
 * keys and tokens (SSH, GPG, kubectl, the cloud CLIs, Pulumi, Docker's registry logins, git, npm, PyPI, Vault,
 * GitHub's CLI). A container that sees one acts as that user wherever the credential reaches. Paths are normalized
 * (policy/paths.ts) before they come here; `~` is any user's home.
 */

/**
 * Credential files and folders under a home folder (`~/.ssh`, `/home/<user>/.aws/credentials`), in any case: on a
 * Mac's file system, where Docker Desktop binds `/Users/...`, `~/.SSH` is `~/.ssh`.
 */
const IN_HOME =
  /^\/(?:~|root|home\/[^/]+|Users\/[^/]+|var\/home\/[^/]+)\/(\.ssh|\.gnupg|\.kube|\.aws|\.azure|\.oci|\.pulumi|\.docker\/config\.json|\.config\/(?:gcloud|gh|hub|op|doctl|helm)|\.password-store|\.terraform\.d|\.vault-token|\.netrc|\.git-credentials|\.npmrc|\.pypirc|\.cargo\/credentials(?:\.toml)?|\.m2\/settings\.xml|\.gradle\/gradle\.properties|\.local\/share\/keyrings)(?:\/|$)/i;

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

/** Why a normalized host path hands over a credential, or undefined. */
export function credentialPathReason(p: string): string | undefined {
  const home = IN_HOME.exec(p);
  if (home !== null) return `it holds the host user's credentials (${home[1]})`;
  for (const [re, what] of SOCKETS) if (re.test(p)) return `it is ${what}, a credential of the host's user`;
  if (HOME.test(p)) return "the folder holds home folders' credentials (~/.ssh, ~/.aws, ~/.kube, ...)";
  return undefined;
}
