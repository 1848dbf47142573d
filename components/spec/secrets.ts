/**
 * Recognizers for credentials in a task's environment. They return a reason, never the value, so that callers can
 * build messages that do not leak what they found.
 */

/** Name words that say the variable holds a credential. `PWD` (the working folder) is deliberately absent. */
const SECRET_NAME_WORD =
  /^(?:API|ACCESS|SECRET|PRIVATE|AUTH|SESSION|BEARER|CLIENT|REFRESH|ID|MASTER|SIGNING|ENCRYPTION|SERVICE|DEPLOY)?(?:KEY|KEYS|TOKEN|TOKENS|SECRET|SECRETS|PASSWORD|PASSWORDS|PASSWD|PASSPHRASE|CREDENTIAL|CREDENTIALS|CREDS|APIKEY|PAT)$/;

/** Splits `OPENAI_API_KEY`, `openaiApiKey`, `db.password` and `x-auth-token` into upper-case words. */
function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toUpperCase()
    .split(/[^A-Z0-9]+/)
    .filter((w) => w.length > 0);
}

/** Why an environment variable's name says it holds a secret, or undefined when it does not. */
export function secretNameReason(name: string): string | undefined {
  const word = nameWords(name).find((w) => SECRET_NAME_WORD.test(w));
  return word === undefined ? undefined : `its name contains "${word}", which says it holds a credential`;
}

const VALUE_PATTERNS: readonly (readonly [RegExp, string])[] = [
  [/-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/, "a PEM private key"],
  [/\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|APKA)[0-9A-Z]{16}\b/, "an AWS access key id"],
  [/\bgh[pousr]_[A-Za-z0-9]{36,}\b/, "a GitHub token"],
  [/\bgithub_pat_[A-Za-z0-9_]{22,}\b/, "a GitHub fine-grained token"],
  [/\bglpat-[A-Za-z0-9_-]{20,}\b/, "a GitLab token"],
  [/\bxox[abposr]-[A-Za-z0-9-]{10,}\b/, "a Slack token"],
  [/\bsk-ant-[A-Za-z0-9_-]{20,}/, "an Anthropic API key"],
  [/\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/, "an OpenAI-style API key"],
  [/\bAIza[0-9A-Za-z_-]{35}\b/, "a Google API key"],
  [/\b(?:sk|rk)_(?:live|test)_[0-9a-zA-Z]{16,}\b/, "a Stripe key"],
  [/\bnpm_[A-Za-z0-9]{36}\b/, "an npm token"],
  [/\bhf_[A-Za-z0-9]{30,}\b/, "a Hugging Face token"],
  [/\bpypi-[A-Za-z0-9_-]{50,}/, "a PyPI token"],
  [/\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}/, "a SendGrid key"],
  [/\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/, "a JSON Web Token"],
  [/AccountKey=[A-Za-z0-9+/=]{20,}/, "an Azure storage account key"],
  [/\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:[^\s/@]+@/i, "a URL with a password in it"],
];

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

/** Long runs of key-like characters; hex-only runs (digests, commit ids, UUIDs) are not counted as keys. */
function highEntropyRun(value: string): boolean {
  for (const run of value.match(/[A-Za-z0-9+/=_-]{32,}/g) ?? []) {
    if (/^[0-9a-fA-F-]+$/.test(run)) continue;
    if (!/[0-9]/.test(run) || !/[a-z]/.test(run) || !/[A-Z]/.test(run)) continue;
    if (shannonEntropy(run) >= 4.2) return true;
  }
  return false;
}

/** Why a value looks like a credential (a known token format or a long high-entropy string), or undefined. */
export function secretValueReason(value: string): string | undefined {
  for (const [re, what] of VALUE_PATTERNS) if (re.test(value)) return `its value looks like ${what}`;
  if (highEntropyRun(value)) return "its value contains a long high-entropy string";
  return undefined;
}

/** Why `NAME=value` is a secret in the environment (the name first, then the value), or undefined. */
export function secretEnvReason(name: string, value: string | undefined): string | undefined {
  return secretNameReason(name) ?? (value === undefined ? undefined : secretValueReason(value));
}
