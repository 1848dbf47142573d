import { describe, expect, it } from "vitest";
import { carrier, copy, DOCKER, first, safeContainer, safePodSpec } from "./fixtures";
import { remediateThenValidate, secret, validate, violated } from "./harness";

// Credential-shaped test values, assembled at run time so no scanner mistakes this file for a leak.
const j = (...p: string[]) => p.join("");
const VALUES: [string, string][] = [
  ["AWS access key id", j("AKIA", "IOSFODNN7EXAMPLE")],
  ["GitHub token", j("ghp_", "a".repeat(18), "B1".repeat(9))],
  ["GitHub fine-grained token", j("github_pat_", "11ABCDEFG0123456789_abcdefghijkl")],
  ["GitLab token", j("glpat-", "xY3".repeat(7))],
  ["Slack token", j("xoxb-", "1234567890-abcdefghij")],
  ["Anthropic key", j("sk-ant-", "api03-", "Ab1".repeat(10))],
  ["OpenAI key", j("sk-proj-", "Ab1Cd2".repeat(5))],
  ["Google API key", j("AIza", "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q")],
  ["Stripe key", j("sk_live_", "4eC39HqLyjWDarjtT1zdp7dc")],
  ["private key", j("-----BEGIN ", "RSA PRIVATE KEY-----\nMIIE...")],
  [
    "JWT",
    j(
      "eyJhbGciOiJIUzI1NiJ9",
      ".",
      "eyJzdWIiOiIxMjM0NTY3ODkwIn0",
      ".",
      "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ),
  ],
  ["URL with a password", j("postgres://app:", "hunter2hunter2", "@db:5432/app")],
  ["high-entropy string", j("Zx8", "qW2eR4tY6uI8oP0aS3dF5gH7jK9lZ1xC")],
];

const NAMES = [
  "API_KEY",
  "GITHUB_TOKEN",
  "DB_PASSWORD",
  "AWS_SECRET_ACCESS_KEY",
  "clientSecret",
  "SERVICE_CREDENTIALS",
  "db.passwd",
  "x-auth-token",
];

function leaks(messages: string[], value: string): boolean {
  return messages.some((m) => m.includes(value) || m.includes(value.slice(0, 12)));
}

describe("credential-shaped values", () => {
  it.each(VALUES)("docker envs: %s", (_what, value) => {
    const c = copy(safeContainer());
    c.envs = ["LANG=C", `SETTING=${value}`];
    const o = validate(DOCKER, c);
    expect(violated(o)).toEqual(["sandbox-disallow-secret-env"]);
    expect(
      leaks(
        o.violations.map((v) => v.message),
        value,
      ),
    ).toBe(false);
  });

  it.each(VALUES)("kubernetes env value: %s", (_what, value) => {
    const spec = copy(safePodSpec());
    first(spec).env = [{ name: "SETTING", value }];
    const o = validate("kubernetes:batch/v1:Job", carrier("Job").build(spec));
    expect(violated(o)).toEqual(["sandbox-disallow-secret-env"]);
    expect(
      leaks(
        o.violations.map((v) => v.message),
        value,
      ),
    ).toBe(false);
  });

  it("a bare credential in envs (no =) is not printed as a name", () => {
    const c = copy(safeContainer());
    const value = VALUES[1]?.[1] ?? "";
    c.envs = [value];
    const o = validate(DOCKER, c);
    expect(o.violations.map((v) => v.message)).toEqual([
      'container "fixture" has the entry at envs[0], which looks like a credential (not shown) [envs[0]]',
    ]);
  });
});

describe("credential names", () => {
  it.each(NAMES)("%s", (name) => {
    const c = copy(safeContainer());
    c.envs = [`${name}=x`];
    expect(violated(validate(DOCKER, c))).toEqual(["sandbox-disallow-secret-env"]);
  });

  it.each(["PWD", "KEYBOARD", "TOKENIZER_PATH", "HOME", "LANG", "TASK_ID"])(
    "%s is not a credential name",
    (name) => {
      const c = copy(safeContainer());
      c.envs = [`${name}=/job`];
      expect(violated(validate(DOCKER, c))).toEqual([]);
    },
  );

  it("allowedNames exempts a name", () => {
    const c = copy(safeContainer());
    c.envs = ["PUBLIC_KEY=/etc/keys/pub.pem"];
    expect(
      violated(
        validate(DOCKER, c, { config: { "sandbox-disallow-secret-env": { allowedNames: ["PUBLIC_KEY"] } } }),
      ),
    ).toEqual([]);
  });

  it("the message names the variable and the reason, not the value", () => {
    const c = copy(safeContainer());
    c.envs = ["DB_PASSWORD=correct-horse"];
    expect(validate(DOCKER, c).violations.map((v) => v.message)).toEqual([
      'container "fixture" sets variable DB_PASSWORD: its name contains "PASSWORD", which says it holds a credential (the value is not shown) [envs[0]]',
    ]);
  });
});

describe("Pulumi secrets (taint)", () => {
  const plain = "just-a-plain-looking-value";

  it("validation alone sees plaintext: a secret with a harmless name and value passes", () => {
    const c = copy(safeContainer());
    c.envs = ["LANG=C", secret(`SETTING=${plain}`)];
    expect(violated(validate(DOCKER, c))).toEqual([]);
  });

  it("at level remediate the secret is redacted and reported, docker envs entry", () => {
    const c = copy(safeContainer());
    c.envs = ["LANG=C", secret(`SETTING=${plain}`)];
    const { props, outcome } = remediateThenValidate(DOCKER, c);
    expect(outcome.violations).toEqual([
      {
        policy: "sandbox-disallow-secret-env",
        message:
          'container "fixture" gets variable SETTING from a Pulumi secret (the value is not shown) [envs[1]]',
      },
    ]);
    expect(JSON.stringify(props)).not.toContain(plain);
  });

  it("a whole envs list marked secret taints every entry", () => {
    const c = copy(safeContainer());
    c.envs = secret(["A=1", `B=${plain}`]);
    const { props, outcome } = remediateThenValidate(DOCKER, c);
    expect(outcome.violations.map((v) => v.message)).toEqual([
      'container "fixture" gets variable A from a Pulumi secret (the value is not shown) [envs[0]]',
      'container "fixture" gets variable B from a Pulumi secret (the value is not shown) [envs[1]]',
    ]);
    expect(JSON.stringify(props)).not.toContain(plain);
  });

  it("kubernetes env value from a Pulumi secret, in an init container of a CronJob", () => {
    const spec = copy(safePodSpec());
    const init = copy(first(spec));
    init.name = "fetch";
    init.env = [{ name: "REPO", value: secret(plain) }];
    spec.initContainers = [init];
    const { props, outcome } = remediateThenValidate(
      "kubernetes:batch/v1:CronJob",
      carrier("CronJob").build(spec),
    );
    expect(outcome.violations.map((v) => v.message)).toEqual([
      'init container "fetch" gets variable REPO from a Pulumi secret (the value is not shown) [spec.jobTemplate.spec.template.spec.initContainers[0].env[0]]',
    ]);
    expect(JSON.stringify(props)).not.toContain(plain);
  });

  it("other secret fields are kept secret by the remediation", () => {
    const c = copy(safeContainer());
    c.envs = [secret(`SETTING=${plain}`)];
    c.image = secret("registry.example/private@sha256:abc");
    const { props } = remediateThenValidate(DOCKER, c);
    expect((props as { image: unknown }).image).toEqual(secret("registry.example/private@sha256:abc"));
  });

  it("additionalSecretOutputs naming envs taints it at validation", () => {
    const c = copy(safeContainer());
    const o = validate(DOCKER, c, { additionalSecretOutputs: ["envs"] });
    expect(violated(o)).toEqual(["sandbox-disallow-secret-env"]);
  });
});
