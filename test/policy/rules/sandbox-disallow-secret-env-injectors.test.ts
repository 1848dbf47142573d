/**
 * sandbox-disallow-secret-env, injection webhooks: a pod's own annotations and labels that make an admission webhook
 * put a secret store's agent or a cloud identity into it (Vault, OpenBao, Bank-Vaults, 1Password, Infisical,
 * Akeyless, CyberArk, the AWS secret sidecar injector, kube2iam, Azure Workload Identity, AAD Pod Identity), read as
 * each webhook reads its value, and environment values such a webhook replaces with a secret (`vault:`, `op://`,
 * `akeyless:`, `@azurekeyvault`, `berglas://`, `sm://`, cloud secret ARNs).
 */
import { describe, expect, it } from "vitest";
import { carrier, DOCKER, first, safeContainer, safePodSpec } from "../fixtures";
import { type Outcome, validate, violated } from "../harness";

const RULE = "sandbox-disallow-secret-env";
type Obj = Record<string, unknown>;
const mine = (o: Outcome) => o.violations.filter((v) => v.policy === RULE).map((v) => v.message);
const KINDS = ["Pod", "Deployment", "Job", "CronJob"] as const;
/** A hardened carrier with pod-template `metadata` and the task container's `env`. */
function pod(kind: string, meta: Obj = {}, env?: Obj[]): Outcome {
  const s = safePodSpec();
  if (env !== undefined) first(s).env = env;
  const c = carrier(kind);
  const base = { labels: { "sandbox.project": "demo", "sandbox.role": "task" } };
  const merged = { ...base, ...meta, labels: { ...base.labels, ...((meta.labels as Obj) ?? {}) } };
  return validate(c.type, c.build(s, merged));
}

describe(`${RULE}: injection webhooks`, () => {
  it.each([
    ["vault.hashicorp.com/agent-inject", "true", /Vault Agent Injector/],
    ["vault.hashicorp.com/agent-inject", "T", /Vault Agent Injector/],
    ["vault.hashicorp.com/agent-inject", "1", /Vault Agent Injector/],
    ["openbao.openbao.org/agent-inject", "True", /OpenBao/],
    ["heist.youniqx.com/inject-agent", "true", /Heist/],
    [
      "vault.security.banzaicloud.io/vault-env-from-path",
      "secret/data/app",
      /Bank-Vaults loads every secret/,
    ],
    ["vault.security.banzaicloud.io/vault-agent", "true", /Bank-Vaults adds a Vault agent/],
    ["org.infisical.com/inject", "true", /Infisical/],
    ["akeyless/enabled", "true", /Akeyless/],
    ["sidecar-injector.cyberark.com/inject", "ON", /CyberArk/],
    ["conjur.org/inject", "yes", /CyberArk/],
    ["secrets.k8s.aws/sidecarInjectorWebhook", "enabled", /AWS secret sidecar injector/],
    ["iam.amazonaws.com/role", "arn:aws:iam::1:role/app", /kube2iam or kiam/],
  ])("refuses the pod annotation %s: %s", (key, value, re) => {
    for (const kind of KINDS) {
      const m = mine(pod(kind, { annotations: { [key]: value } }));
      expect(m, kind).toEqual([
        expect.stringMatching(new RegExp(`annotation ${key.replace(/\./g, "\\.")}: "${value}" turns on`)),
      ]);
      expect(m[0]).toMatch(re);
    }
  });

  it.each([
    ["vault.hashicorp.com/agent-inject", "false"],
    ["vault.hashicorp.com/agent-inject", "yes"],
    ["vault.hashicorp.com/agent-inject", "0"],
    ["sidecar-injector.cyberark.com/inject", "no"],
    ["akeyless/enabled", "false"],
    ["vault.hashicorp.com/role", "app"],
    ["prometheus.io/scrape", "true"],
    ["operator.1password.io/inject", "other-container"],
    ["operator.1password.io/inject", ""],
  ])("passes the pod annotation %s: %s, which injects nothing", (key, value) => {
    expect(mine(pod("Deployment", { annotations: { [key]: value } }))).toEqual([]);
  });

  it("1Password injects into the containers its annotation names", () => {
    expect(mine(pod("Pod", { annotations: { "operator.1password.io/inject": "sidecar, task" } }))).toEqual([
      expect.stringMatching(/names container task: the 1Password injector adds the op CLI/),
    ]);
  });

  it('refuses the cloud identity labels; the Azure webhook selects exactly "true"', () => {
    expect(mine(pod("Deployment", { labels: { "azure.workload.identity/use": "true" } }))).toEqual([
      expect.stringMatching(/label azure\.workload\.identity\/use: "true" turns on a cloud identity/),
    ]);
    expect(mine(pod("Deployment", { labels: { aadpodidbinding: "app" } }))).toEqual([
      expect.stringMatching(/AAD Pod Identity/),
    ]);
    for (const v of ["false", "True", ""])
      expect(mine(pod("Deployment", { labels: { "azure.workload.identity/use": v } })), v).toEqual([]);
  });

  it.each([
    "vault:secret/data/app#password",
    ">>vault:secret/data/app#password",
    // Bank-Vaults' inline form, written as the manifest holds it (not a template literal).
    ["postgres://app:$", "{vault:secret/data/db#password}@db/app"].join(""),
    "op://prod/db/password",
    "akeyless:/prod/db",
    "db-password@azurekeyvault",
    "db-password@azurekeyvault?version=2",
    "berglas://bucket/db",
    "sm://project/db",
    "gcp:secretmanager:projects/p/secrets/db",
    "arn:aws:secretsmanager:eu-west-1:1:secret:db",
    "arn:aws:ssm:eu-west-1:1:parameter/db",
  ])("refuses an env value %s, which a webhook replaces with the secret", (value) => {
    expect(mine(pod("Job", {}, [{ name: "DB", value }]))).toEqual([
      expect.stringMatching(/sets variable DB to a secret reference: /),
    ]);
  });

  it("passes such values where nothing replaces them: Bank-Vaults turned off, a Docker container, plain text", () => {
    const skip = { annotations: { "vault.security.banzaicloud.io/mutate": "skip" } };
    expect(mine(pod("Job", skip, [{ name: "DB", value: "vault:secret/data/app#password" }]))).toEqual([]);
    expect(
      violated(validate(DOCKER, { ...safeContainer(), envs: ["DB=vault:secret/data/app"] })),
    ).not.toContain(RULE);
    for (const value of ["vault", "https://vault.example.com", "keyvault-name", "my-op://thing"])
      expect(mine(pod("Job", {}, [{ name: "ADDR", value }])), value).toEqual([]);
  });
});
