/** Value shapes the credential recognizers rely on: numbers, flags, paths, references, key-like strings. */

/** Shannon entropy in bits per character. */
export function shannonEntropy(s: string): number {
  if (s.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

/** A count, size or duration: `12`, `1.5`, `30s`, `24h`, `7d`, `64Mi`, `10%`. */
export function isNumberText(v: string): boolean {
  return /^\s*[+-]?\d+(?:\.\d+)?\s*(?:ms|s|m|h|d|w|[kmgtp]i?b?|%)?\s*$/i.test(v);
}

/** A flag as the usual loose readers take it. */
export function isBooleanText(v: string): boolean {
  return /^\s*(?:true|false|yes|no|on|off|y|n|1|0|enabled?|disabled?)\s*$/i.test(v);
}

/**
 * A file-system path (`/run/secrets/db`, `./key.pem`, `~/.pgpass`, `C:\keys\a.pem`), including one that starts with
 * a reference to a folder (`$(SECRETS)/db`, `${HOME}/.netrc`).
 */
export function isPathText(v: string): boolean {
  // A relative path (`secrets/db`) or a file name with a key or config extension (`token.txt`, `tls.key`).
  // A long high-entropy run with slashes is a base64 key (an AWS secret key), not a folder.
  const keyLike = v.trim().length >= 30 && shannonEntropy(v.trim()) >= 4.3;
  if (!keyLike && /^\s*[\w.-]+(?:\/[\w.-]+)+\/?\s*$/.test(v)) return true;
  if (
    /^\s*[\w.-]+\.(?:txt|pem|key|crt|cer|json|p12|pfx|jks|ya?ml|env|cfg|conf|ini|asc|gpg|pub|der|token)\s*$/i.test(
      v,
    )
  )
    return true;
  return /^\s*(?:\/|\.{1,2}[/\\]|~|[A-Za-z]:[\\/]|\$\([A-Za-z_][A-Za-z0-9_]*\)[/\\]|\$\{[^}]+\}[/\\]|\$[A-Za-z_][A-Za-z0-9_]*[/\\])/.test(
    v,
  );
}

/**
 * References that an engine or a shell replaces later: Kubernetes `$(VAR)` (expanded by the kubelet from the
 * container's other variables, `$$(VAR)` stays literal), shell and Compose `${VAR}` / `$VAR`. What they resolve to
 * is judged where it is defined; they are not literal text.
 */
const REFERENCE = /\$\([A-Za-z_][A-Za-z0-9_.-]*\)|\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*/g;

/** The value with its references taken out (each replaced by a space so words stay apart). */
export function withoutReferences(v: string): string {
  return v.replace(REFERENCE, " ");
}

/**
 * True when the value is references joined by punctuation: nothing literal in it. A value with no reference at all
 * is literal, however short (`-` is a password too).
 */
export function isOnlyReferences(v: string): boolean {
  const rest = withoutReferences(v);
  return v.trim() !== "" && rest !== v && /^[\s"'`:=@/;,._-]*$/.test(rest);
}

/**
 * Looks like a key: one word of key characters, 16 or more long, with letters and digits and some variety. Used
 * where the name says "key" but not which kind (`STRIPE_KEY`, `AccountKey=`), so that `SORT_KEY=created_at` is not.
 */
export function isKeyShaped(v: string): boolean {
  const s = v.trim();
  return (
    s.length >= 16 &&
    /^[A-Za-z0-9+/=_.:~-]+$/.test(s) &&
    /[0-9]/.test(s) &&
    /[A-Za-z]/.test(s) &&
    !/^(?:\/|\.{1,2}\/|~)/.test(s) &&
    shannonEntropy(s) >= 3
  );
}

/**
 * An absolute file or socket path with no spaces (`/var/secrets/google/key.json`, `/run/ssh-agent.sock`,
 * `~/.config/gcloud/adc.json`, `C:\\keys\\a.json`), and not a long high-entropy run that happens to start with `/`
 * (base64 can).
 */
export function isAbsolutePathText(v: string): boolean {
  const s = v.trim();
  if (!/^(?:\/|~\/|\.{1,2}\/|[A-Za-z]:[\\/])[\w.@%+~:\\/-]*$/.test(s)) return false;
  return !(s.length >= 30 && shannonEntropy(s) >= 4.3 && !/\/[\w.-]+\//.test(s));
}

/** An OpenSSH public key (`authorized_keys`, `known_hosts` lines: options or host names, then type and base64). */
const SSH_PUBLIC_KEY =
  /(?:ssh-(?:ed25519|rsa|dss)|ecdsa-sha2-nistp(?:256|384|521)|sk-(?:ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com)(?:-cert-v01@openssh\.com)?\s+AAAA[A-Za-z0-9+/]+={0,3}/g;
/** Public texts by format: SSH public keys, fingerprints, Subresource Integrity hashes, PEM public keys and certs. */
const PUBLIC_FORMATS: readonly RegExp[] = [
  SSH_PUBLIC_KEY,
  /\bSHA(?:256|384|512):[A-Za-z0-9+/]{43,86}={0,2}/g,
  /\bMD5(?::[0-9a-fA-F]{2}){16}/g,
  /\b(?:[0-9a-f]{2}:){15}[0-9a-f]{2}\b/gi,
  /\bsha(?:256|384|512)-[A-Za-z0-9+/]{43,86}={0,2}/g,
  /-----BEGIN (?:PUBLIC KEY|RSA PUBLIC KEY|CERTIFICATE|PGP PUBLIC KEY BLOCK|SSH2 PUBLIC KEY)-----[\s\S]*?-----END [A-Z0-9 ]+-----/g,
];

/** The text with public keys, fingerprints and integrity hashes taken out (each replaced by a space). */
export function withoutPublicText(v: string): string {
  let out = v;
  for (const re of PUBLIC_FORMATS) out = out.replace(re, " ");
  return out;
}

/** True when the text holds public keys, fingerprints or integrity hashes and nothing long besides. */
export function isPublicText(v: string): boolean {
  const rest = withoutPublicText(v);
  return rest !== v && !/[A-Za-z0-9+/=_-]{16,}/.test(rest.replace(/\b[\w.-]+@[\w.-]+\b/g, " "));
}

/**
 * Hex only (`0x` and grouping spaces allowed): a key id or fingerprint (`gpg --recv-keys`, `GPG_KEY`), a digest, a
 * commit id. Under a name that only says KEY it names a key, as the entropy guess also reads hex (see values.ts).
 */
export function isKeyIdText(v: string): boolean {
  const s = v.trim().replace(/^0x/i, "").replace(/\s+/g, "");
  return /^[0-9A-Fa-f]{8,}$/.test(s);
}
