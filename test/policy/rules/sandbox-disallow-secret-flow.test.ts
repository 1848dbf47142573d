/**
 * sandbox-disallow-secret-flow (stack rule): no secret reaches a task. What a stack policy can see of a flow: a task
 * input computed from a secret-producing resource (property dependencies), an input the program marked secret, a
 * value equal to a Secret's data or a generated password in the stack, the marker the secret-env remediation leaves
 * where a Pulumi secret was, and (Kubernetes) a Secret volume mounted into a container. Only the genuine secrets
 * broker may hold credentials, in its credential variables, and a broker without routes is refused.
 */
import { describe, expect, it } from "vitest";
import { BROKER_IMAGE, brokerSpec, resolveProject } from "../../../components/model";
import { REDACTED_SECRET } from "../../../policy/sources/lenient";
import { scanJson, tempFiles } from "../../scan/helpers";
import { carrier, copy, DOCKER, first, safeContainer, safePodSpec } from "../fixtures";
import { type StackFixture, UNKNOWN_WIRE, validateStack, violated } from "../harness";

const RULE = "sandbox-disallow-secret-flow";
type Obj = Record<string, unknown>;
type Deps = Record<string, string[]>;
const PASSWORD = "s3cr3t-Pa55w0rd-xyz";
const TOKEN = "tok-0123456789";
const KEYB = "bbbbbbbbbbbb-secret";
const PEM = "-----BEGIN PRIVATE KEY-----abc";

const fx = (type: string, name: string, props: Obj, extra: Partial<StackFixture> = {}): StackFixture => ({
  type,
  name,
  props,
  ...extra,
});
const PW = fx("random:index/randomPassword:RandomPassword", "pw", { length: 24, result: PASSWORD });
const data = { b: Buffer.from(KEYB).toString("base64") };
const SECRET = fx("kubernetes:core/v1:Secret", "creds", { stringData: { token: TOKEN }, data });
const KEY = fx("tls:index/privateKey:PrivateKey", "key", { algorithm: "ED25519", privateKeyPem: PEM });
const VAULT = fx(
  "custom:index:Vault",
  "vault",
  { out: "vault-issued-9f8e7d" },
  { additionalSecretOutputs: ["out"] },
);

const mine = (fixtures: StackFixture[], config: Obj = {}) =>
  validateStack(fixtures, { [RULE]: config })
    .violations.filter((v) => v.policy === RULE)
    .map((v) => v.message);
const task = (extra: Obj = {}, dependsOn?: Deps) =>
  fx(DOCKER, "task", { ...safeContainer(), ...extra }, dependsOn === undefined ? {} : { dependsOn });
function pod(edit: (s: Obj, c: Obj) => void = () => {}, kind = "Pod"): StackFixture {
  const s = safePodSpec();
  edit(s, first(s));
  return fx(carrier(kind).type, "p", carrier(kind).build(s));
}
const env = (name: string, value: string) => (_s: Obj, c: Obj) => {
  (c.env as Obj[]).push({ name, value });
};
const mountSecret = (s: Obj, c: Obj) => {
  (s.volumes as Obj[]).push({ name: "creds", secret: { secretName: "creds" } });
  (c.volumeMounts as Obj[]).push({ name: "creds", mountPath: "/creds", readOnly: true });
};

const route = { upstream: "https://api.example.com", paths: ["/**"], credential: { secret: "gh" } };
const project = resolveProject({
  name: "demo",
  budget: { monthlyCapUsd: 100 },
  broker: { routes: { gh: route } },
  templates: { t: { image: "x:1", broker: ["gh"] } },
});
const brokerConfig = brokerSpec(project, "demo-net")?.config ?? "";
/** The broker as its image runs it: no command or mounts of its own, memory for its runtime files and /tmp. */
function broker(extra: Obj = {}, dependsOn?: Deps, conf = brokerConfig): StackFixture {
  const { command: _c, mounts: _m, ...c } = copy(safeContainer());
  const props = {
    ...c,
    image: BROKER_IMAGE,
    tmpfs: { "/run/broker": "rw,noexec,nosuid,size=8m", "/tmp": "rw,noexec,nosuid,size=8m" },
    labels: [
      { label: "sandbox.project", value: "demo" },
      { label: "sandbox.role", value: "broker" },
    ],
    envs: [`SANDBOX_BROKER_CONFIG=${conf}`, `SANDBOX_BROKER_CRED_GH=${PASSWORD}`],
    ...extra,
  };
  return fx(DOCKER, "broker", props, dependsOn === undefined ? {} : { dependsOn });
}
const computed = (who: string, field: string, f: StackFixture) =>
  `${who}: ${field} is computed from ${f.type} "${f.name}", which produces a secret`;

describe(RULE, () => {
  it("passes the hardened docker.Container and the hardened Pod, Deployment and Job beside the stack's secrets", () => {
    const stack = [
      PW,
      SECRET,
      KEY,
      VAULT,
      task(),
      pod(),
      pod(undefined, "Deployment"),
      pod(undefined, "Job"),
    ];
    expect(violated(validateStack(stack))).not.toContain(RULE);
  });

  it.each([
    ["envs", PW],
    ["command", SECRET],
    ["labels", VAULT],
    ["mounts", KEY],
    ["uploads", PW],
    ["entrypoints", PW],
  ])("refuses a container whose %s is computed from a secret-producing resource", (field, source) => {
    expect(mine([source, task({}, { [field]: [source.name] })])).toEqual([
      computed('Container "task"', field, source),
    ]);
  });

  it("refuses a pod carrier whose spec is computed from a Secret", () => {
    const j = { ...pod(undefined, "Job"), dependsOn: { spec: ["creds"] } };
    expect(mine([SECRET, j])).toEqual([computed('Job "p"', "spec", SECRET)]);
  });

  it("refuses a task input the program marked secret", () => {
    expect(mine([{ ...task(), additionalSecretOutputs: ["envs"] }])).toEqual([
      'Container "task": envs is marked secret (additionalSecretOutputs)',
    ]);
  });

  it.each([
    ["an env entry", PW, { envs: ["LANG=C", `PASS=${PASSWORD}`] }, "envs[1]", 'RandomPassword "pw"'],
    [
      "a command argument",
      PW,
      { command: ["sh", "-c", `login ${PASSWORD}`] },
      "command[2]",
      'RandomPassword "pw"',
    ],
    [
      "an upload",
      PW,
      { uploads: [{ file: "/job/x", content: PASSWORD }] },
      "uploads[0].content",
      'RandomPassword "pw"',
    ],
    ["a private key", KEY, { envs: [`KEY=${PEM}`] }, "envs[0]", 'PrivateKey "key"'],
    [
      "a secret output",
      VAULT,
      { labels: [{ label: "t", value: "vault-issued-9f8e7d" }] },
      "labels[0].value",
      'Vault "vault" output out',
    ],
  ])("refuses the value of a stack secret in %s, without showing it", (_, source, extra, where, what) => {
    const m = mine([source, task(extra)]);
    expect(m).toEqual([`Container "task": ${where} holds the value of ${what} (the value is not shown)`]);
    expect(m.join()).not.toContain(PASSWORD);
  });

  it.each([
    ["stringData", TOKEN, 'Secret "creds" key token'],
    ["base64 data", KEYB, 'Secret "creds" key b'],
  ])("refuses a pod env value equal to a Secret's %s", (_, value, what) => {
    expect(mine([SECRET, pod(env("T", value))])).toEqual([
      `Pod "p": spec.containers[0].env[2].value holds the value of ${what} (the value is not shown)`,
    ]);
  });

  it("refuses the marker the secret-env remediation leaves where a Pulumi secret was", () => {
    const held = (where: string) =>
      `Container "task": ${where} held a Pulumi secret (redacted by the pack; the value is not shown)`;
    expect(mine([task({ envs: [`X=${REDACTED_SECRET}`] })])).toEqual([held("envs[0]")]);
    const mounts = [{ type: "bind", source: REDACTED_SECRET, target: "/x" }];
    expect(mine([task({ mounts })])).toEqual([held("mounts[0].source")]);
  });

  it("refuses a Secret volume mounted into a task container", () => {
    expect(mine([pod(mountSecret)])).toEqual(['Pod "p": task mounts Secret volume "creds"']);
  });

  describe("the secrets broker", () => {
    it("passes the genuine broker holding its credential in its credential variable", () => {
      expect(mine([PW, broker({}, { envs: ["pw"] })])).toEqual([]);
    });
    it("refuses a broker without routes", () => {
      expect(mine([broker({}, undefined, "global\n")])).toEqual([
        'Container "broker": the secrets broker has no routes (or its configuration is not in the stack), so no credential of it can be used',
      ]);
    });
    it("refuses a container labelled as the broker that runs a command of its own", () => {
      expect(mine([PW, broker({ command: ["sh", "-c", "env"] }, { envs: ["pw"] })])).toEqual([
        computed('Container "broker"', "envs", PW),
        'Container "broker": envs[1] holds the value of RandomPassword "pw" (the value is not shown)',
      ]);
    });
    it("refuses the credential in another variable, or in the genuine broker's labels", () => {
      const other = [`SANDBOX_BROKER_CONFIG=${brokerConfig}`, `SANDBOX_BROKER_X=${PASSWORD}`];
      expect(mine([PW, broker({ envs: other })])).toEqual([
        expect.stringContaining("envs[1] holds the value"),
      ]);
      expect(mine([PW, broker({}, { labels: ["pw"] })])).toEqual([
        computed('Container "broker"', "labels", PW),
      ]);
    });
  });

  describe("false-deny controls", () => {
    const NET = fx("docker:index/network:Network", "net", {});
    const shortPw = fx(PW.type, "pw", { result: "short" });
    const unmounted = pod((s) => (s.volumes as Obj[]).push({ name: "c", secret: { secretName: "creds" } }));
    it.each([
      ["computed from a resource that produces no secret", [NET, task({}, { envs: ["net"] })]],
      ["with a secret-derived input that is not task-facing (image)", [PW, task({}, { image: ["pw"] })]],
      ["with a value too short to be told from text", [shortPw, task({ envs: ["X=short"] })]],
      ["with a Secret volume no container mounts", [unmounted]],
    ])("passes a task %s", (_, stack) => {
      expect(mine(stack)).toEqual([]);
    });

    it("passes a role named in allowedRoles, and only that role", () => {
      const stack = [PW, task({}, { envs: ["pw"] })];
      expect(mine(stack, { allowedRoles: ["task"] })).toEqual([]);
      expect(mine(stack, { allowedRoles: ["proxy"] })).toHaveLength(1);
    });
  });

  it("still judges the dependencies of an env list not known until the update", () => {
    expect(mine([PW, task({ envs: UNKNOWN_WIRE })])).toEqual([]);
    expect(mine([PW, task({ envs: UNKNOWN_WIRE }, { envs: ["pw"] })])).toHaveLength(1);
  });

  describe("scan of a stack export", () => {
    const SIG = "4dabf18193072939515e22adb298388d";
    const urn = (f: StackFixture) => `urn:pulumi:dev::sandbox::${f.type}::${f.name}`;
    async function flows(fixtures: StackFixture[], deps: Record<string, Deps> = {}) {
      const resources = fixtures.map((f) => ({
        urn: urn(f),
        custom: true,
        type: f.type,
        inputs: f.props,
        ...(deps[f.name] === undefined ? {} : { propertyDependencies: deps[f.name] }),
      }));
      const dir = tempFiles({ "state.json": JSON.stringify({ version: 3, deployment: { resources } }) });
      const { report } = await scanJson(["state.json"], undefined, dir);
      expect(report.errors).toEqual([]);
      return report.findings.filter((f) => f.ruleId === RULE).map((f) => `${f.resource.name}: ${f.message}`);
    }
    const pw = fx(PW.type, "pw", { length: 24 });

    it("refuses env computed from a password, and a secret in the task's env; passes the plain task", async () => {
      expect(await flows([pw, task()], { task: { envs: [urn(pw)] } })).toEqual([
        `task: ${computed('Container "task"', "envs", pw)}`,
      ]);
      const sealed = { [SIG]: "1b47061264138c4ac30d75fd1eb44270", ciphertext: "AAAA" };
      expect(await flows([task({ envs: ["LANG=C.UTF-8", sealed] })])).toEqual([
        'task: Container "task": envs[1] held a Pulumi secret (redacted by the pack; the value is not shown)',
      ]);
      expect(await flows([pw, task()])).toEqual([]);
    });

    it("refuses a Secret volume mounted into a Pod", async () => {
      expect(await flows([pod(mountSecret)])).toEqual(['p: Pod "p": task mounts Secret volume "creds"']);
    });
  });

  it.each([
    [
      "the healthcheck the daemon runs inside the task",
      { healthcheck: { tests: ["CMD", "sh", "-c", `echo ${PASSWORD}`] } },
      "healthcheck",
    ],
    ["the hostname the task reads", { hostname: PASSWORD }, "hostname"],
    ["an /etc/hosts entry", { hosts: [{ host: PASSWORD, ip: "10.0.0.9" }] }, "hosts"],
  ])("refuses a generated password in %s, by value and by dependency", (_, extra, f) => {
    expect(mine([PW, task(extra)]).join("\n")).toMatch(new RegExp(f));
    expect(mine([PW, task({}, { [f]: ["pw"] })]).join("\n")).toMatch(new RegExp(`${f} is computed from`));
  });

  it("passes a password in the log driver's options, which the daemon holds and the task never sees", () => {
    expect(mine([PW, task({ logDriver: "splunk", logOpts: { "splunk-token": PASSWORD } })])).toEqual([]);
  });
});
