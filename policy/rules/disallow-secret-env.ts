import { secretNameReason, secretValueReason } from "../../components/model";
import { REDACTED_SECRET } from "../sources/lenient";
import { isUnknown, type WorkloadView } from "../workload";
import { BROKER_CREDENTIAL_NAME, isBrokerCredential, isBrokerSecretMount } from "./broker-identity";
import { label, unchecked, violation } from "./helpers";
import {
  argFindings,
  envReason,
  fileFindings,
  hookFindings,
  mountFindings,
  visibleValue,
} from "./secret-carriers";
import { injectedReference, injectorFindings } from "./secret-injectors";
import { defineRule, type Edit, type Finding } from "./types";

/** The variable's name for a message, unless the "name" is itself a credential (`envs: ["ghp_..."]`). */
function shownName(name: string, path: string): string {
  return secretValueReason(name) === undefined ? `variable ${name}` : `the entry at ${path}`;
}

/** Segments of a view's display path (`spec.containers[0].env[1]`, `envs[2]`) for an edit. */
function envPathSegments(path: string): (string | number)[] {
  const out: (string | number)[] = [];
  for (const m of path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) {
    if (m[2] !== undefined) out.push(Number(m[2]));
    else if (m[1] !== undefined) out.push(m[1]);
  }
  return out;
}

/**
 * Edits that replace each Pulumi secret in a workload's environment with {@link REDACTED_SECRET}, never the value: a
 * Docker or Engine API `NAME=value` entry becomes `NAME=<marker>`, a Kubernetes `env[i].value` the marker. An
 * `envFrom.secretRef` names a Secret rather than holding a value: it is left as it is, and reported.
 */
function redactionEdits(w: WorkloadView): Edit[] {
  const docker = w.origin.backend !== "kubernetes";
  return w.containers.flatMap((c) =>
    c.env
      .filter((e) => e.tainted && e.from !== "secretRef" && !isBrokerCredential(w, e))
      .map((e): Edit => {
        const segs = envPathSegments(e.path);
        if (docker)
          return {
            op: "set",
            path: segs,
            value: `${typeof e.name === "string" ? e.name : ""}=${REDACTED_SECRET}`,
          };
        return { op: "set", path: [...segs, "value"], value: REDACTED_SECRET };
      }),
  );
}

/**
 * Mission rule: the task's environment carries no credential. Catches Kubernetes `secretKeyRef` and
 * `envFrom.secretRef`, names that say key/token/secret/password/credential (confirmed by the value's shape, see
 * components/model/secrets/names.ts), values shaped like credentials, annotations and labels copied in through the
 * downward API, credentials on the command line, Secret volumes a container mounts, and Pulumi secrets (see
 * policy/pulumi/props.ts for how secretness is read). Messages never print a value.
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
    // Webhooks that inject a secret store's agent or a cloud identity, by the pod's own annotations and labels.
    out.push(...injectorFindings(s));
    for (const c of s.containers) {
      if (c.envUnknown) out.push(unchecked(`the environment of ${label(c)}`, c.path));
      for (const e of c.env) {
        const who = label(c);
        // The secrets broker is the one container a credential may reach, in its credential variables only.
        if (isBrokerCredential(s, e)) continue;
        if (typeof e.name === "string" && BROKER_CREDENTIAL_NAME.test(e.name)) {
          out.push(
            violation(
              `${who} sets ${e.name}, a broker credential variable: only the secrets broker (its image, its own entry point) may hold one (the value is not shown)`,
              e.path,
            ),
          );
          continue;
        }
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
        // Kubernetes only: a webhook sees the pod; nothing resolves such a value in a Docker container.
        if (s.origin.backend === "kubernetes" && e.from === "literal" && typeof e.value === "string") {
          const injected = injectedReference(e.value, s.podAnnotations);
          if (injected !== undefined) {
            out.push(violation(`${who} sets ${what} to a secret reference: ${injected}`, e.path));
            continue;
          }
        }
        if (name !== undefined && allowed.has(name)) continue;
        if (name !== undefined && secretValueReason(name) !== undefined) {
          out.push(violation(`${who} has ${what}, which looks like a credential (not shown)`, e.path));
          continue;
        }
        // The name is confirmed by the value the container really gets (a literal, an annotation's text) and its
        // shape: `PASSWORD_MIN_LENGTH=12` and `POSTGRES_PASSWORD_FILE=/run/secrets/db` are not credentials.
        const value = visibleValue(s, e);
        const byName = name === undefined || !isUnknown(value) ? undefined : secretNameReason(name);
        const reason = isUnknown(value) || isUnknown(e.name) ? byName : envReason(name, value);
        if (reason !== undefined) {
          out.push(violation(`${who} sets ${what}: ${reason} (the value is not shown)`, e.path));
          continue;
        }
        if (isUnknown(value) || isUnknown(e.name)) {
          out.push(unchecked(`${what} of ${who}`, e.path, e.value, e.name));
        }
      }
      // Credentials on the command line and Secret volumes reach the task as surely as its environment.
      for (const a of c.args)
        if (isUnknown(a.value) && !a.tainted)
          out.push(unchecked(`the command line of ${label(c)}`, a.path, a.value));
      out.push(
        ...argFindings(c),
        ...hookFindings(c),
        ...fileFindings(c),
        ...mountFindings(c, (m) => isBrokerSecretMount(s, m)),
      );
    }
    return out;
  },
  // The pack's validation sees a Pulumi secret only as plain text; its remediation sees the mark. So the
  // remediation puts the marker in place of each secret, and the validation that runs next on the result reports it.
  remediate(s) {
    return s.subject === "workload" ? redactionEdits(s) : [];
  },
});
