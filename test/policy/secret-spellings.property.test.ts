/**
 * The same credential gets the same verdict whatever the spelling and whatever input carries it; the false-alarm
 * families (counts, flags, references, paths, words that only contain a credential word) get none.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { argInputs, envInputs, leaks, secretViolations } from "./secret-inputs";

const RUNS = { numRuns: 40 };

/** A name's words in one of the spellings people use. */
function spell(words: readonly string[]): fc.Arbitrary<string> {
  const cap = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);
  return fc.constantFrom(
    words.join("_").toUpperCase(),
    words.join("_"),
    words.join("-"),
    words.join("."),
    words.join("-").toUpperCase(),
    words[0] + words.slice(1).map(cap).join(""),
    words.map(cap).join(""),
  );
}

const CREDENTIAL_NAMES: readonly (readonly string[])[] = [
  ["db", "password"],
  ["mysql", "root", "password"],
  ["redis", "passwd"],
  ["mysql", "pwd"],
  ["ssh", "passphrase"],
  ["client", "secret"],
  ["github", "token"],
  ["hf", "token"],
  ["node", "auth", "token"],
  ["openai", "api", "key"],
  ["aws", "secret", "access", "key"],
  ["signing", "key"],
  ["private", "key"],
  ["google", "application", "credentials"],
  ["npm", "config", "auth"],
  ["rabbitmq", "default", "pass"],
  ["gitlab", "pat"],
];
const GLUED_NAMES = ["PGPASSWORD", "NPMTOKEN", "CLIENTSECRET", "APIKEY", "pgpassword"];

/** A literal that is not a number, flag, path or reference. */
const literal = fc
  .stringMatching(/^[A-Za-z][A-Za-z0-9!#%^*+-]{5,20}$/)
  .filter((v) => !/^(?:yes|no|true|false|on|off)$/i.test(v));

const credentialName = fc.oneof(
  fc.constantFrom(...CREDENTIAL_NAMES).chain(spell),
  fc.constantFrom(...GLUED_NAMES),
);

describe("credential names: every spelling, every input, the same verdict", () => {
  it("a literal under a credential name is refused, and the value never printed", () => {
    fc.assert(
      fc.property(credentialName, literal, (name, value) => {
        for (const input of envInputs(name, value)) {
          const found = secretViolations(input);
          expect([input.carrier, found.length > 0]).toEqual([input.carrier, true]);
          expect(leaks(found, value)).toBe(false);
        }
      }),
      RUNS,
    );
  });
});

const COUNT = [
  ["max", "tokens"],
  ["max", "new", "tokens"],
  ["token", "limit"],
  ["password", "min", "length"],
  ["token", "ttl"],
  ["secret", "rotation", "days"],
];
const FLAG = [
  ["mysql", "allow", "empty", "password"],
  ["mysql", "random", "root", "password"],
  ["require", "auth"],
  ["auth", "enabled"],
];
const REFERENCE = [
  ["secret", "name"],
  ["token", "url"],
  ["auth", "type"],
  ["postgres", "host", "auth", "method"],
  ["secret", "ref"],
  ["aws", "access", "key", "id"],
];
const PATH = [
  ["postgres", "password", "file"],
  ["token", "path"],
  ["ssl", "key", "file"],
  ["secrets", "dir"],
  ["gf", "security", "admin", "password", "", "file"].filter((w) => w !== ""),
];
const PLAIN = [
  ["keyboard", "layout"],
  ["monkey"],
  ["tokenizers", "parallelism"],
  ["sort", "key"],
  ["passenger", "count"],
  ["secretary", "name"],
  ["pwd"],
  ["openai", "api", "base"],
];

const safeEnv = fc.oneof(
  fc.tuple(
    fc.constantFrom(...COUNT).chain(spell),
    fc.oneof(fc.nat(100000).map(String), fc.constantFrom("30s", "24h", "7d", "64Mi")),
  ),
  fc.tuple(
    fc.constantFrom(...FLAG).chain(spell),
    fc.constantFrom("yes", "no", "true", "false", "1", "0", "on"),
  ),
  fc.tuple(fc.constantFrom(...REFERENCE).chain(spell), fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/)),
  fc.tuple(
    fc.constantFrom(...PATH).chain(spell),
    fc
      .tuple(
        fc.constantFrom("/", "./", "~/", "/run/secrets/", "../"),
        fc.stringMatching(/^[a-z][a-z0-9_.-]{0,20}$/),
      )
      .map(([a, b]) => a + b),
  ),
  fc.tuple(fc.constantFrom(...PLAIN).chain(spell), fc.stringMatching(/^[a-z][a-z_-]{0,11}$/)),
);

describe("false-alarm names: no violation through any input", () => {
  it("counts, flags, references, paths and words that only contain a credential word", () => {
    fc.assert(
      fc.property(safeEnv, ([name, value]) => {
        for (const input of envInputs(name, value))
          expect([input.carrier, name, secretViolations(input)]).toEqual([input.carrier, name, []]);
      }),
      { numRuns: 150 },
    );
  });

  it("the same names with a value of the wrong shape are still credentials", () => {
    fc.assert(
      fc.property(fc.constantFrom(...COUNT, ...PATH).chain(spell), literal, (name, value) => {
        for (const input of envInputs(name, value)) expect(secretViolations(input).length).toBeGreaterThan(0);
      }),
      RUNS,
    );
  });

  it("a value that is only a reference is not a literal", () => {
    fc.assert(
      fc.property(
        credentialName,
        fc.stringMatching(/^[A-Z][A-Z0-9_]{0,15}$/),
        fc.constantFrom("$(%)", ["$", "{%}"].join(""), "$%"),
        (name, ref, form) => {
          for (const input of envInputs(name, form.replace("%", ref)))
            expect(secretViolations(input)).toEqual([]);
        },
      ),
      RUNS,
    );
  });
});

/** A password-like literal with a digit. */
const pw = fc.stringMatching(/^[A-Za-z][A-Za-z0-9]{5,15}[0-9]$/);

const ARG_FORMS: readonly ((v: string) => string[])[] = [
  (v) => ["app", `--password=${v}`],
  (v) => ["app", "--password", v],
  (v) => ["app", `--db-password=${v}`],
  (v) => ["app", "--dbPassword", v],
  (v) => ["app", "--api-key", v],
  (v) => ["app", `--token=${v}`],
  (v) => ["mysql", "-uroot", `-p${v}`, "app"],
  (v) => ["sh", "-c", `mysql -uroot -p${v} app && echo done`],
  (v) => ["curl", "-u", `user:${v}`, "http://x"],
  (v) => ["curl", `-uuser:${v}`, "http://x"],
  (v) => ["curl", "-H", `Authorization: Bearer ${v}`, "http://x"],
  (v) => ["git", "clone", `https://user:${v}@git.example/x.git`],
  (v) => ["env", `PGPASSWORD=${v}`, "psql"],
  (v) => ["sshpass", "-p", v, "ssh", "host"],
  (v) => ["redis-cli", "-a", v, "ping"],
  (v) => ["redis-server", "--requirepass", v],
  (v) => ["openssl", "enc", "-pass", `pass:${v}`],
  (v) => ["sh", "-c", `export DB_PASSWORD=${v}; exec app`],
];

describe("credentials on the command line: every form, every input", () => {
  it("is refused, and the value never printed", () => {
    fc.assert(
      fc.property(fc.constantFrom(...ARG_FORMS), pw, (form, v) => {
        for (const input of argInputs(form(v))) {
          const found = secretViolations(input);
          expect([input.carrier, found.length > 0]).toEqual([input.carrier, true]);
          expect(leaks(found, v)).toBe(false);
        }
      }),
      { numRuns: 120 },
    );
  });

  const SAFE_ARGS: readonly (readonly string[])[] = [
    ["mysql", "-p", "app"],
    ["docker", "run", "-p", "8080:80", "img"],
    ["mkdir", "-p", "/x"],
    ["app", "--max-tokens", "4096"],
    ["app", "--password-file", "/run/secrets/db"],
    ["docker", "login", "--password-stdin", "registry.example"],
    ["curl", "-u", "user", "http://x"],
    ["timeout", "-s", "KILL", "600", "sh", "/job/run.sh"],
    ["app", "--token-file", "token.txt"],
    ["openssl", "enc", "-pass", "env:PW"],
    ["app", "--auth", "basic"],
    ["ssh", "-p", "22", "host"],
    ["psql", "-h", "db", "-U", "app"],
    ["app", "--password=$(DB_PASSWORD)"],
    ["sh", "-c", 'mysql -uroot -p"$MYSQL_PWD" app'],
  ];

  it("ordinary command lines are not", () => {
    const words = fc.array(fc.stringMatching(/^[a-z][a-z0-9._/-]{0,12}$/), { maxLength: 6 });
    fc.assert(
      fc.property(
        fc.oneof(
          fc.constantFrom(...SAFE_ARGS),
          words.map((w) => ["echo", ...w]),
        ),
        (argv) => {
          for (const input of argInputs(argv))
            expect([input.carrier, argv, secretViolations(input)]).toEqual([input.carrier, argv, []]);
        },
      ),
      { numRuns: 100 },
    );
  });
});
