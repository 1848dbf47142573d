import { secretNameReason, secretValueReason } from "../../components/spec/secrets";
import { isUnknown } from "../workload";
import { label, unchecked, violation } from "./helpers";
import { defineRule, type Finding } from "./types";

/** The variable's name for a message, unless the "name" is itself a credential (`envs: ["ghp_..."]`). */
function shownName(name: string, path: string): string {
  return secretValueReason(name) === undefined ? `variable ${name}` : `the entry at ${path}`;
}

/**
 * Mission rule: the task's environment carries no credential. Catches Kubernetes `secretKeyRef` and
 * `envFrom.secretRef`, names that say key/token/secret/password/credential, values shaped like credentials, and
 * Pulumi secrets (see policy/pulumi/props.ts for how secretness is read). Messages never print a value.
 */
export const disallowSecretEnv = defineRule({
  id: "sandbox-disallow-secret-env",
  description:
    "No secret reaches a task's environment: no Secret references, no credential names or values, no Pulumi secrets.",
  mission: true,
  // "remediate" makes CrossGuard hand the rule the resource with Pulumi secrets still marked (validation alone only
  // sees plaintext); any violation left afterwards is reported as mandatory. See README "Secret taint".
  enforcementLevel: "remediate",
  severity: "critical",
  crosswalk: {
    cis: ["4.10"],
    kyverno: ["disallow-secrets-from-env-vars"],
    checkov: ["CKV_K8S_35"],
    kubeLinter: ["env-var-secret", "read-secret-from-env-var"],
    kubesec: ["SecretsAsEnvironmentVariables"],
  },
  subjects: ["workload"],
  configSchema: {
    properties: {
      allowedNames: {
        type: "array",
        items: { type: "string" },
        description:
          "Variable names that are known not to hold credentials although their name says so (e.g. PUBLIC_KEY_URL).",
        default: [],
      },
    },
  },
  defaults: { allowedNames: [] as string[] },
  remediationSteps:
    "Take the credential out of the task. Give the task a broker or proxy that adds the credential outside the sandbox; never put it in env.",
  check(s, config) {
    if (s.subject !== "workload") return [];
    const out: Finding[] = [];
    const allowed = new Set(config.allowedNames);
    for (const c of s.containers) {
      if (c.envUnknown) out.push(unchecked(`the environment of ${label(c)}`, c.path));
      for (const e of c.env) {
        const who = label(c);
        if (e.from === "secretRef") {
          const ref = typeof e.ref === "string" ? ` "${e.ref}"` : "";
          out.push(
            violation(
              `${who} loads every key of Secret${ref} into its environment (envFrom.secretRef)`,
              e.path,
            ),
          );
          continue;
        }
        const name = typeof e.name === "string" ? e.name : undefined;
        const what = name === undefined ? `the entry at ${e.path}` : shownName(name, e.path);
        if (e.tainted) {
          out.push(violation(`${who} gets ${what} from a Pulumi secret (the value is not shown)`, e.path));
          continue;
        }
        if (e.from === "secretKeyRef") {
          const ref = typeof e.ref === "string" ? ` "${e.ref}"` : "";
          out.push(violation(`${who} reads ${what} from Secret${ref} (secretKeyRef)`, e.path));
          continue;
        }
        if (name !== undefined && allowed.has(name)) continue;
        if (name !== undefined && secretValueReason(name) !== undefined) {
          out.push(violation(`${who} has ${what}, which looks like a credential (not shown)`, e.path));
          continue;
        }
        const byName = name === undefined ? undefined : secretNameReason(name);
        if (byName !== undefined) {
          out.push(violation(`${who} sets ${what}: ${byName} (the value is not shown)`, e.path));
          continue;
        }
        if (typeof e.value === "string") {
          const byValue = secretValueReason(e.value);
          if (byValue !== undefined)
            out.push(violation(`${who} sets ${what}: ${byValue} (the value is not shown)`, e.path));
        } else if (isUnknown(e.value) || isUnknown(e.name)) {
          out.push(unchecked(`${what} of ${who}`, e.path, e.value, e.name));
        }
      }
    }
    return out;
  },
});
