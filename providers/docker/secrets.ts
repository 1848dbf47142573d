/**
 * Pulumi secrets in a provider's properties. The engine hands a provider that accepts secrets each secret value
 * wrapped (`{ <sig>: <secret sig>, value }`, the wire form of a secret); the Engine API takes plain values. The
 * provider unwraps what it sends to the engine and wraps again, on the way back, every top-level output whose input
 * was a secret, so the state keeps holding it encrypted.
 */
import type { Props } from "./kind";

/** The key and value that mark a wrapped secret (the SDK's `specialSigKey` and `specialSecretSig`). */
const SIG_KEY = "4dabf18193072939515e22adb298388d";
const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";

function isWrapped(v: unknown): v is { value: unknown } {
  return typeof v === "object" && v !== null && (v as Record<string, unknown>)[SIG_KEY] === SECRET_SIG;
}

/** True when `v` holds a wrapped secret anywhere inside. */
export function holdsSecret(v: unknown, depth = 0): boolean {
  if (depth > 64) return false;
  if (isWrapped(v)) return true;
  if (Array.isArray(v)) return v.some((x) => holdsSecret(x, depth + 1));
  if (typeof v === "object" && v !== null) return Object.values(v).some((x) => holdsSecret(x, depth + 1));
  return false;
}

/** `v` with every wrapped secret replaced by its plain value. */
export function unwrapSecrets<T>(v: T, depth = 0): T {
  if (depth > 64) return v;
  if (isWrapped(v)) return unwrapSecrets(v.value as T, depth + 1);
  if (Array.isArray(v)) return v.map((x) => unwrapSecrets(x, depth + 1)) as T;
  if (typeof v === "object" && v !== null) {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, unwrapSecrets(x, depth + 1)])) as T;
  }
  return v;
}

/** A secret's wire form around `value`. */
export function wrapSecret(value: unknown): unknown {
  return { [SIG_KEY]: SECRET_SIG, value };
}

/** The top-level keys of `inputs` that hold a secret. */
export function secretKeys(inputs: Props): string[] {
  return Object.keys(inputs).filter((k) => holdsSecret(inputs[k]));
}

/** `outs` with each of `keys` wrapped as a secret (those present). */
export function rewrapSecrets(outs: Props, keys: readonly string[]): Props {
  const out: Props = { ...outs };
  for (const k of keys) if (out[k] !== undefined && !isWrapped(out[k])) out[k] = wrapSecret(out[k]);
  return out;
}
