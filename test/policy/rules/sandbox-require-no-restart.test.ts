/**
 * sandbox-require-no-restart: a task runs once. Docker restarts only when told (`restart` unset or `no` is none);
 * docker compose sends `deploy.restart_policy` in place of `restart` (getRestartPolicy); a bare Pod's absent
 * restartPolicy is Always. Controllers that restart by design are not judged.
 */
import { describe, expect, it } from "vitest";
import { rulesOf, scanJson, tempFiles, violationsOf } from "../../scan/helpers";
import { carrier, DOCKER, safeContainer, safePodSpec } from "../fixtures";
import { noted, type Outcome, UNKNOWN_WIRE, validate, violated } from "../harness";

const RULE = "sandbox-require-no-restart";
type Spec = Record<string, unknown>;

const mine = (o: Outcome) => o.violations.filter((v) => v.policy === RULE).map((v) => v.message);
const docker = (props: object, config?: object) =>
  validate(
    DOCKER,
    { ...safeContainer(), ...props },
    config === undefined ? {} : { config: { [RULE]: config } },
  );
function kube(kind: string, edit: (s: Spec) => void = () => {}, config?: object): Outcome {
  const s = safePodSpec();
  edit(s);
  const c = carrier(kind);
  return validate(c.type, c.build(s), config === undefined ? {} : { config: { [RULE]: config } });
}
const policy = (p: unknown) => (s: Spec) => {
  if (p === undefined) delete s.restartPolicy;
  else s.restartPolicy = p;
};

const COMPOSE_BASE = [
  "image: sandbox-busybox:1",
  'user: "1000:1000"',
  "read_only: true",
  "cap_drop: [ALL]",
  'security_opt: ["no-new-privileges:true"]',
  "network_mode: none",
  "mem_limit: 512m",
  "cpus: 1",
];
const compose = (...extra: string[]) =>
  `services:\n  app:\n${[...COMPOSE_BASE, ...extra].map((l) => `    ${l}`).join("\n")}\n`;
const body = (hostConfig: object) =>
  JSON.stringify({
    Image: "sandbox-busybox:1",
    User: "1000:1000",
    HostConfig: {
      CapDrop: ["ALL"],
      SecurityOpt: ["no-new-privileges"],
      ReadonlyRootfs: true,
      NetworkMode: "none",
      Memory: 536870912,
      NanoCpus: 1e9,
      PidsLimit: 64,
      ...hostConfig,
    },
  });
async function scanned(file: string, text: string, name: string) {
  const dir = tempFiles({ [file]: text });
  const { report } = await scanJson([file], undefined, dir);
  // The input was read, and as the resource named: a pass below is a verdict, not a miss.
  expect(report.errors).toEqual([]);
  expect(report.resources.map((r) => r.name)).toContain(name);
  return { rules: rulesOf(report, name), messages: violationsOf(report, name) };
}

describe(RULE, () => {
  it("passes the hardened docker.Container and the hardened Pod, Deployment and Job", () => {
    expect(violated(docker({}))).not.toContain(RULE);
    for (const kind of ["Pod", "Deployment", "Job", "CronJob"])
      expect(violated(kube(kind)), kind).not.toContain(RULE);
  });

  it.each([
    ["always", /restarts its containers \(restart always\)/],
    ["unless-stopped", /\(restart unless-stopped\)/],
    ["on-failure", /\(restart on-failure\)/],
  ])("refuses docker.Container restart %s", (restart, re) => {
    const m = mine(docker({ restart }));
    expect(m).toHaveLength(1);
    expect(m[0]).toMatch(re);
  });

  it.each([
    ["Pod", undefined, /restartPolicy always/],
    ["Pod", "Always", /restartPolicy always/],
    ["Pod", "OnFailure", /restartPolicy on-failure/],
    ["Job", "OnFailure", /restartPolicy on-failure/],
    ["CronJob", "OnFailure", /restartPolicy on-failure/],
  ])("refuses a %s with restartPolicy %s", (kind, p, re) => {
    const m = mine(kube(kind, policy(p)));
    expect(m).toHaveLength(1);
    expect(m[0]).toMatch(re);
  });

  it.each([
    ["restart: always", ["restart: always"], /restart always/],
    ["restart with retries", ['restart: "on-failure:3"'], /restart on-failure/],
    ["restart: unless-stopped", ["restart: unless-stopped"], /restart unless-stopped/],
    ["deploy.restart_policy any", ["deploy:", "  restart_policy:", "    condition: any"], /restart always/],
    [
      "deploy.restart_policy over restart: no",
      ['restart: "no"', "deploy:", "  restart_policy:", "    condition: on-failure"],
      /restart on-failure/,
    ],
  ])("scan refuses a Compose service with %s", async (_, extra, re) => {
    const { rules, messages } = await scanned("compose.yaml", compose(...extra), "app");
    expect(rules).toContain(RULE);
    expect(messages.find((m) => m.startsWith(RULE))).toMatch(re);
  });

  it.each([
    ["always", { Name: "always" }],
    ["on-failure with retries", { Name: "on-failure", MaximumRetryCount: 3 }],
  ])("scan refuses an Engine API body with RestartPolicy %s", async (_, rp) => {
    expect((await scanned("body.json", body({ RestartPolicy: rp }), "container#1")).rules).toContain(RULE);
  });

  it("scan refuses a Pod manifest with no restartPolicy, and passes it with Never", async () => {
    const pod = (s: Spec) =>
      JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name: "task" }, spec: s });
    const open = safePodSpec();
    delete open.restartPolicy;
    expect((await scanned("pod.yaml", pod(open), "task")).rules).toContain(RULE);
    expect((await scanned("pod.yaml", pod(safePodSpec()), "task")).rules).not.toContain(RULE);
  });

  it.each([
    ["restart unset", { restart: undefined }],
    ['restart "no"', { restart: "no" }],
    ['restart ""', { restart: "" }],
  ])("passes docker.Container %s (Docker never restarts by itself)", (_, props) => {
    expect(violated(docker(props))).not.toContain(RULE);
  });

  it.each([
    ["Deployment", "Always"],
    ["Deployment", undefined],
    ["StatefulSet", "Always"],
    ["DaemonSet", "Always"],
    ["ReplicaSet", "Always"],
  ])("does not judge a %s (restartPolicy %s): its controller restarts by design", (kind, p) => {
    expect(violated(kube(kind, policy(p)))).not.toContain(RULE);
  });

  it.each([
    ['restart: "no"', ['restart: "no"']],
    ["no restart key", []],
    [
      "deploy.restart_policy none over restart: always",
      ["restart: always", "deploy:", "  restart_policy:", "    condition: none"],
    ],
    [
      "a deploy.restart_policy with no condition over restart: always",
      ["restart: always", "deploy:", "  restart_policy:", "    max_attempts: 3"],
    ],
  ])("scan passes a Compose service with %s", async (_, extra) => {
    expect((await scanned("compose.yaml", compose(...extra), "app")).rules).not.toContain(RULE);
  });

  it.each([{ Name: "no" }, { Name: "" }])(
    "scan passes an Engine API body with RestartPolicy %j",
    async (rp) => {
      expect((await scanned("body.json", body({ RestartPolicy: rp }), "container#1")).rules).not.toContain(
        RULE,
      );
    },
  );

  describe("allowOnFailure", () => {
    it("accepts on-failure restarts on Docker and Kubernetes", () => {
      expect(violated(docker({ restart: "on-failure" }, { allowOnFailure: true }))).not.toContain(RULE);
      expect(violated(kube("Job", policy("OnFailure"), { allowOnFailure: true }))).not.toContain(RULE);
      expect(violated(kube("Pod", policy("OnFailure"), { allowOnFailure: true }))).not.toContain(RULE);
    });

    it("still refuses restarts that are not on failure", () => {
      expect(violated(docker({ restart: "always" }, { allowOnFailure: true }))).toContain(RULE);
      expect(violated(docker({ restart: "unless-stopped" }, { allowOnFailure: true }))).toContain(RULE);
      expect(violated(kube("Pod", policy("Always"), { allowOnFailure: true }))).toContain(RULE);
      expect(violated(kube("Pod", policy(undefined), { allowOnFailure: true }))).toContain(RULE);
    });
  });

  it("notes a restart policy not known until the update, on Docker and Kubernetes", () => {
    for (const o of [docker({ restart: UNKNOWN_WIRE }), kube("Pod", policy(UNKNOWN_WIRE))]) {
      expect(violated(o)).not.toContain(RULE);
      expect(noted(o)).toContain(RULE);
    }
  });
});
