/**
 * Credential values, by format. Each recognizer answers with what it found ("a GitHub token"), never the value.
 * Formats from the issuers' documentation: AWS key ids (AKIA/ASIA... + 16 base32 characters), GitHub (`ghp_`,
 * `gho_`, `ghu_`, `ghs_`, `ghr_` + 36, `github_pat_`), GitLab (`glpat-` and the other `gl*-` prefixes), Slack
 * (`xox?-`, `xapp-`, webhook URLs), Stripe (`sk_`/`rk_` live and test, `whsec_`), npm (`npm_` + 36), PyPI
 * (`pypi-` macaroons), OpenAI (`sk-`, `sk-proj-`, `sk-svcacct-`, `sk-admin-`), Anthropic (`sk-ant-`), Hugging Face
 * (`hf_`), Google (`AIza` + 35, service-account JSON), Azure (`AccountKey=`, `SharedAccessKey=`, SAS `sig=`, client
 * secrets with `Q~`), PEM and PuTTY private keys, JWTs, Bearer and Basic credentials, passwords in URLs, and
 * `name=value` pairs inside connection strings and `.npmrc` lines whose name is a credential.
 */
import { credentialNameReason } from "./names";
import { isKeyShaped, isOnlyReferences, shannonEntropy, withoutReferences } from "./shapes";

const FORMATS: readonly (readonly [RegExp, string])[] = [
  [/-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/i, "a PEM private key"],
  [/PuTTY-User-Key-File-\d+:/, "a PuTTY private key"],
  [/\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|APKA)[0-9A-Z]{16}\b/, "an AWS access key id"],
  [/\bgh[pousr]_[A-Za-z0-9]{36,}\b/, "a GitHub token"],
  [/\bgithub_pat_[A-Za-z0-9_]{22,}\b/, "a GitHub fine-grained token"],
  [/\bgl(?:pat|dt|rt|ptt|cbt|oas|soat|ft|imt|agent|wt|ffct)-[A-Za-z0-9_.-]{20,}/, "a GitLab token"],
  [/\bGR1348941[A-Za-z0-9_-]{20,}/, "a GitLab runner registration token"],
  [/\bxox[abposre]-[A-Za-z0-9-]{10,}/, "a Slack token"],
  [/\bxapp-\d-[A-Za-z0-9-]{10,}/, "a Slack token"],
  [/hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9/_-]{20,}/, "a Slack webhook URL"],
  [/\bsk-ant-[A-Za-z0-9_-]{20,}/, "an Anthropic API key"],
  [/\bsk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}/, "an OpenAI-style API key"],
  [/\bsk-[A-Za-z0-9]{32,}\b/, "an OpenAI-style API key"],
  [/\bAIza[0-9A-Za-z_-]{35}\b/, "a Google API key"],
  [/"type"\s*:\s*"service_account"/, "a Google service account key"],
  [/"private_key"\s*:\s*"[^"]{16,}/, "a private key in JSON"],
  [/\b(?:sk|rk)_(?:live|test)_[0-9a-zA-Z]{16,}\b/, "a Stripe key"],
  [/\bwhsec_[0-9a-zA-Z+/]{24,}/, "a webhook signing secret"],
  [/\bnpm_[A-Za-z0-9]{36}\b/, "an npm token"],
  [/\bhf_[A-Za-z0-9]{30,}\b/, "a Hugging Face token"],
  [/\bpypi-[A-Za-z0-9_-]{50,}/, "a PyPI token"],
  [/\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}/, "a SendGrid key"],
  [/\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/, "a JSON Web Token"],
  [/AccountKey\s*=\s*[A-Za-z0-9+/]{20,}={0,2}/i, "an Azure storage account key"],
  [/SharedAccessKey\s*=\s*[A-Za-z0-9+/]{20,}={0,2}/i, "an Azure shared access key"],
  [/[?&]sig=[A-Za-z0-9%+/=]{20,}/, "an Azure shared access signature"],
  [/\b[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}\b/, "an Azure client secret"],
];

/** Bearer/Basic/token credentials as an HTTP `Authorization` value writes them. */
function authorizationReason(v: string): string | undefined {
  for (const m of v.matchAll(/\b(Bearer|Token|Basic|Digest)\s+([^\s"',;]+)/gi)) {
    const cred = m[2] ?? "";
    if (isOnlyReferences(cred) || cred.length < 6) continue;
    const scheme = (m[1] ?? "").toLowerCase();
    if (scheme === "basic") {
      if (decodedText(cred)?.includes(":")) return "a Basic credential";
      continue;
    }
    // `Token` and `Bearer` are also English words: a credential after them has digits or is key-like.
    if (scheme === "token" && !isKeyShaped(cred)) continue;
    if (!/[0-9]/.test(cred) && cred.length < 20) continue;
    return `a ${scheme === "bearer" ? "Bearer" : scheme === "digest" ? "Digest" : "token"} credential`;
  }
  return undefined;
}

/**
 * A password in a URL's user information: `scheme://user:password@host`, `redis://:password@host`. The authority
 * ends at the first `/`, `?` or `#`, and the last `@` in it ends the user information (WHATWG URL).
 */
function urlPasswordReason(v: string): string | undefined {
  for (const m of v.matchAll(/\b[a-z][a-z0-9+.-]*:\/\/([^\s/?#]*)@/gi)) {
    const info = m[1] ?? "";
    const colon = info.indexOf(":");
    if (colon < 0) continue;
    const password = info.slice(colon + 1);
    if (password === "" || isOnlyReferences(password)) continue;
    return "a URL with a password in it";
  }
  return undefined;
}

/**
 * `name=value` pairs inside a value: connection strings (`Server=db;Password=x;`), query strings (`?token=x`),
 * `.npmrc` lines (`//registry.npmjs.org/:_authToken=x`, `_auth=x`). The pair's name is judged like a variable's.
 */
function pairReason(v: string): string | undefined {
  for (const m of v.matchAll(
    /(?:^|[\s;?&,]|\/:|-D)([A-Za-z_][A-Za-z0-9_. -]{0,40}?)\s*=\s*("[^"]*"|'[^']*'|[^\s;&,]*)/g,
  )) {
    const name = (m[1] ?? "").trim();
    const value = (m[2] ?? "").replace(/^(["'])(.*)\1$/, "$2");
    if (name === "" || value === "" || isOnlyReferences(value)) continue;
    if (credentialNameReason(name, value) !== undefined) return `a "${name}" setting with a credential in it`;
  }
  return undefined;
}

/** The text a base64 run stands for, when it is mostly printable text; undefined otherwise. */
function decodedText(run: string): string | undefined {
  if (run.length < 12) return undefined;
  const bytes = Buffer.from(run, "base64");
  if (bytes.length === 0) return undefined;
  let printable = 0;
  for (const b of bytes) if ((b >= 0x20 && b < 0x7f) || b === 0x0a || b === 0x0d || b === 0x09) printable++;
  return printable / bytes.length >= 0.95 ? bytes.toString("latin1") : undefined;
}

/** Known formats, without looking inside base64 and without the entropy guess. */
function formatReason(v: string): string | undefined {
  for (const [re, what] of FORMATS) if (re.test(v)) return what;
  return authorizationReason(v) ?? urlPasswordReason(v) ?? pairReason(v);
}

/**
 * Base64 of a credential (a base64 PEM for `TLS_KEY`, a `.dockerconfigjson`, a service-account JSON, `user:pass`):
 * one level deep, by the known formats.
 */
function base64Reason(v: string): string | undefined {
  for (const run of v.match(/[A-Za-z0-9+/_-]{16,}={0,2}/g) ?? []) {
    const text = decodedText(run);
    if (text === undefined) continue;
    const what = formatReason(text);
    if (what !== undefined) return `${what}, base64-encoded`;
  }
  return undefined;
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

/** What credential format the text holds (known formats, also base64-encoded), or undefined. No guessing. */
export function knownFormat(v: string): string | undefined {
  return formatReason(v) ?? base64Reason(v);
}

/** Known formats, then a long high-entropy string. */
export function credentialValue(v: string): { what: string; guessed: boolean } | undefined {
  const what = knownFormat(v);
  if (what !== undefined) return { what, guessed: false };
  return highEntropyRun(v) ? { what: "a long high-entropy string", guessed: true } : undefined;
}

/** Why a value looks like a credential (a known format or a long high-entropy string), or undefined. */
export function secretValueReason(value: string): string | undefined {
  if (isOnlyReferences(value)) return undefined;
  const what = knownFormat(value);
  if (what !== undefined) return `its value looks like ${what}`;
  // Entropy is measured on the literal text only: `${A_LONG_VARIABLE_NAME_2}` is not a key.
  const guess = credentialValue(withoutReferences(value));
  return guess === undefined ? undefined : `its value contains ${guess.what}`;
}
