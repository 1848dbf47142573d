/**
 * Credential names. A name is split into words (snake, kebab, dotted, camel: `OPENAI_API_KEY`, `openaiApiKey`,
 * `db.password`, `x-auth-token`, `_authToken`), the words are matched against credential units (`password`, `pwd`,
 * `secret`, `token`, `api key`, `private key`, `auth`, `credentials`, ...) and the words after the unit say whether
 * the variable holds the credential itself or something about it (`PASSWORD_MIN_LENGTH`, `SECRET_NAME`,
 * `POSTGRES_PASSWORD_FILE`, `MAX_TOKENS`). Those readings are then confirmed by the value's shape: a length must be a
 * number, a file a path; otherwise the name still says credential.
 */

import { COOKIE_QUALIFIERS, ENGLISH_PASS, GLUED_SUFFIXES, GLUED_WORDS } from "./glued-names";
import {
  isAbsolutePathText,
  isBooleanText,
  isKeyIdText,
  isKeyShaped,
  isNumberText,
  isPathText,
  isPublicText,
} from "./shapes";

/** Words that are a credential by themselves. `PWD` alone is the shell's working folder and is handled apart. */
const STRONG_WORDS = new Set([
  "PASSWORD",
  "PASSWORDS",
  "PASSWD",
  "PASS",
  "PASSPHRASE",
  "PASSCODE",
  "SECRET",
  "SECRETS",
  "TOKEN",
  "TOKENS",
  "CREDENTIAL",
  "CREDENTIALS",
  "CREDS",
  "APIKEY",
  "APIKEYS",
  "PAT",
  "AUTH",
]);

/** Words before KEY that make it a secret key (`API_KEY`, `SIGNING_KEY`); other KEYs are judged by their value. */
const KEY_QUALIFIERS = new Set([
  "API",
  "ACCESS",
  "SECRET",
  "PRIVATE",
  "SIGNING",
  "ENCRYPTION",
  "DECRYPTION",
  "MASTER",
  "ACCOUNT",
  "CLIENT",
  "AUTH",
  "SESSION",
  "DEPLOY",
  "SSH",
  "GPG",
  "PGP",
  "RSA",
  "HMAC",
  "JWT",
  "SHARED",
  "ADMIN",
  "STORAGE",
  "SUBSCRIPTION",
  "WEBHOOK",
  "CIPHER",
  "AES",
  "TLS",
  "SSL",
  "LICENSE",
]);

/** Words before KEY that say the key is public: never a secret by name. */
const PUBLIC_KEY_WORDS = new Set(["PUBLIC", "PUBLISHABLE", "PUB"]);

/** What a word after the unit says the variable holds instead of the credential. */
type Role = "count" | "flag" | "reference" | "path" | "command";

const ROLE_WORDS: Readonly<Record<Role, readonly string[]>> = {
  count: [
    "MIN",
    "MAX",
    "MINIMUM",
    "MAXIMUM",
    "LENGTH",
    "LEN",
    "SIZE",
    "LIMIT",
    "LIMITS",
    "COUNT",
    "NUM",
    "NUMBER",
    "TOTAL",
    "TTL",
    "TIMEOUT",
    "EXPIRY",
    "EXPIRES",
    "EXPIRE",
    "EXPIRATION",
    "LIFETIME",
    "AGE",
    "DURATION",
    "INTERVAL",
    "ROUNDS",
    "ITERATIONS",
    "COST",
    "BITS",
    "BUDGET",
    "RATE",
    "WINDOW",
    "DAYS",
    "HOURS",
    "MINUTES",
    "SECONDS",
    "RETRIES",
    "ATTEMPTS",
    "HISTORY",
    "THRESHOLD",
  ],
  flag: [
    "ENABLED",
    "ENABLE",
    "DISABLED",
    "DISABLE",
    "REQUIRED",
    "REQUIRE",
    "ALLOW",
    "ALLOWED",
    "EMPTY",
    "RANDOM",
    "GENERATE",
    "SKIP",
    "USE",
    "NO",
    "ONETIME",
    "STDIN",
    "PROMPT",
    "ASK",
  ],
  reference: [
    "NAME",
    "NAMES",
    "REF",
    "REFS",
    "ID",
    "IDS",
    "ARN",
    "FIELD",
    "PARAM",
    "HEADER",
    "VAR",
    "VARIABLE",
    "ENV",
    "TYPE",
    "KIND",
    "MODE",
    "METHOD",
    "METHODS",
    "ALGORITHM",
    "ALG",
    "ALGO",
    "PROVIDER",
    "FORMAT",
    "VERSION",
    "PREFIX",
    "SUFFIX",
    "SCOPE",
    "SCOPES",
    "ISSUER",
    "AUDIENCE",
    "URL",
    "URI",
    "URLS",
    "ENDPOINT",
    "HOST",
    "HOSTNAME",
    "PORT",
    "DOMAIN",
    "SERVER",
    "STRATEGY",
    "POLICY",
    "STORE",
    "BACKEND",
    "SOURCE",
    "LABEL",
    "CLAIM",
    "REALM",
  ],
  path: [
    "FILE",
    "FILES",
    "PATH",
    "DIR",
    "DIRECTORY",
    "FOLDER",
    "FILENAME",
    "LOCATION",
    "MOUNT",
    "SOCK",
    "SOCKET",
  ],
  // A program that prints the credential (`RESTIC_PASSWORD_COMMAND`, git's `credential.helper`): its command line
  // is judged as one (see env.ts).
  command: ["COMMAND", "CMD", "HELPER", "PROGRAM", "EXEC", "SCRIPT"],
};

const ROLE_OF = new Map<string, Role>(
  (Object.entries(ROLE_WORDS) as [Role, readonly string[]][]).flatMap(([role, words]) =>
    words.map((w): [string, Role] => [w, role]),
  ),
);

/** Splits `OPENAI_API_KEY`, `openaiApiKey`, `APIKey`, `db.password` and `x-auth-token` into upper-case words. */
function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2")
    .toUpperCase()
    .split(/[^A-Z0-9]+/)
    .filter((w) => w.length > 0);
}

/** The credential words of a name (`["AUTH", "TOKEN"]` for `x-auth-token`), for callers that weigh them. */
export function credentialWords(name: string): string[] {
  const words = nameWords(name);
  return unitsOf(words).map((u) => u.word);
}

/** True when the name is a switch that takes no value (`--password-stdin`, `--no-auth`, `--ask-password`). */
export function isSwitchName(name: string): boolean {
  const words = nameWords(name);
  return unitsOf(words).length > 0 && roleOf(words, unitsOf(words)) === "flag";
}

/** True when the name says it holds a command that prints the credential (`RESTIC_PASSWORD_COMMAND`). */
export function isCommandName(name: string): boolean {
  const words = nameWords(name);
  return roleOf(words, unitsOf(words)) === "command";
}

/** A credential unit found in a name: the word shown in messages, how sure the name is, where it ends. */
interface Unit {
  readonly word: string;
  readonly strong: boolean;
  readonly end: number;
}

function unitAt(words: readonly string[], i: number): Unit | undefined {
  const w = words[i] ?? "";
  const prev = words[i - 1];
  if (w === "KEY" || w === "KEYS") {
    if (prev !== undefined && PUBLIC_KEY_WORDS.has(prev)) return undefined;
    return { word: w, strong: prev !== undefined && KEY_QUALIFIERS.has(prev), end: i };
  }
  if (w === "COOKIE") return { word: w, strong: prev !== undefined && COOKIE_QUALIFIERS.has(prev), end: i };
  if (STRONG_WORDS.has(w)) return { word: w, strong: true, end: i };
  // `MYSQL_PWD`, `LDAP_BIND_PW` are passwords; a lone `PWD` (or `OLDPWD`) is the shell's working folder.
  if ((w === "PWD" || w === "PW") && words.length > 1) return { word: w, strong: true, end: i };
  if (GLUED_WORDS.has(w)) return { word: w, strong: true, end: i };
  const glued = GLUED_SUFFIXES.find((s) => w.length > s.length && w.endsWith(s));
  if (glued !== undefined && !(glued === "PASS" && ENGLISH_PASS.test(w)))
    return { word: w, strong: true, end: i };
  // `NPMTOKEN`, `GHTOKEN`; but `MAXTOKENS` is a count.
  const token = /^(.+?)TOKENS?$/.exec(w);
  if (token !== null && ROLE_OF.get(token[1] ?? "") === undefined) return { word: w, strong: true, end: i };
  return undefined;
}

function unitsOf(words: readonly string[]): Unit[] {
  const out: Unit[] = [];
  for (let i = 0; i < words.length; i++) {
    const u = unitAt(words, i);
    if (u !== undefined) out.push(u);
  }
  return out;
}

/**
 * What the name says the variable holds: `credential` (a strong unit, or a KEY whose value is key-shaped), a role
 * that a value of the right shape confirms, or nothing.
 */
function roleOf(words: readonly string[], units: readonly Unit[]): Role | undefined {
  const last = units.at(-1);
  if (last === undefined) return undefined;
  const tail = words.slice(last.end + 1);
  const final = tail.at(-1);
  if (final !== undefined) return ROLE_OF.get(final);
  // Nothing after the unit: `MAX_TOKENS`, `ALLOW_EMPTY_PASSWORD` say what they are before it.
  for (const w of words.slice(0, last.end)) {
    const role = ROLE_OF.get(w);
    if (role === "count" || role === "flag") return role;
  }
  return undefined;
}

/** True when a value of this shape is what the role says (a number for a length, a path for a file...). */
function confirms(role: Role, value: string | undefined): boolean {
  // A value the rules cannot see (passed from the host, read from a ConfigMap): the name's role stands, except for
  // a path or reference, which could be anything.
  if (value === undefined) return role === "count" || role === "flag";
  switch (role) {
    case "count":
      return isNumberText(value);
    case "flag":
      return isBooleanText(value);
    case "path":
      return isPathText(value);
    case "reference":
    case "command":
      return true;
  }
}

/**
 * Words after the unit that no role table knows (`PASSWORD_AUTHENTICATION`, `auth.login.config`,
 * `TOKEN_REFRESH_SKEW`): the name is about the credential, not necessarily the credential, so a value that cannot be
 * one (a flag, a number, a path) says it is not.
 */
function aboutTheUnit(words: readonly string[], units: readonly Unit[], value: string | undefined): boolean {
  const last = units.at(-1);
  if (last === undefined || value === undefined || last.end === words.length - 1) return false;
  return isBooleanText(value) || isNumberText(value) || isPathText(value);
}

/**
 * Why `name` (holding `value`; `undefined` when the value is not visible, such as a variable passed through from
 * the host or read from a ConfigMap) says the variable holds a credential, or undefined. Values that are empty say
 * nothing; the value's own format is judged elsewhere.
 */
export function credentialNameReason(name: string, value: string | undefined): string | undefined {
  const words = nameWords(name);
  const units = unitsOf(words);
  const first = units[0];
  if (first === undefined) return undefined;
  if (value !== undefined && value.trim() === "") return undefined;
  const role = roleOf(words, units);
  if (role !== undefined && confirms(role, value)) return undefined;
  if (aboutTheUnit(words, units, value)) return undefined;
  if (value !== undefined) {
    // Plural TOKENS holding a number is a count of model tokens (`CONTEXT_TOKENS=8192`, `TOKENS_PER_MINUTE=90000`).
    if (units.some((u) => /TOKENS$/.test(u.word)) && isNumberText(value)) return undefined;
    // A file or socket path is where a credential is, not the credential (`GOOGLE_APPLICATION_CREDENTIALS=/var/x.json`).
    if (isAbsolutePathText(value)) return undefined;
    // Public by format: a public key, a fingerprint, an integrity hash (`SSH_KEY_FINGERPRINT=SHA256:...`).
    if (isPublicText(value)) return undefined;
  }
  const strong = units.some((u) => u.strong);
  // A bare KEY (`STRIPE_KEY`, `SORT_KEY`) is a credential only when its value looks like one, or cannot be seen; a
  // key id in hex (`--recv-keys ABCDEF0123456789`) names a public key.
  if (!strong && value !== undefined && (!isKeyShaped(value) || isKeyIdText(value))) return undefined;
  const shown = units.find((u) => u.strong) ?? first;
  return `its name contains "${shown.word}", which says it holds a credential`;
}

/** Why a variable's name alone says it holds a credential (its value unseen), or undefined. */
export function secretNameReason(name: string): string | undefined {
  return credentialNameReason(name, undefined);
}
