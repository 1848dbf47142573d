import { describe, expect, it } from "vitest";
import { secretEnvReason, secretNameReason, secretValueReason, shannonEntropy } from "../../components/model";

describe("secretNameReason", () => {
  it.each([
    ["AWS_SECRET_ACCESS_KEY", "SECRET"],
    ["GITHUB_TOKEN", "TOKEN"],
    ["OPENAI_API_KEY", "KEY"],
    ["DB_PASSWORD", "PASSWORD"],
    ["MYSQL_ROOT_PASSWD", "PASSWD"],
    ["GOOGLE_APPLICATION_CREDENTIALS", "CREDENTIALS"],
    ["apiKey", "KEY"],
    ["openaiApiKey", "KEY"],
    ["SLACK_BOT_TOKENS", "TOKENS"],
    ["ANTHROPIC_APIKEY", "APIKEY"],
    ["SSH_PASSPHRASE", "PASSPHRASE"],
    ["accessToken", "TOKEN"],
    ["client_secret", "SECRET"],
  ])("%s says it holds a credential (%s)", (name, word) => {
    expect(secretNameReason(name)).toBe(`its name contains "${word}", which says it holds a credential`);
  });

  it.each([
    "PWD",
    "PATH",
    "HOME",
    "TOKENIZERS_PARALLELISM",
    "KEYBOARD",
    "LANG",
    "SECRETARY_NAME",
    "MONKEY",
    "PASSENGER_COUNT",
  ])("%s is an ordinary name", (name) => {
    expect(secretNameReason(name)).toBeUndefined();
  });
});

describe("secretValueReason", () => {
  it.each([
    ["-----BEGIN RSA PRIVATE KEY-----\nMIIE...", "a PEM private key"],
    ["-----BEGIN OPENSSH PRIVATE KEY-----", "a PEM private key"],
    ["-----BEGIN PRIVATE KEY-----", "a PEM private key"],
    ["AKIAIOSFODNN7EXAMPLE", "an AWS access key id"],
    ["ASIAY34FZKBOKMUTVV7A", "an AWS access key id"],
    [`ghp_${"a".repeat(36)}`, "a GitHub token"],
    [`gho_${"B1".repeat(18)}`, "a GitHub token"],
    [`github_pat_${"A1b2".repeat(8)}`, "a GitHub fine-grained token"],
    [`glpat-${"x".repeat(20)}`, "a GitLab token"],
    ["xoxb-1234567890-abcdefghij", "a Slack token"],
    [`sk-ant-api03-${"z".repeat(30)}`, "an Anthropic API key"],
    [`sk-proj-${"q".repeat(40)}`, "an OpenAI-style API key"],
    [`sk-${"Q".repeat(48)}`, "an OpenAI-style API key"],
    [`AIza${"S".repeat(35)}`, "a Google API key"],
    [`sk_live_${"4".repeat(24)}`, "a Stripe key"],
    [`npm_${"n".repeat(36)}`, "an npm token"],
    [`hf_${"h".repeat(34)}`, "a Hugging Face token"],
    [
      "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
      "a JSON Web Token",
    ],
    [
      "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=abcdefghijklmnopqrstuvwxyz0123==",
      "an Azure storage account key",
    ],
    ["postgres://app:hunter2@db:5432/app", "a URL with a password in it"],
  ])("%s looks like %s", (value, what) => {
    expect(secretValueReason(value)).toBe(`its value looks like ${what}`);
  });

  it("catches a long high-entropy string in no known format", () => {
    expect(secretValueReason("Zx9Qm2Lr7Tp4Wv8Ks1Hd6Fj3Bn5Gc0Ya")).toBe(
      "its value contains a long high-entropy string",
    );
  });

  it.each([
    "C.UTF-8",
    "/usr/local/bin:/usr/bin:/bin",
    "false",
    "https://pypi.org/simple",
    "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "3f786850e387550fdab836ed7e6dc881de23001b",
    "123e4567-e89b-12d3-a456-426614174000",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "http://proxy:3128",
  ])("%s is an ordinary value", (value) => {
    expect(secretValueReason(value)).toBeUndefined();
  });

  it("measures entropy in bits per character", () => {
    expect(shannonEntropy("aaaa")).toBe(0);
    expect(shannonEntropy("abcd")).toBe(2);
    expect(shannonEntropy("")).toBe(0);
  });
});

describe("secretEnvReason", () => {
  it("judges the name first, then the value", () => {
    expect(secretEnvReason("API_TOKEN", "x")).toBe(
      'its name contains "TOKEN", which says it holds a credential',
    );
    expect(secretEnvReason("CONFIG", "AKIAIOSFODNN7EXAMPLE")).toBe(
      "its value looks like an AWS access key id",
    );
    expect(secretEnvReason("CONFIG", undefined)).toBeUndefined();
    expect(secretEnvReason("LANG", "C")).toBeUndefined();
  });
});
