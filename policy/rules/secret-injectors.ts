/**
 * Credentials that admission webhooks put into a pod after every rule judged it, driven by the pod's own annotations
 * and labels or by references written as environment values, and cloud identities a ServiceAccount carries. Each
 * entry names the project whose source gives the annotation and how its value is read:
 *
 * - HashiCorp Vault Agent Injector (hashicorp/vault-k8s `agent-inject/agent/annotations.go`,
 *   `vault.hashicorp.com/agent-inject`, read with Go's strconv.ParseBool); OpenBao's fork (openbao/openbao-k8s,
 *   `openbao.openbao.org/agent-inject`); Heist (youniqx/heist, `heist.youniqx.com/inject-agent`);
 * - Bank-Vaults (bank-vaults/vault-secrets-webhook): `vault:`, `>>vault:` and inline `${vault:...}` environment
 *   values, resolved by the injected `vault-env`; `vault-env-from-path` (every key of a path into the environment),
 *   `vault-agent`; `vault.security.banzaicloud.io/mutate: skip` turns the webhook off for the pod;
 * - 1Password (1Password/kubernetes-secrets-injector `pkg/webhook/webhook.go`): `operator.1password.io/inject` lists
 *   the containers (comma-separated) whose `op://` environment values the injected `op` CLI resolves;
 * - Infisical Agent Injector (Infisical/infisical-agent-injector, `org.infisical.com/inject`); Akeyless
 *   (`akeyless/enabled`, `akeyless:` values); CyberArk's sidecar injector (cyberark/sidecar-injector,
 *   `sidecar-injector.cyberark.com/inject` and `conjur.org/inject`, read as y, yes, true or on in any case); the AWS
 *   secret sidecar injector (aws-samples/aws-secret-sidecar-injector, `secrets.k8s.aws/sidecarInjectorWebhook`);
 * - references resolved by an environment webhook: Azure Key Vault to Kubernetes (`<name>@azurekeyvault`), Berglas
 *   (`berglas://`, `sm://`), kube-secrets-init (`gcp:secretmanager:`, `arn:aws:secretsmanager:`, `arn:aws:ssm:`);
 * - cloud identity: Azure Workload Identity (`azure.workload.identity/use: "true"`, the webhook's object selector),
 *   AAD Pod Identity (`aadpodidbinding`), kube2iam and kiam (`iam.amazonaws.com/role`); on the ServiceAccount, EKS
 *   IRSA (aws/amazon-eks-pod-identity-webhook, `eks.amazonaws.com/role-arn`) and GKE Workload Identity
 *   (`iam.gke.io/gcp-service-account`). These project a token whatever `automountServiceAccountToken` says.
 *
 * Doppler's and Infisical's operators (`secrets.doppler.com/reload`, `secrets.infisical.com/auto-reload`) only
 * restart a pod when a Secret it already references changes: that Secret is judged where it is referenced.
 */
import { isUnknown, type WorkloadView } from "../workload";
import { violation } from "./helpers";
import type { Finding } from "./types";

/** Go's strconv.ParseBool true spellings. */
const GO_TRUE = new Set(["1", "t", "T", "TRUE", "true", "True"]);
const goTrue = (v: string) => GO_TRUE.has(v);
/** The y/yes/true/on reading of Istio-derived injectors (lower-cased first). */
const yamlOn = (v: string) => ["y", "yes", "true", "on"].includes(v.toLowerCase());
const nonEmpty = (v: string) => v.trim() !== "";
/** An injector whose parsing is not published: anything but an empty or false spelling turns it on (fail closed). */
const notOff = (v: string) =>
  !["", "0", "f", "false", "n", "no", "off", "disabled"].includes(v.trim().toLowerCase());

interface Trigger {
  readonly key: string;
  readonly on: (value: string) => boolean;
  /** What the webhook then gives the pod. */
  readonly gives: string;
}

/** Pod annotations that make a webhook inject a secret-store agent or a credential. */
const ANNOTATIONS: readonly Trigger[] = [
  {
    key: "vault.hashicorp.com/agent-inject",
    on: goTrue,
    gives:
      "the Vault Agent Injector adds a Vault agent that logs in with the pod's token and writes Vault secrets into the pod",
  },
  {
    key: "openbao.openbao.org/agent-inject",
    on: goTrue,
    gives: "the OpenBao Agent Injector adds an agent that writes OpenBao secrets into the pod",
  },
  {
    key: "heist.youniqx.com/inject-agent",
    on: goTrue,
    gives: "Heist adds an agent that copies Vault secrets into the pod",
  },
  {
    key: "vault.security.banzaicloud.io/vault-env-from-path",
    on: nonEmpty,
    gives: "Bank-Vaults loads every secret of the Vault path into the environment",
  },
  {
    key: "secrets-webhook.security.bank-vaults.io/vault-env-from-path",
    on: nonEmpty,
    gives: "Bank-Vaults loads every secret of the Vault path into the environment",
  },
  {
    key: "vault.security.banzaicloud.io/vault-agent",
    on: goTrue,
    gives: "Bank-Vaults adds a Vault agent that writes Vault secrets into the pod",
  },
  {
    key: "org.infisical.com/inject",
    on: goTrue,
    gives: "the Infisical Agent Injector adds an agent that writes Infisical secrets into the pod",
  },
  {
    key: "akeyless/enabled",
    on: notOff,
    gives:
      "the Akeyless injector writes Akeyless secrets into the pod (akeyless: values, akeyless/inject_file)",
  },
  {
    key: "sidecar-injector.cyberark.com/inject",
    on: yamlOn,
    gives:
      "CyberArk's sidecar injector adds a Conjur authenticator or Secretless broker holding Conjur credentials",
  },
  {
    key: "conjur.org/inject",
    on: yamlOn,
    gives:
      "CyberArk's sidecar injector adds a Conjur authenticator or Secretless broker holding Conjur credentials",
  },
  {
    key: "secrets.k8s.aws/sidecarInjectorWebhook",
    on: notOff,
    gives: "the AWS secret sidecar injector writes AWS Secrets Manager secrets into the pod",
  },
  {
    key: "iam.amazonaws.com/role",
    on: nonEmpty,
    gives: "kube2iam or kiam hands the pod the AWS role's credentials",
  },
];

/** Pod labels that do the same. */
const LABELS: readonly Trigger[] = [
  {
    key: "azure.workload.identity/use",
    on: (v) => v === "true",
    gives:
      "the Azure Workload Identity webhook projects a federated token and AZURE_* variables (the ServiceAccount's client id), whatever automountServiceAccountToken says",
  },
  {
    key: "aadpodidbinding",
    on: nonEmpty,
    gives: "AAD Pod Identity hands the pod the bound Azure identity's tokens",
  },
];

/** ServiceAccount annotations that give every pod using it a cloud identity. */
export const SERVICE_ACCOUNT_IDENTITIES: readonly Trigger[] = [
  {
    key: "eks.amazonaws.com/role-arn",
    on: nonEmpty,
    gives:
      "EKS IRSA: the pod identity webhook projects a web-identity token and AWS_ROLE_ARN, so the pod acts as the IAM role",
  },
  {
    key: "iam.gke.io/gcp-service-account",
    on: nonEmpty,
    gives:
      "GKE Workload Identity: the pod gets the Google service account's access tokens from the metadata server",
  },
];

/**
 * ServiceAccount labels: Azure Workload Identity before v1.0 selected pods by their ServiceAccount's
 * `azure.workload.identity/use` label (the webhook reads the account's `client-id` annotation either way).
 */
export const SERVICE_ACCOUNT_LABELS: readonly Trigger[] = [
  {
    key: "azure.workload.identity/use",
    on: (v) => v === "true",
    gives:
      "Azure Workload Identity (before v1.0, selected by the ServiceAccount): the webhook projects a federated token and AZURE_* variables",
  },
];

const BANK_VAULTS_MUTATE = "vault.security.banzaicloud.io/mutate";

/** Environment values an injected program replaces with the secret they name, and who replaces them. */
const REFERENCES: readonly [RegExp, string][] = [
  [/^(?:>>)?vault:|\$\{(?:>>)?vault:/, "Bank-Vaults' vault-env replaces it with the Vault secret it names"],
  [/^op:\/\//, "the 1Password injector's op CLI replaces it with the 1Password item it names"],
  [/^akeyless:/, "the Akeyless injector replaces it with the Akeyless secret it names"],
  [
    /@azurekeyvault(?:\?.*)?$/,
    "Azure Key Vault to Kubernetes replaces it with the Key Vault secret it names",
  ],
  [/^(?:berglas|sm):\/\//, "Berglas replaces it with the Secret Manager or Cloud Storage secret it names"],
  [
    /^(?:gcp:secretmanager:|arn:aws:secretsmanager:|arn:aws:ssm:)/,
    "kube-secrets-init replaces it with the cloud secret it names",
  ],
];

function triggered(map: unknown, table: readonly Trigger[]): { key: string; value: string; gives: string }[] {
  if (isUnknown(map) || map === undefined || map === null || typeof map !== "object") return [];
  const m = map as Record<string, unknown>;
  return table.flatMap((t) => {
    const v = m[t.key];
    return typeof v === "string" && t.on(v) ? [{ key: t.key, value: v, gives: t.gives }] : [];
  });
}

/** Why a literal environment value is a reference a webhook resolves to a secret, or undefined. */
export function injectedReference(value: string, annotations: unknown): string | undefined {
  const ann = isUnknown(annotations) ? undefined : (annotations as Record<string, unknown> | undefined);
  for (const [re, why] of REFERENCES) {
    if (!re.test(value)) continue;
    if (why.startsWith("Bank-Vaults") && ann?.[BANK_VAULTS_MUTATE] === "skip") continue;
    return why;
  }
  return undefined;
}

/** The pod's own annotations and labels that make a webhook inject credentials. */
export function injectorFindings(w: WorkloadView): Finding[] {
  const out: Finding[] = [];
  const meta = w.podMetaPath ?? "metadata";
  for (const t of triggered(w.podAnnotations, ANNOTATIONS)) {
    out.push(
      violation(
        `the pod's annotation ${t.key}: "${t.value}" turns on secret injection: ${t.gives}`,
        `${meta}.annotations.${t.key}`,
      ),
    );
  }
  const onePassword = isUnknown(w.podAnnotations)
    ? undefined
    : w.podAnnotations?.["operator.1password.io/inject"];
  if (typeof onePassword === "string") {
    const names = onePassword.split(",").map((n) => n.trim());
    const hit = w.containers.filter((c) => names.includes(c.name)).map((c) => c.name);
    if (hit.length > 0)
      out.push(
        violation(
          `the pod's annotation operator.1password.io/inject names container${hit.length > 1 ? "s" : ""} ${hit.join(", ")}: the 1Password injector adds the op CLI, which resolves op:// values into their environment with the pod's 1Password token`,
          `${meta}.annotations.operator.1password.io/inject`,
        ),
      );
  }
  for (const t of triggered(w.podLabels, LABELS)) {
    out.push(
      violation(
        `the pod's label ${t.key}: "${t.value}" turns on a cloud identity: ${t.gives}`,
        `${meta}.labels.${t.key}`,
      ),
    );
  }
  return out;
}
