/**
 * Class 8: secrets beyond environment variables. A Secret volume or a projected secret source puts the Secret's data
 * in the task's file system; a credential in args or command is as readable to the task as an env value; vendors'
 * clients read PGPASSWORD, MYSQL_PWD, NPM_TOKEN; private keys come in PKCS#1, PKCS#8, SEC1 and OpenSSH armour; bearer
 * tokens sit in header strings. Names that merely contain TOKEN or KEY, and *_FILE variables that point at a file,
 * are not credentials.
 */
import { compose, pod } from "./fixtures";
import { blocked, cases, passes } from "./harness";

const envPod = (name: string, value: string) =>
  pod("p", { container: `env:\n  - name: ${name}\n    value: ${JSON.stringify(value)}` });
const plainEnv = {
  "pod.yaml": pod("p", {
    container: "env:\n  - name: PASSWORD\n    valueFrom: {secretKeyRef: {name: db, key: password}}",
  }),
};
const B = blocked(undefined, "p");
const pem = (label: string) =>
  `-----BEGIN ${label}-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n-----END ${label}-----`;

cases("class 8: secrets that are not in env", [
  {
    name: "a Secret volume mounted into the task",
    files: {
      "pod.yaml": pod("p", {
        container: "volumeMounts: [{name: s, mountPath: /etc/creds, readOnly: true}]",
        spec: "volumes:\n  - name: s\n    secret:\n      secretName: db-creds",
      }),
    },
    plain: plainEnv,
    want: B,
  },
  {
    name: "a projected volume with a secret source",
    files: {
      "pod.yaml": pod("p", {
        container: "volumeMounts: [{name: s, mountPath: /creds, readOnly: true}]",
        spec: "volumes:\n  - name: s\n    projected:\n      sources:\n        - secret: {name: db-creds}",
      }),
    },
    plain: plainEnv,
    want: B,
  },
  {
    name: "a password in args (--password=...)",
    files: { "pod.yaml": pod("p", { container: 'args: ["--user=admin", "--password=Tr0ub4dor&3xK9q"]' }) },
    plain: { "pod.yaml": envPod("DB_PASSWORD", "Tr0ub4dor&3xK9q") },
    want: B,
  },
  {
    name: "a bearer token in a curl command",
    files: {
      "pod.yaml": pod("p").replace(
        'command: ["sh", "-c", "echo hello"]',
        'command: ["sh", "-c", "curl -H \'Authorization: Bearer ghp_0123456789abcdefghijABCDEFGHIJ012345\' https://api.github.com"]',
      ),
    },
    plain: { "pod.yaml": envPod("GITHUB_TOKEN", "ghp_0123456789abcdefghijABCDEFGHIJ012345") },
    want: B,
  },
  {
    name: "a URL with a password in args",
    files: {
      "pod.yaml": pod("p", { container: 'args: ["--db", "postgres://app:s3cr3tPassw0rd@db:5432/app"]' }),
    },
    plain: { "pod.yaml": envPod("DATABASE_URL", "postgres://app:s3cr3tPassw0rd@db:5432/app") },
    want: B,
  },
  ...[
    "PGPASSWORD",
    "MYSQL_PWD",
    "NPM_TOKEN",
    "MONGO_INITDB_ROOT_PASSWORD",
    "REDISCLI_AUTH",
    "VAULT_TOKEN",
    "DOCKER_AUTH_CONFIG",
  ].map((n) => ({
    name: `vendor credential name ${n} with a plain value`,
    files: { "pod.yaml": envPod(n, "hunter2-correct-horse") },
    plain: { "pod.yaml": envPod("PASSWORD", "hunter2-correct-horse") },
    want: B,
  })),
  ...[
    "RSA PRIVATE KEY",
    "PRIVATE KEY",
    "EC PRIVATE KEY",
    "OPENSSH PRIVATE KEY",
    "ENCRYPTED PRIVATE KEY",
    "DSA PRIVATE KEY",
  ].map((l) => ({
    name: `PEM ${l} in an innocently named variable`,
    files: { "pod.yaml": envPod("CONFIG_BLOB", pem(l)) },
    plain: { "pod.yaml": envPod("SSH_PRIVATE_KEY", pem("RSA PRIVATE KEY")) },
    want: B,
  })),
  {
    name: "Compose: a PEM key in command",
    files: {
      "compose.yaml": compose("app").replace(
        'command: ["sh", "-c", "echo hello"]',
        `command: ["sh", "-c", ${JSON.stringify(`printf '%s' '${pem("OPENSSH PRIVATE KEY")}' > /tmp/k`)}]`,
      ),
    },
    plain: {
      "compose.yaml": compose(
        "app",
        `environment:\n  SSH_KEY: ${JSON.stringify(pem("OPENSSH PRIVATE KEY"))}`,
      ),
    },
    want: blocked(undefined, "app"),
  },
]);

cases("class 8: names that are not credentials (no false alarms)", [
  { name: "MAX_TOKENS=4096", files: { "pod.yaml": envPod("MAX_TOKENS", "4096") }, want: passes },
  { name: "SORT_KEY=name", files: { "pod.yaml": envPod("SORT_KEY", "name") }, want: passes },
  {
    name: "POSTGRES_PASSWORD_FILE=/run/secrets/x",
    files: { "pod.yaml": envPod("POSTGRES_PASSWORD_FILE", "/run/secrets/x") },
    want: passes,
  },
  {
    name: "TOKENIZER=bpe, KEYBOARD=us, PRIMARY_KEY=id",
    files: {
      "pod.yaml": pod("p", {
        container:
          "env:\n  - {name: TOKENIZER, value: bpe}\n  - {name: KEYBOARD, value: us}\n  - {name: PRIMARY_KEY, value: id}",
      }),
    },
    want: passes,
  },
  {
    name: "Compose MAX_TOKENS and POSTGRES_PASSWORD_FILE",
    files: {
      "compose.yaml": compose(
        "app",
        "environment:\n  MAX_TOKENS: '4096'\n  POSTGRES_PASSWORD_FILE: /run/secrets/db_password",
      ),
    },
    want: passes,
  },
]);
