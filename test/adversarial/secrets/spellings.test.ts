/**
 * Attacker D, generated: the spellings of F8-F14 as families, by each program's or format's grammar, so a
 * fix by example does not pass. Each family is judged by the recognizers directly (many runs), then a sample of it
 * through `scan` (a Pod) and the pack (a docker.Container), which must give the same verdict.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { secretArgReasons, secretEnvReason } from "../../../components/model";
import { DOCKER, safeContainer } from "../../policy/fixtures";
import { engineRun, violated } from "../../policy/harness";
import { pod } from "../fixtures";
import { assertVerdict, blocked, passes, scanFiles } from "../harness";

const word = fc.stringMatching(/^[a-z][a-z0-9]{2,7}$/);
const secretText = fc.stringMatching(/^[A-Za-z][A-Za-z0-9]{7,15}[0-9]$/);
const upper = fc
  .stringMatching(/^[A-Z][A-Z0-9]{1,6}$/)
  .filter((w) => !/PASS|PW|KEY|TOK|SECRET|AUTH|CRED|COOKIE|PAT/.test(w));
const flagged = (argv: string[]) => secretArgReasons(argv).size > 0;
const asScript = (argv: string[]) => ["sh", "-c", argv.map((a) => (/\s/.test(a) ? `'${a}'` : a)).join(" ")];
/** Either the argv itself, or the same command as a shell script. */
const spelled = (argv: string[]) => fc.constantFrom(argv, asScript(argv));

/** curl's argument-less short options (tool_getparam.c), in any order and number before `-u`. */
const CURL_BOOLEANS = [..."0123456#aBfgGiIjJklLMnNOpqRsSvVZ"];

describe("F8: command-line spellings of a credential", () => {
  it("curl's combined short options end in -u with user:password, glued or as the next word", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...CURL_BOOLEANS), { maxLength: 4 }),
        word,
        secretText,
        fc.boolean(),
        (bools, user, pw, glued) => {
          const cluster = `-${bools.join("")}u`;
          const argv = glued
            ? ["curl", `${cluster}${user}:${pw}`, "https://x"]
            : ["curl", cluster, `${user}:${pw}`, "https://x"];
          expect(flagged(argv)).toBe(true);
          expect(flagged(asScript(argv))).toBe(true);
          // Without a password curl prompts; after an option that takes an argument, `u` is that argument's text.
          expect(flagged(["curl", cluster, user, "https://x"])).toBe(false);
          expect(flagged(["curl", `-${bools.join("")}o`, `${user}:${pw}`, "https://x"])).toBe(false);
        },
      ),
    );
  });

  it("a NAME=value inside an option's value (--env=, --from-literal=, --set=) is judged like an env var", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("--env", "--from-literal", "--set", "--build-arg", "-e"),
        fc.constantFrom("PGPASSWORD", "password", "DB_PASSWORD", "api_token", "SSHPASS"),
        secretText,
        fc.boolean(),
        (opt, name, pw, eq) => {
          const argv = eq ? ["tool", `${opt}=${name}=${pw}`] : ["tool", opt, `${name}=${pw}`];
          expect(flagged(argv), argv.join(" ")).toBe(true);
          expect(flagged(["tool", `${opt}=${name}=$(PW)`])).toBe(false);
          expect(flagged(["tool", `${opt}=${name}_MIN_LENGTH=12`])).toBe(false);
        },
      ),
    );
  });

  it("headers that carry a credential, in every option spelling", () => {
    const names = fc.oneof(
      fc.constantFrom("Authorization", "Proxy-Authorization", "PRIVATE-TOKEN", "X-Api-Key", "Api-Key"),
      word.map((w) => `X-${w}-Token`),
    );
    fc.assert(
      fc.property(names, secretText, fc.integer({ min: 0, max: 3 }), (name, tok, form) => {
        const value = /authorization/i.test(name) ? `Bearer ${tok}` : tok;
        const header = `${name}: ${value}`;
        const argv = [
          ["curl", "-H", header, "https://x"],
          ["curl", `--header=${header}`, "https://x"],
          ["curl", `-H${header}`, "https://x"],
          ["wget", `--header=${header}`, "https://x"],
        ][form] as string[];
        expect(flagged(argv), argv.join(" ")).toBe(true);
        expect(flagged(asScript(argv)), asScript(argv).join(" ")).toBe(true);
        expect(flagged(["curl", "-H", `${name}: $(TOKEN)`, "https://x"])).toBe(false);
        expect(flagged(["curl", "-H", `Accept: ${tok}`, "https://x"])).toBe(false);
      }),
    );
  });

  it("a literal piped or here-stringed into a program that reads the password from standard input", () => {
    const readers = fc.constantFrom(
      "docker login -u me --password-stdin r.io",
      "podman login --password-stdin r.io",
      "helm registry login r.io --password-stdin",
      "sudo -S true",
      "chpasswd",
      "openssl pkcs12 -in a.p12 -passin stdin",
    );
    fc.assert(
      fc.property(
        fc.constantFrom("echo", "echo -n", "printf '%s'", "printf"),
        secretText,
        readers,
        (print, pw, reader) => {
          expect(flagged(["sh", "-c", `${print} ${pw} | ${reader}`]), `${print} ${pw} | ${reader}`).toBe(
            true,
          );
          expect(flagged(["sh", "-c", `${reader} <<< ${pw}`])).toBe(true);
          expect(flagged(["sh", "-c", `${print} $PW | ${reader}`])).toBe(false);
          expect(flagged(["sh", "-c", `${print} ${pw} | grep x`])).toBe(false);
        },
      ),
    );
  });

  it("openssl pass:, positional passwords and setters", () => {
    fc.assert(
      fc.property(secretText, word, (pw, user) => {
        for (const argv of [
          ["openssl", "pkcs12", "-export", "-passout", `pass:${pw}`],
          ["openssl", "rsa", "-passin", `pass:${pw}`],
          ["openssl", "enc", "-aes-256-cbc", "-k", pw],
          ["htpasswd", "-bc", "/etc/htpasswd", user, pw],
          ["htpasswd", "-nbB", user, pw],
          ["redis-cli", "AUTH", user, pw],
          ["vault", "login", pw],
          ["aws", "configure", "set", "aws_secret_access_key", pw],
          ["npm", "config", "set", "//registry.npmjs.org/:_authToken", pw],
        ])
          for (const a of [argv, asScript(argv)]) expect(flagged(a), a.join(" ")).toBe(true);
        for (const argv of [
          ["openssl", "rsa", "-passin", "env:PW"],
          ["openssl", "rsa", "-passin", "file:/run/secrets/pw"],
          ["htpasswd", "-c", "/etc/htpasswd", user],
          ["vault", "login", "-method=userpass", `username=${user}`],
          ["aws", "configure", "set", "region", user],
          ["git", "config", "user.name", user],
        ])
          expect(flagged(argv), argv.join(" ")).toBe(false);
      }),
    );
  });
});

describe("F9/F10: values and names", () => {
  const neutral = upper.map((w) => `${w}_SETTING`);
  it("percent-encoded Authorization settings (W3C Baggage, OTLP headers)", () => {
    fc.assert(
      fc.property(
        neutral,
        fc.constantFrom("Bearer", "Basic", "Token", "ApiKey"),
        secretText,
        (name, scheme, tok) => {
          expect(secretEnvReason(name, `Authorization=${scheme}%20${tok}`)).toBeDefined();
          expect(
            secretEnvReason(name, `x-team=abc,authorization=${scheme}%20${encodeURIComponent(tok)}`),
          ).toBeDefined();
          expect(secretEnvReason(name, `Authorization=${scheme}%20$(TOKEN)`)).toBeUndefined();
        },
      ),
    );
  });

  it("DSNs with a password in the user information, without a URL scheme", () => {
    fc.assert(
      fc.property(
        neutral,
        word,
        secretText,
        fc.constantFrom("tcp(db:3306)", "unix(/run/mysqld.sock)", ""),
        word,
        (name, u, pw, addr, db) => {
          expect(secretEnvReason(name, `${u}:${pw}@${addr}/${db}`)).toBeDefined();
          expect(secretEnvReason(name, `${u}@${addr}/${db}`)).toBeUndefined();
          expect(secretEnvReason(name, `${u}:$(PW)@${addr}/${db}`)).toBeUndefined();
        },
      ),
    );
  });

  it("JSON, YAML and credential-file lines with a password", () => {
    fc.assert(
      fc.property(
        neutral,
        word,
        secretText,
        fc.constantFrom("password", "db.password", "apiToken", "client_secret"),
        (name, host, pw, key) => {
          for (const v of [
            `{"${key}":"${pw}"}`,
            `{"a": 1, "${key}" : "${pw}"}`,
            `spring:\n  ${key}: ${pw}\n`,
            `machine ${host} login u password ${pw}`,
            `${host}:5432:app:app:${pw}`,
          ])
            expect(secretEnvReason(name, v), v).toBeDefined();
          expect(
            secretEnvReason(name, `{"${key}_min_length": 12, "${key}_file": "/run/secrets/x"}`),
          ).toBeUndefined();
        },
      ),
    );
  });

  it("vendor names: glued PASS, *_PW, Erlang cookies", () => {
    fc.assert(
      // A prefix that makes an English word (`BY` + `PASS`) is not a vendor's glued PASS.
      fc.property(
        upper.filter((w) => !/(?:COM|BY|OVER|UNDER|SUR|TRES|MULTI|SINGLE|ONE|TWO)$/.test(w)),
        fc.constantFrom("hunter2-correct-horse", "Tr0ub4dor3xK9q"),
        (prefix, v) => {
          for (const n of [`${prefix}PASS`, `${prefix}_PW`, `${prefix}_ERLANG_COOKIE`, "SSHPASS"])
            expect(secretEnvReason(n, v), n).toBeDefined();
          expect(secretEnvReason(`${prefix}_COOKIE_SECURE`, "true")).toBeUndefined();
          expect(secretEnvReason(`${prefix}_COMPASS`, "north")).toBeUndefined();
        },
      ),
    );
  });
});

describe("F11-F14: values that are not secrets under credential-looking names", () => {
  it("flags, numbers and paths under a name that is about a credential", () => {
    const about = fc.constantFrom(
      "PasswordAuthentication",
      "PASSWORD_AUTHENTICATION",
      "TOKEN_REFRESH_SKEW",
      "SECRET_ROTATION_PERIOD",
      "auth.login.config",
    );
    const value = fc.oneof(
      fc.constantFrom("yes", "no", "true", "false"),
      fc.nat().map(String),
      fc.nat().map((n) => `${n}s`),
      word.map((w) => `/etc/${w}/jaas.conf`),
    );
    fc.assert(
      fc.property(about, value, (name, v) => {
        expect(secretEnvReason(name, v), `${name}=${v}`).toBeUndefined();
        expect(flagged(["ssh", "-o", `${name}=${v}`, "host"])).toBe(false);
        expect(secretEnvReason(name, "hunter2-correct-horse")).toBeDefined();
      }),
    );
  });

  it("token counts: plural TOKENS with a number", () => {
    fc.assert(
      fc.property(
        fc.array(upper, { maxLength: 2 }),
        fc.array(upper, { maxLength: 2 }),
        fc.nat(),
        (pre, post, n) => {
          const name = [...pre, "TOKENS", ...post].join("_");
          expect(secretEnvReason(name, String(n)), name).toBeUndefined();
          expect(flagged(["llm", `--${name.toLowerCase().replace(/_/g, "-")}`, String(n)])).toBe(false);
        },
      ),
    );
  });

  it("credential names holding an absolute path or socket", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("GOOGLE_APPLICATION_CREDENTIALS", "SSH_AUTH_SOCK", "DB_PASSWORD_SOURCE", "API_TOKEN"),
        fc.array(word, { minLength: 1, maxLength: 3 }),
        (name, parts) => {
          expect(secretEnvReason(name, `/${parts.join("/")}.json`)).toBeUndefined();
          expect(secretEnvReason(name, `/run/${parts.join("-")}.sock`)).toBeUndefined();
        },
      ),
    );
  });

  it("a name that says it holds a command (*_COMMAND, *_HELPER) is judged by what the command does", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("RESTIC_PASSWORD_COMMAND", "CREDENTIAL_HELPER", "VAULT_TOKEN_CMD"),
        secretText,
        word,
        (name, pw, w) => {
          expect(secretEnvReason(name, `cat /run/secrets/${w}`)).toBeUndefined();
          expect(secretEnvReason(name, w)).toBeUndefined();
          expect(secretEnvReason(name, `echo ${pw}`)).toBeDefined();
          expect(secretEnvReason(name, `mysql -u${w} -p${pw}`)).toBeDefined();
        },
      ),
    );
  });

  it("public keys, fingerprints and integrity hashes", () => {
    const b64 = (n: number) =>
      fc.uint8Array({ minLength: n, maxLength: n }).map((b) => Buffer.from(b).toString("base64"));
    fc.assert(
      fc.property(b64(51), b64(32), b64(64), word, (key, sha, sri, host) => {
        const line = `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI${key} ${host}@example`;
        expect(secretEnvReason("AUTHORIZED_KEYS", line)).toBeUndefined();
        expect(secretEnvReason("DEPLOY_PUBLIC_KEY", line)).toBeUndefined();
        expect(secretEnvReason("SSH_KNOWN_HOSTS", `${host}.com ${line}`)).toBeUndefined();
        expect(secretEnvReason("SSH_KEY_FINGERPRINT", `SHA256:${sha.replace(/=+$/, "")}`)).toBeUndefined();
        expect(secretEnvReason("INTEGRITY", `sha512-${sri}`)).toBeUndefined();
        // A private key next to them is still one.
        expect(
          secretEnvReason(
            "KEYS",
            `${line}\n-----BEGIN OPENSSH PRIVATE KEY-----\nx\n-----END OPENSSH PRIVATE KEY-----`,
          ),
        ).toBeDefined();
      }),
    );
  });
});

describe("scan and the pack agree on the generated spellings", () => {
  const samples = fc.sample(
    fc.oneof(
      fc.tuple(
        fc.constant(true),
        secretText.map((pw) => `SPRING_APPLICATION_JSON={"db.password":"${pw}"}`),
      ),
      fc.tuple(
        fc.constant(true),
        secretText.map((pw) => `DSN=app:${pw}@tcp(db:3306)/app`),
      ),
      fc.tuple(
        fc.constant(true),
        secretText.map((t) => `OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer%20${t}`),
      ),
      fc.tuple(
        fc.constant(false),
        fc.nat().map((n) => `COMPLETION_TOKENS=${n}`),
      ),
      fc.tuple(
        fc.constant(false),
        word.map((w) => `GOOGLE_APPLICATION_CREDENTIALS=/var/secrets/${w}.json`),
      ),
    ),
    { numRuns: 12 },
  );
  it("env entries", async () => {
    for (const [bad, entry] of samples) {
      const [name = "", ...rest] = entry.split("=");
      const yaml = pod("p", {
        container: `env:\n  - name: ${name}\n    value: ${JSON.stringify(rest.join("="))}`,
      });
      assertVerdict(
        await scanFiles({ "pod.yaml": yaml }),
        bad ? blocked("sandbox-disallow-secret-env") : passes,
      );
      const props = { ...safeContainer(), envs: [...(safeContainer().envs as string[]), entry] };
      expect(violated(engineRun(DOCKER, props).outcome).includes("sandbox-disallow-secret-env"), entry).toBe(
        bad,
      );
    }
  });
  it("command lines", async () => {
    const argvs = fc.sample(
      fc
        .tuple(secretText, fc.constantFrom(...CURL_BOOLEANS))
        .chain(([pw, b]) => spelled(["curl", `-s${b}u`, `admin:${pw}`, "https://x"])),
      { numRuns: 8 },
    );
    for (const argv of argvs) {
      const yaml = pod("p", { container: `args: ${JSON.stringify(argv)}` });
      assertVerdict(await scanFiles({ "pod.yaml": yaml }), blocked("sandbox-disallow-secret-env"));
      const props = { ...safeContainer(), command: argv };
      expect(violated(engineRun(DOCKER, props).outcome)).toContain("sandbox-disallow-secret-env");
    }
  });
});
