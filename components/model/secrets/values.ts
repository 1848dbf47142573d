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
import {
  isKeyShaped,
  isOnlyReferences,
  shannonEntropy,
  withoutPublicText,
  withoutReferences,
} from "./shapes";

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

/** HTTP header names whose value is a credential whatever it is (RFC 9110 credentials). */
const AUTHORIZATION = /^(?:proxy-)?authorization$/i;

/** An Authorization value with literal credentials after its scheme (`Bearer $TOKEN` is a reference). */
function authorizationLiteral(v: string): boolean {
  // The scheme ends at a space, also a percent-encoded one (`Bearer%20x` in W3C Baggage values).
  const cred = v.trim().replace(/^[A-Za-z][A-Za-z0-9-]*(?:\s+|%20)(?=\S)/, "");
  // A scheme with nothing after it (its credentials were a reference) is no credential.
  if (/^(?:bearer|basic|token|digest|negotiate|ntlm|apikey|key)(?:%20)?$/i.test(cred)) return false;
  return cred !== "" && !isOnlyReferences(cred);
}

/**
 * Why a header (`Name: value`, or a setting named like one) carries a credential: `Authorization` and
 * `Proxy-Authorization` always do (any literal value); other names are judged like a variable's (`PRIVATE-TOKEN`,
 * `X-Api-Key`, `X-Vault-Token`), confirmed by the value.
 */
export function secretHeaderReason(name: string, value: string): string | undefined {
  const v = value.trim();
  if (v === "" || isOnlyReferences(v)) return undefined;
  if (AUTHORIZATION.test(name.trim()))
    return authorizationLiteral(v) ? `an "${name.trim()}" header` : undefined;
  return credentialNameReason(name.trim(), v) === undefined ? undefined : `a "${name.trim()}" header`;
}

/**
 * `name=value` pairs inside a value: connection strings (`Server=db;Password=x;`), query strings (`?token=x`),
 * `.npmrc` lines (`//registry.npmjs.org/:_authToken=x`, `_auth=x`), options (`--env=PGPASSWORD=x`,
 * `--from-literal=password=x`), header lists (`Authorization=Bearer x`); JSON members (`"password": "x"`) and YAML or
 * properties lines (`password: x`). The pair's name is judged like a variable's, or as a header's.
 */
function pairReason(v: string): string | undefined {
  const pairs = [
    ...v.matchAll(
      /(?:^|[\s;?&,=]|\/:|-D)([A-Za-z_][A-Za-z0-9_. -]{0,40}?)\s*=\s*("[^"]*"|'[^']*'|[^\s;&,]*)/g,
    ),
    ...v.matchAll(/"([A-Za-z_][A-Za-z0-9_.-]{0,60})"\s*:\s*("(?:[^"\\]|\\.)*"|[^\s,}\]]+)/g),
    ...v.matchAll(
      /(?:^|\n)[ \t]*([A-Za-z_][A-Za-z0-9_.-]{0,60})[ \t]*:[ \t]+("[^"\n]*"|'[^'\n]*'|[^\s#][^\n#]*)/g,
    ),
  ];
  for (const m of pairs) {
    const name = (m[1] ?? "").trim();
    const value = (m[2] ?? "").trim().replace(/^(["'])(.*)\1$/, "$2");
    if (name === "" || value === "" || isOnlyReferences(value)) continue;
    if (credentialNameReason(name, value) !== undefined) return `a "${name}" setting with a credential in it`;
  }
  // An Authorization setting's value runs to the end of its pair, spaces included (`Authorization=Bearer x`).
  for (const m of v.matchAll(
    /(?:^|[\s;?&,"'])((?:proxy-)?authorization)"?\s*[=:]\s*("[^"]*"|[^;&,\n"]*)/gi,
  )) {
    const value = (m[2] ?? "").trim().replace(/^"(.*)"$/, "$1");
    if (authorizationLiteral(value)) return `an "${m[1]}" setting with a credential in it`;
  }
  return undefined;
}

/**
 * Passwords in user information without a URL scheme, as database drivers read a DSN: go-sql-driver/mysql's
 * `user:password@protocol(address)/db` and `user:password@/db`, and `user:password@host[:port][/db]` as the whole
 * value or word. The password ends at the last `@` before the address.
 */
function dsnPasswordReason(v: string): string | undefined {
  for (const m of v.matchAll(
    /(?:^|[\s"'=])([^\s:@/"'=]+):([^\s"']*)@(?:[a-z]+\([^)]*\)\/|\/[\w-]|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*(?::\d+)?(?:\/[\w.-]*)?(?=$|[\s"']))/g,
  )) {
    const password = m[2] ?? "";
    // `scheme://user:password@host` is a URL (urlPasswordReason); an image reference's tag is no password.
    if (password === "" || password.startsWith("//") || isOnlyReferences(password)) continue;
    return "a connection string with a password in it";
  }
  return undefined;
}

/**
 * Credential files' lines: `.netrc` (`machine <host> login <user> password <password>`, or `default ...`) and
 * `.pgpass` (`host:port:database:user:password`).
 */
function credentialFileReason(v: string): string | undefined {
  const netrc = /\b(?:machine\s+\S+|default)\b[^\n]*?\bpassword\s+(\S+)/g;
  for (const m of v.matchAll(netrc)) if (!isOnlyReferences(m[1] ?? "")) return "a .netrc password";
  for (const line of v.split(/\n|\\n/)) {
    const m = /^\s*[^:\s#]+:(?:\d+|\*):[^:\s]+:[^:\s]+:(\S+)\s*$/.exec(line);
    if (m !== null && !isOnlyReferences(m[1] ?? "")) return "a .pgpass password";
  }
  return undefined;
}

/** The text with `%XX` escapes decoded (W3C Baggage and URL values, `Bearer%20x`), or undefined when it has none. */
function percentDecoded(v: string): string | undefined {
  if (!/%[0-9A-Fa-f]{2}/.test(v)) return undefined;
  return v.replace(/%([0-9A-Fa-f]{2})/g, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
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

/** Known formats in the text as written, without looking inside encodings and without the entropy guess. */
function plainFormatReason(v: string): string | undefined {
  for (const [re, what] of FORMATS) if (re.test(v)) return what;
  return (
    authorizationReason(v) ??
    urlPasswordReason(v) ??
    dsnPasswordReason(v) ??
    pairReason(v) ??
    credentialFileReason(v)
  );
}

/** Known formats, also percent-encoded; not inside base64 and without the entropy guess. */
function formatReason(v: string): string | undefined {
  const decoded = percentDecoded(v);
  return plainFormatReason(v) ?? (decoded === undefined ? undefined : plainFormatReason(decoded));
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

/** Known formats, then a long high-entropy string that is not a public key, fingerprint or integrity hash. */
export function credentialValue(v: string): { what: string; guessed: boolean } | undefined {
  const what = knownFormat(v);
  if (what !== undefined) return { what, guessed: false };
  return highEntropyRun(withoutPublicText(v))
    ? { what: "a long high-entropy string", guessed: true }
    : undefined;
}

/** Answers of secretValueReason, a pure function of its text: manifests repeat their values. Bounded. */
const reasons = new Map<string, string | undefined>();
const MAX_REMEMBERED = 4096;
const LONGEST_REMEMBERED = 1024;

/** Why a value looks like a credential (a known format or a long high-entropy string), or undefined. */
export function secretValueReason(value: string): string | undefined {
  if (reasons.has(value)) return reasons.get(value);
  const reason = valueReason(value);
  if (value.length <= LONGEST_REMEMBERED) {
    if (reasons.size >= MAX_REMEMBERED) reasons.clear();
    reasons.set(value, reason);
  }
  return reason;
}

function valueReason(value: string): string | undefined {
  if (isOnlyReferences(value)) return undefined;
  const what = knownFormat(value);
  if (what !== undefined) return `its value looks like ${what}`;
  // Entropy is measured on the literal text only: `${A_LONG_VARIABLE_NAME_2}` is not a key. The known formats of
  // that text were looked for above when it is the value itself.
  const literal = withoutReferences(value);
  const guess =
    literal === value
      ? highEntropyRun(withoutPublicText(value))
        ? { what: "a long high-entropy string" }
        : undefined
      : credentialValue(literal);
  return guess === undefined ? undefined : `its value contains ${guess.what}`;
}
