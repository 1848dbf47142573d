/**
 * Recognizers for credentials in a task's environment and command line. They return a reason, never the value, so
 * that callers can build messages that do not leak what they found.
 *
 * - names (`names.ts`): words of the name matched against credential units, confirmed by the value's shape
 *   (`PASSWORD_MIN_LENGTH=12`, `SECRET_NAME=db`, `POSTGRES_PASSWORD_FILE=/run/secrets/db` are not credentials);
 * - values (`values.ts`): issuers' token formats, private keys, Bearer/Basic, URL passwords, credential settings
 *   inside connection strings, all of these base64-encoded, then a long high-entropy string;
 * - a variable (`env.ts`): its name, confirmed by its value, then its value;
 * - command lines (`args.ts`, `commands.ts`): options, positions, piped input and headers that carry a credential;
 * - values that cannot be a credential (`shapes.ts`): flags, numbers, paths and sockets under a name that is about a
 *   credential, public keys, fingerprints, integrity hashes.
 *
 * References (`$(VAR)`, `${VAR}`, `$VAR`) are not literal text: what they resolve to is judged where it is defined.
 */
export { secretArgReasons } from "./args";
export { secretEnvReason } from "./env";
export { secretNameReason } from "./names";
export { shannonEntropy } from "./shapes";
export { knownFormat, secretHeaderReason, secretValueReason } from "./values";
