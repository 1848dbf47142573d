/**
 * Credential formats, generated the way their issuers shape them, are refused under a neutral name in every input
 * (also base64-encoded and with escaped newlines); ordinary values are not.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { envInputs, leaks, secretViolations } from "./secret-inputs";

const b64url = (s: string) => Buffer.from(s).toString("base64url");
const chars = (re: RegExp) => fc.stringMatching(re);

const PEM_KINDS = ["", "RSA ", "EC ", "DSA ", "OPENSSH ", "ENCRYPTED "];

const pem = fc
  .tuple(fc.constantFrom(...PEM_KINDS), chars(/^[A-Za-z0-9+/]{40,64}$/), fc.constantFrom("\n", "\\n", "\r\n"))
  .map(([k, body, nl]) => `-----BEGIN ${k}PRIVATE KEY-----${nl}${body}${nl}-----END ${k}PRIVATE KEY-----`);

const FORMATS: readonly fc.Arbitrary<string>[] = [
  fc.tuple(fc.constantFrom("AKIA", "ASIA"), chars(/^[A-Z2-7]{16}$/)).map(([a, b]) => a + b),
  fc
    .tuple(fc.constantFrom("ghp_", "gho_", "ghs_", "ghu_", "ghr_"), chars(/^[A-Za-z0-9]{36}$/))
    .map(([a, b]) => a + b),
  chars(/^[A-Za-z0-9_]{82}$/).map((b) => `github_pat_${b}`),
  chars(/^[A-Za-z0-9_-]{20}$/).map((b) => `glpat-${b}`),
  fc
    .tuple(fc.constantFrom("xoxb", "xoxp", "xoxa"), chars(/^[0-9]{10,12}-[0-9]{10,12}-[A-Za-z0-9]{24}$/))
    .map(([a, b]) => `${a}-${b}`),
  chars(/^[A-Za-z0-9_-]{80}$/).map((b) => `sk-ant-api03-${b}`),
  chars(/^[A-Za-z0-9_-]{40,80}$/).map((b) => `sk-proj-${b}`),
  chars(/^[A-Za-z0-9]{36}$/).map((b) => `npm_${b}`),
  chars(/^[A-Za-z0-9_-]{60}$/).map((b) => `pypi-AgEIcHlwaS5vcmc${b}`),
  chars(/^[A-Za-z0-9]{24}$/).map((b) => `sk_live_${b}`),
  chars(/^[A-Za-z]{34}$/).map((b) => `hf_${b}`),
  fc
    .tuple(
      fc.constantFrom("HS256", "RS256", "ES256"),
      chars(/^[a-z0-9]{4,12}$/),
      chars(/^[A-Za-z0-9_-]{20,43}$/),
    )
    .map(
      ([alg, sub, sig]) =>
        `${b64url(JSON.stringify({ alg, typ: "JWT" }))}.${b64url(JSON.stringify({ sub }))}.${sig}`,
    ),
  pem,
  pem.map((p) => Buffer.from(p.replace(/\\n/g, "\n")).toString("base64")),
  chars(/^[A-Za-z0-9+/]{40,64}$/).map(
    (b) => `-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n${b}\n-----END PGP PRIVATE KEY BLOCK-----`,
  ),
  fc
    .tuple(
      fc.constantFrom("postgres", "postgresql", "mysql", "mongodb+srv", "amqp", "https"),
      chars(/^[a-z][a-z0-9]{0,8}$/),
      chars(/^[A-Za-z0-9!*%-]{1,20}$/),
    )
    .map(([s, u, p]) => `${s}://${u}:${p}@db.example:5432/app`),
  chars(/^[A-Za-z0-9]{6,20}$/).map((p) => `redis://:${p}@cache:6379/0`),
  chars(/^[A-Za-z0-9._-]{19,40}[0-9]$/).map((t) => `Authorization: Bearer ${t}`),
  chars(/^[A-Za-z0-9+/]{86}$/).map(
    (k) =>
      `DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=${k}==;EndpointSuffix=core.windows.net`,
  ),
  chars(/^[A-Za-z0-9!#]{6,20}$/).map((p) => `Server=db;Database=app;User Id=sa;Password=${p};`),
  chars(/^[A-Za-z0-9]{36}$/).map((t) => `//registry.npmjs.org/:_authToken=npm_${t}`),
  chars(/^[A-Za-z0-9]{8,20}$/).map(
    (t) => `//registry.example/:_auth=${Buffer.from(`u:${t}`).toString("base64")}`,
  ),
  chars(/^[a-z0-9]{10}$/).map((id) =>
    JSON.stringify({
      type: "service_account",
      project_id: id,
      private_key_id: id,
      client_email: `${id}@x.iam`,
    }),
  ),
];

describe("credential formats under a neutral name, every input", () => {
  it("are refused and never printed", () => {
    fc.assert(
      fc.property(fc.oneof(...FORMATS), (value) => {
        for (const input of envInputs("SETTING", value)) {
          const found = secretViolations(input);
          expect([input.carrier, found.length]).toEqual([input.carrier, 1]);
          expect(leaks(found, value)).toBe(false);
        }
      }),
      { numRuns: 200 },
    );
  });
});

const ORDINARY: readonly fc.Arbitrary<string>[] = [
  fc.nat().map(String),
  fc.uuid(),
  chars(/^[0-9a-f]{64}$/).map((h) => `sha256:${h}`),
  chars(/^[0-9a-f]{40}$/),
  chars(/^[a-z][a-z0-9/_.-]{0,30}$/).map((p) => `/${p}`),
  chars(/^[a-z][a-z0-9.-]{0,20}$/).map((h) => `https://${h}.example/simple`),
  chars(/^[a-z]{1,8}$/).map((u) => `postgres://${u}@db:5432/app`),
  chars(/^[A-Z][A-Z0-9_]{0,12}$/).map((v) => `postgres://app:$(${v})@db:5432/app`),
  fc.constantFrom(
    "C.UTF-8",
    "en_US.UTF-8",
    "false",
    "info",
    "http://proxy:3128",
    "/usr/local/bin:/usr/bin:/bin",
  ),
  fc.constantFrom(
    "Authorization",
    "Bearer",
    "token",
    "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
  ),
];

describe("ordinary values under a neutral name", () => {
  it("are not refused in any input", () => {
    fc.assert(
      fc.property(fc.oneof(...ORDINARY), (value) => {
        for (const input of envInputs("SETTING", value))
          expect([input.carrier, value, secretViolations(input)]).toEqual([input.carrier, value, []]);
      }),
      { numRuns: 200 },
    );
  });
});
