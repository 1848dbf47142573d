/**
 * Recognizers for credentials in a task's environment and command line. They return a reason, never the value, so
 * that callers can build messages that do not leak what they found.
 *
 * - names (`secret-names.ts`): words of the name matched against credential units, confirmed by the value's shape
 *   (`PASSWORD_MIN_LENGTH=12`, `SECRET_NAME=db`, `POSTGRES_PASSWORD_FILE=/run/secrets/db` are not credentials);
 * - values (`secret-values.ts`): issuers' token formats, private keys, Bearer/Basic, URL passwords, credential
 *   settings inside connection strings, all of these base64-encoded, then a long high-entropy string;
 * - command lines (`secret-args.ts`): options and words that carry a credential.
 *
 * References (`$(VAR)`, `${VAR}`, `$VAR`) are not literal text: what they resolve to is judged where it is defined.
 */
import { credentialNameReason } from "./secret-names";
import { isOnlyReferences, withoutReferences } from "./secret-shapes";
import { credentialValue, knownFormat } from "./secret-values";

export { secretArgReasons } from "./secret-args";
export { nameWords } from "./secret-names";
export { shannonEntropy } from "./secret-shapes";

/** Why a variable's name alone says it holds a credential (its value unseen), or undefined. */
export function secretNameReason(name: string): string | undefined {
  return credentialNameReason(name, undefined);
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

/**
 * Why `NAME=value` puts a credential in a task's environment (the name, confirmed by the value's shape, then the
 * value), or undefined. `value` undefined means the value cannot be seen (passed through from the host, read from
 * a ConfigMap): the name decides alone. A value that is only references is not a literal.
 */
export function secretEnvReason(name: string, value: string | undefined): string | undefined {
  if (value !== undefined && isOnlyReferences(value)) return undefined;
  return credentialNameReason(name, value) ?? (value === undefined ? undefined : secretValueReason(value));
}
