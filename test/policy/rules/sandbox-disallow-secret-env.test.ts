/**
 * sandbox-disallow-secret-env (mission): no credential reaches a task, by its environment (Secret references,
 * credential names confirmed by the value, credential-shaped values, annotations copied in by the downward API), its
 * command line, what the engine runs or sends into it (probes, healthchecks, headers), files put into it and Secret
 * volumes it mounts. A Pulumi secret is seen only by the remediation, which puts a marker in its place for the
 * validation to report. Messages never hold the value.
 */
import { describe, expect, it } from "vitest";
import { BROKER_IMAGE, BROKER_RUN_DIR } from "../../../components/model";
import { rulesOf, scanJson, tempFiles } from "../../scan/helpers";
import { carrier, DOCKER, safeContainer, safePodSpec } from "../fixtures";
import { engineRun, noted, type Outcome, secret, UNKNOWN_WIRE, validate, violated } from "../harness";

const RULE = "sandbox-disallow-secret-env";
type Obj = Record<string, unknown>;
/** Sets one field (an edit of a fixture). */
const put = (o: Obj, key: string, value: unknown): void => {
  o[key] = value;
};
const KINDS = ["Pod", "Deployment", "Job"] as const;
const GH = "ghp_1234567890abcdefghijABCDEFGHIJ123456";
const PASSWORD = "Tr0ub4dor&3xyzzy";

const mine = (o: Outcome) => o.violations.filter((v) => v.policy === RULE).map((v) => v.message);
const opts = (config?: object) => (config === undefined ? {} : { config: { [RULE]: config } });
const docker = (props: Obj, config?: object) =>
  validate(DOCKER, { ...safeContainer(), ...props }, opts(config));
const withEnv = (entry: unknown) => docker({ envs: ["LANG=C.UTF-8", entry] });

/** Edits of a hardened pod: its spec, its first container, the pod template's metadata. */
type Edit = (spec: Obj, c: Obj, meta: Obj) => void;
function podProps(kind: string, edit: Edit): Obj {
  const spec = safePodSpec();
  const meta: Obj = { labels: { "sandbox.role": "task" }, annotations: {} };
  edit(spec, (spec.containers as Obj[])[0] as Obj, meta);
  return carrier(kind).build(spec, meta);
}
const kube = (kind: string, edit: Edit, config?: object) =>
  validate(carrier(kind).type, podProps(kind, edit), opts(config));
const env =
  (e: Obj): Edit =>
  (_, c) =>
    void (c.env as Obj[]).push(e);
const mount =
  (volume: Obj): Edit =>
  (s, c) => {
    (s.volumes as Obj[]).push({ name: "s", ...volume });
    (c.volumeMounts as Obj[]).push({ name: "s", mountPath: "/s" });
  };

async function scanned(files: Record<string, string>, name: string): Promise<string[]> {
  const dir = tempFiles(files);
  const { report } = await scanJson([Object.keys(files)[0] as string], undefined, dir);
  expect(report.resources.map((r) => r.name)).toContain(name);
  return rulesOf(report, name);
}
const SERVICE = ["image: sandbox-busybox:1", 'user: "1000:1000"', "read_only: true", "cap_drop: [ALL]"];
const HARDENED = [
  ...SERVICE,
  'security_opt: ["no-new-privileges:true"]',
  "network_mode: none",
  "mem_limit: 1g",
  "cpus: 1",
];
const compose = (lines: string[], top = "") =>
  `services:\n  app:\n${[...HARDENED, ...lines].map((l) => `    ${l}`).join("\n")}\n${top}`;
const HC = { CapDrop: ["ALL"], SecurityOpt: ["no-new-privileges"], ReadonlyRootfs: true };
const LIMITS = { NetworkMode: "none", Memory: 536870912, NanoCpus: 1e9, PidsLimit: 64 };
const body = (Env: string[]) =>
  JSON.stringify({ Image: "sandbox-busybox:1", User: "1000:1000", Env, HostConfig: { ...HC, ...LIMITS } });

describe(RULE, () => {
  it("passes the hardened docker.Container and the hardened pods (a fieldRef of the pod's name included)", () => {
    expect(violated(docker({}))).not.toContain(RULE);
    for (const kind of KINDS) expect(violated(kube(kind, () => {})), kind).not.toContain(RULE);
  });

  it.each([
    [`DB_PASSWORD=${PASSWORD}`, /variable DB_PASSWORD: its name contains "PASSWORD"/],
    [`GREETING=${GH}`, /variable GREETING: its value looks like a GitHub token/],
    ["AWS=AKIAIOSFODNN7EXAMPLE", /looks like an AWS access key id/],
    ["URL=https://user:hunter2pass@example.com/x", /URL with a password/],
    ["NPM=//registry.npmjs.org/:_authToken=abcd1234efgh5678ijkl", /"_authToken" setting/],
    ["GITHUB_TOKEN", /variable GITHUB_TOKEN: its name contains "TOKEN"/], // passed through from the host
    [`SANDBOX_BROKER_CRED_GITHUB=${GH}`, /a broker credential variable: only the secrets broker/],
  ])("refuses docker.Container envs %s, without printing the value", (entry, re) => {
    const m = mine(withEnv(entry));
    expect(m).toEqual([expect.stringMatching(re)]);
    if (entry.includes("=")) expect(m[0]).not.toContain(entry.slice(entry.indexOf("=") + 1));
  });

  const PEM =
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ==\n-----END OPENSSH PRIVATE KEY-----\n";
  it.each([
    [{ command: ["app", "--password=hunter22xx"] }, /command line: option --password is given/],
    [{ command: ["curl", "-u", "admin:s3cretpass", "https://x"] }, /-u is given a password/],
    [{ healthcheck: { tests: ["CMD", "mysql", "-phunter22xx"] } }, /on the healthcheck command/],
    [{ uploads: [{ file: "/u/.ssh/id_rsa", content: PEM }] }, /file \/u\/\.ssh\/id_rsa holding a PEM/],
  ])("refuses docker.Container with %j", (props, re) => {
    expect(mine(docker(props))).toEqual([expect.stringMatching(re)]);
  });

  describe("Pulumi secrets", () => {
    it("are redacted by the remediation and reported by the validation that follows, whatever the name", () => {
      const { props, outcome } = engineRun(DOCKER, { ...safeContainer(), envs: [secret("GREETING=hello")] });
      expect(mine(outcome)).toEqual([
        expect.stringMatching(/variable GREETING from a Pulumi secret \(the value/),
      ]);
      expect(JSON.stringify(props)).not.toContain("hello");
    });

    it("are reported when the resource marks its env as a secret output", () => {
      const aso = { additionalSecretOutputs: ["envs"] };
      const o = validate(DOCKER, { ...safeContainer(), envs: ["GREETING=hello"] }, aso);
      expect(mine(o)).toEqual([expect.stringMatching(/from a Pulumi secret/)]);
    });
  });

  const SKR = { name: "DB", valueFrom: { secretKeyRef: { name: "db", key: "pw" } } };
  const HEADER = { name: "Authorization", value: "Bearer abcdefghijklmnop1234567890" };
  const fromAnnotation: Edit = (_, c, meta) => {
    put(meta.annotations as Obj, "tok", GH);
    env({ name: "X", valueFrom: { fieldRef: { fieldPath: "metadata.annotations['tok']" } } })(_, c, meta);
  };
  const args: Edit = (_, c) => put(c, "args", ["--token", GH]);
  const probe: Edit = (_, c) =>
    put(c, "livenessProbe", { exec: { command: ["redis-cli", "-a", "hunter22xx"] } });
  const header: Edit = (_, c) => put(c, "readinessProbe", { httpGet: { port: 80, httpHeaders: [HEADER] } });
  const kubeFailing: [string, Edit, RegExp][] = [
    ["a secretKeyRef", env(SKR), /reads variable DB from Secret "db" \(secretKeyRef\)/],
    [
      "envFrom.secretRef",
      (_, c) => put(c, "envFrom", [{ secretRef: { name: "db" } }]),
      /every key of Secret "db"/,
    ],
    [
      "a credential name from a ConfigMap",
      env({ name: "DB_PASSWORD", valueFrom: { configMapKeyRef: {} } }),
      /"PASSWORD"/,
    ],
    ["a credential name, value unknown", env({ name: "DB_PASSWORD", value: UNKNOWN_WIRE }), /"PASSWORD"/],
    ["an annotation's token, by fieldRef", fromAnnotation, /variable X: its value looks like a GitHub token/],
    ["a token in args", args, /its command line: it contains a GitHub token/],
    ["an exec probe with a password", probe, /on the livenessProbe command/],
    ["an httpGet probe's bearer header", header, /is sent probe header Authorization/],
    ["a mounted Secret volume", mount({ secret: { secretName: "db" } }), /mounts Secret volume "s" at \/s/],
    ["a projected Secret", mount({ projected: { sources: [{ secret: { name: "db" } }] } }), /holds a Secret/],
    [
      "a Secrets Store CSI volume",
      mount({ csi: { driver: "secrets-store.csi.k8s.io" } }),
      /mounts Secret volume/,
    ],
  ];

  describe.each(KINDS)("on a %s", (kind) => {
    it.each(kubeFailing)("refuses %s", (_, edit, re) => {
      const m = mine(kube(kind, edit));
      expect(m).toHaveLength(1);
      expect(m[0]).toMatch(re);
      expect(m[0]).not.toContain(GH);
    });
  });

  it.each([
    ["PASSWORD_MIN_LENGTH=12"],
    ["SECRET_NAME=db"],
    ["X_PASSWORD_FILE=/run/secrets/x"],
    ["MAX_TOKENS=4096"],
    ["CONTEXT_TOKENS=8192"],
    ["PasswordAuthentication=no"],
    ["GOOGLE_APPLICATION_CREDENTIALS=/x.json"],
    ["SSH_AUTH_SOCK=/tmp/ssh-abc/agent.12"],
    ["TOKEN_URL=https://auth.example.com/token"],
    ["PUBLIC_KEY=ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl a@b"],
    ["API_TOKEN="],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Docker does not interpolate, the value is that text
    ["DB_PASSWORD=${DB_PASSWORD}"],
  ])("passes docker.Container envs %s", (entry) => {
    expect(violated(withEnv(entry))).not.toContain(RULE);
  });

  it.each([
    ["--token-file /run/secrets/t", ["app", "--token-file", "/run/secrets/t"]],
    ["--max-tokens 4096", ["app", "--max-tokens", "4096"]],
  ])("passes a command line with %s", (_, command) => {
    expect(violated(docker({ command }))).not.toContain(RULE);
  });

  it.each([
    ["envFrom.configMapRef", ((_, c) => put(c, "envFrom", [{ configMapRef: { name: "cfg" } }])) as Edit],
    ["a credential name that refers to another variable", env({ name: "DB_PASSWORD", value: "$(OTHER)" })],
    [
      "an unmounted Secret volume",
      ((s) => void (s.volumes as Obj[]).push({ name: "s", secret: {} })) as Edit,
    ],
  ])("passes %s", (_, edit) => {
    for (const kind of KINDS) expect(violated(kube(kind, edit)), kind).not.toContain(RULE);
  });

  describe("the secrets broker", () => {
    const broker = {
      ...{
        image: BROKER_IMAGE,
        user: "1000:1000",
        readOnly: true,
        memory: 128,
        cpus: "0.5",
        networkMode: "none",
      },
      tmpfs: { [BROKER_RUN_DIR]: "size=1m", "/tmp": "size=1m" },
      envs: [`SANDBOX_BROKER_CRED_GITHUB=${GH}`],
      labels: [{ label: "sandbox.role", value: "broker" }],
    };
    it("may hold its own credential variables, as its image runs", () => {
      expect(violated(validate(DOCKER, broker))).not.toContain(RULE);
    });

    it("is no broker with a command of its own, and other credentials are refused in it", () => {
      expect(violated(validate(DOCKER, { ...broker, command: ["sh"] }))).toContain(RULE);
      const more = { ...broker, envs: [...broker.envs, `GITHUB_TOKEN=${GH}`] };
      expect(mine(validate(DOCKER, more))).toContainEqual(expect.stringMatching(/variable GITHUB_TOKEN/));
    });
  });

  it("allowedNames accepts a name known to hold no credential, never a Secret reference", () => {
    const cfg = { allowedNames: ["DB_PASSWORD", "DB"] };
    expect(violated(docker({ envs: [`DB_PASSWORD=${PASSWORD}`] }, cfg))).not.toContain(RULE);
    expect(violated(kube("Pod", env(SKR), cfg))).toContain(RULE);
    expect(violated(docker({ envs: [`OTHER_PASSWORD=${PASSWORD}`] }, cfg))).toContain(RULE);
  });

  it.each([
    ["a docker.Container env list", () => docker({ envs: UNKNOWN_WIRE })],
    ["a docker.Container env entry", () => withEnv(UNKNOWN_WIRE)],
    ["a Kubernetes env list", () => kube("Pod", (_, c) => put(c, "env", UNKNOWN_WIRE))],
    ["a plain variable's value", () => kube("Job", env({ name: "GREETING", value: UNKNOWN_WIRE }))],
  ])("notes %s not known until the update", (_, run) => {
    const o = run();
    expect(violated(o)).not.toContain(RULE);
    expect(noted(o)).toContain(RULE);
  });

  describe("scan", () => {
    it.each([
      ["a credential in environment", compose(["environment:", `  DB_PASSWORD: "${PASSWORD}"`])],
      ["a credential passed through from the host", compose(["environment:", "  GITHUB_TOKEN:"])],
      [
        "a Compose secret (at /run/secrets)",
        compose(["secrets: [db]"], "secrets:\n  db:\n    file: ./db.txt\n"),
      ],
      ["a password on the command line", compose(['command: ["app", "--password=hunter22xx"]'])],
    ])("refuses a Compose service with %s", async (_, text) => {
      expect(await scanned({ "compose.yaml": text, "db.txt": "pw" }, "app")).toContain(RULE);
    });

    it("refuses an Engine API body with a token in Env, passes one without", async () => {
      expect(await scanned({ "body.json": body([`GITHUB_TOKEN=${GH}`]) }, "container#1")).toContain(RULE);
      const safe = body(["LANG=C.UTF-8", "PASSWORD_MIN_LENGTH=12"]);
      expect(await scanned({ "body.json": safe }, "container#1")).not.toContain(RULE);
    });

    it("refuses a Job manifest with a secretKeyRef, passes the hardened one and a safe Compose service", async () => {
      const meta = { apiVersion: "batch/v1", kind: "Job", metadata: { name: "task" } };
      const job = (edit: Edit) => JSON.stringify({ ...podProps("Job", edit), ...meta });
      expect(await scanned({ "job.yaml": job(env(SKR)) }, "task")).toContain(RULE);
      expect(await scanned({ "job.yaml": job(() => {}) }, "task")).not.toContain(RULE);
      const safe = compose(["environment:", "  PASSWORD_MIN_LENGTH: 12"]);
      expect(await scanned({ "compose.yaml": safe }, "app")).not.toContain(RULE);
    });
  });
});
