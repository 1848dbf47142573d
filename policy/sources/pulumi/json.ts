/**
 * Pulumi JSON values as the rules read them: the engine's unknown value and Pulumi secrets in `pulumi preview --json`
 * and `pulumi stack export` documents.
 */

import { UNKNOWN, Unreadable } from "../../workload";
import { REDACTED_SECRET, SECRET_REASON } from "../lenient";
import { isEnvSecretPath } from "../secrets";

/** The engine's unknown value on the wire (plugin.UnknownStringValue), as `pulumi preview --json` prints it. */
const PULUMI_UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
/** The key that marks a Pulumi secret object (`{ "4dabf...": "1b47...", "ciphertext" | "plaintext": ... }`). */
const SECRET_SIG = "4dabf18193072939515e22adb298388d";

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function childPath(base: string, key: string | number): string {
  if (typeof key === "number") return `${base}[${key}]`;
  return base === "" ? key : `${base}.${key}`;
}

/**
 * A secret in a task's environment as the pack's secret-env remediation leaves it at preview
 * (policy/rules/disallow-secret-env.ts): a Docker `NAME=value` entry becomes `NAME=<marker>`, a Kubernetes
 * `env[i].value` the marker.
 * A secret anywhere else is sealed as unreadable (policy/sources/secrets.ts), as the pack seals it.
 */
function redactSecret(path: string, plain: unknown): unknown {
  if (!isEnvSecretPath(path)) return new Unreadable(SECRET_REASON);
  // A whole list: its entries as what they are, each a secret the document does not show.
  if (/(?:^|\.)(?:envs|Env|env)$/.test(path))
    return Array.isArray(plain) ? plain.map((e, i) => redactSecret(`${path}[${i}]`, e)) : [REDACTED_SECRET];
  if (/^(?:envs|Env)\[\d+\]$/.test(path)) {
    const m = typeof plain === "string" ? /^([^=]+)=/.exec(plain) : null;
    return m === null || plain === REDACTED_SECRET ? REDACTED_SECRET : `${m[1]}=${REDACTED_SECRET}`;
  }
  return REDACTED_SECRET;
}

/**
 * A Pulumi JSON value as the adapters read it: the engine's unknown as UNKNOWN; a secret (`{4dabf...: ...}` in a
 * state, `"[secret]"` in a preview) redacted in a task's environment and sealed as unreadable elsewhere, with its
 * path recorded so the rules see it as a Pulumi secret (what the pack does at preview).
 */
export function pulumiValue(v: unknown, path: string, secretPaths: string[]): unknown {
  if (v === PULUMI_UNKNOWN) return UNKNOWN;
  if (v === "[secret]") {
    secretPaths.push(path);
    return redactSecret(path, REDACTED_SECRET);
  }
  if (Array.isArray(v)) return v.map((x, i) => pulumiValue(x, childPath(path, i), secretPaths));
  if (isObj(v)) {
    if (SECRET_SIG in v) {
      secretPaths.push(path);
      let plain: unknown = REDACTED_SECRET;
      if (typeof v.plaintext === "string") {
        try {
          plain = pulumiValue(JSON.parse(v.plaintext), path, []);
        } catch {
          plain = v.plaintext;
        }
      } else if ("value" in v) plain = pulumiValue(v.value, path, []);
      return redactSecret(path, plain);
    }
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = pulumiValue(x, childPath(path, k), secretPaths);
    return out;
  }
  return v;
}
