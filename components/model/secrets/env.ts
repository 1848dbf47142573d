import { credentialNameReason } from "./names";
import { isOnlyReferences } from "./shapes";
import { secretValueReason } from "./values";

/**
 * Why `NAME=value` puts a credential in a task's environment (the name, confirmed by the value's shape, then the
 * value), or undefined. `value` undefined means the value cannot be seen (passed through from the host, read from
 * a ConfigMap): the name decides alone. A value that is only references is not a literal.
 */
export function secretEnvReason(name: string, value: string | undefined): string | undefined {
  if (value !== undefined && isOnlyReferences(value)) return undefined;
  return credentialNameReason(name, value) ?? (value === undefined ? undefined : secretValueReason(value));
}
