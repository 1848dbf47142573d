import { secretArgReasons } from "./args";
import { credentialNameReason, isCommandName } from "./names";
import { isOnlyReferences } from "./shapes";
import { secretValueReason } from "./values";

/**
 * A command that prints the credential (`RESTIC_PASSWORD_COMMAND`, `CREDENTIAL_HELPER`): a literal it echoes is the
 * credential, and its command line is judged as one (`sh -c <value>`).
 */
function commandReason(name: string, value: string): string | undefined {
  if (!isCommandName(name)) return undefined;
  const m = /^\s*(?:echo|printf)(?:\s+-[neE]+)*\s+(?:'%s'\s+|"%s"\s+)?(\S.*)$/.exec(value);
  if (m !== null && !isOnlyReferences(m[1] ?? "")) return "its command prints a literal credential";
  const [first] = secretArgReasons(["sh", "-c", value]).values();
  return first === undefined ? undefined : `its command passes a credential: ${first}`;
}

/**
 * Why `NAME=value` puts a credential in a task's environment (the name, confirmed by the value's shape, then the
 * value), or undefined. `value` undefined means the value cannot be seen (passed through from the host, read from
 * a ConfigMap): the name decides alone. A value that is only references is not a literal.
 */
export function secretEnvReason(name: string, value: string | undefined): string | undefined {
  if (value !== undefined && isOnlyReferences(value)) return undefined;
  if (value === undefined) return credentialNameReason(name, value);
  return credentialNameReason(name, value) ?? commandReason(name, value) ?? secretValueReason(value);
}
