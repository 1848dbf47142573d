/**
 * sandbox-disallow-host-namespaces: no workload shares the host's network, PID, IPC, user, cgroup or UTS namespace
 * (Kubernetes hostNetwork/hostPID/hostIPC; Docker `host` modes in networkMode, pidMode, ipcMode, usernsMode,
 * cgroupnsMode, utsMode and their Compose and Engine spellings) or joins another container's (`container:<id>`,
 * Compose `service:<name>`, and ipc `shareable`, which lets others join it).
 */
import { describe, expect, it } from "vitest";
import { rulesOf, scanJson, tempFiles, violationsOf } from "../../scan/helpers";
import { carrier, DOCKER, safeContainer, safePodSpec } from "../fixtures";
import { noted, type Outcome, UNKNOWN_WIRE, validate, violated } from "../harness";

const RULE = "sandbox-disallow-host-namespaces";
type Obj = Record<string, unknown>;
const KINDS = ["Pod", "Deployment", "Job"] as const;

const mine = (o: Outcome) => o.violations.filter((v) => v.policy === RULE).map((v) => v.message);
const docker = (props: Obj) => validate(DOCKER, { ...safeContainer(), ...props });
const pod = (kind: string, fields: Obj) =>
  validate(carrier(kind).type, carrier(kind).build({ ...safePodSpec(), ...fields }));

async function scanned(files: Record<string, string>, name: string) {
  const dir = tempFiles(files);
  const { report } = await scanJson([Object.keys(files)[0] as string], undefined, dir);
  expect(report.errors).toEqual([]);
  expect(report.resources.map((r) => r.name)).toContain(name);
  return {
    rules: rulesOf(report, name),
    messages: violationsOf(report, name).filter((m) => m.startsWith(RULE)),
  };
}
const service = (name: string, ...lines: string[]) => [
  `  ${name}:`,
  ...["image: sandbox-busybox:1", 'user: "1000:1000"', "read_only: true", ...lines].map((l) => `    ${l}`),
];
const compose = (...lines: string[]) => ["services:", ...service("app", ...lines), ""].join("\n");
const body = (hc: Obj, top: Obj = {}) =>
  JSON.stringify({
    Image: "sandbox-busybox:1",
    User: "1000:1000",
    ...top,
    HostConfig: { ReadonlyRootfs: true, CapDrop: ["ALL"], SecurityOpt: ["no-new-privileges"], ...hc },
  });
const manifest = (fields: Obj) =>
  JSON.stringify({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "task" },
    spec: {
      selector: { matchLabels: { a: "b" } },
      template: { metadata: { labels: { a: "b" } }, spec: { ...safePodSpec(), ...fields } },
    },
  });

describe(RULE, () => {
  it("passes the hardened docker.Container and the hardened pods", () => {
    expect(violated(validate(DOCKER, safeContainer()))).not.toContain(RULE);
    for (const kind of KINDS)
      expect(violated(validate(carrier(kind).type, carrier(kind).build(safePodSpec()))), kind).not.toContain(
        RULE,
      );
  });

  it.each([
    ["networkMode", "network"],
    ["pidMode", "PID"],
    ["ipcMode", "IPC"],
    ["usernsMode", "user"],
    ["cgroupnsMode", "cgroup"],
  ])("refuses docker.Container %s: host", (key, what) => {
    expect(mine(docker({ [key]: "host" }))).toEqual([
      `the workload shares the host's ${what} namespace (${key}) [${key}]`,
    ]);
  });

  it.each([
    ["networkMode", "container:builder"],
    ["pidMode", "container:builder"],
    ["ipcMode", "container:builder"],
    ["ipcMode", "shareable"],
  ])("refuses docker.Container %s %s (another container's namespace)", (key, mode) => {
    expect(mine(docker({ [key]: mode }))).toEqual([`the workload joins another namespace (${key} ${mode})`]);
  });

  it.each(KINDS)("refuses a %s with hostNetwork, hostPID or hostIPC, naming where", (kind) => {
    const at = carrier(kind).specPath.join(".");
    const keys: [string, string][] = [
      ["hostNetwork", "network"],
      ["hostPID", "PID"],
      ["hostIPC", "IPC"],
    ];
    for (const [key, what] of keys)
      expect(mine(pod(kind, { [key]: true })), key).toEqual([
        `the workload shares the host's ${what} namespace (${key}) [${at}.${key}]`,
      ]);
    expect(mine(pod(kind, { hostNetwork: true, hostPID: true, hostIPC: true }))).toHaveLength(3);
  });

  it.each([
    ["network_mode: host", /host's network namespace \(networkMode\)/],
    ["pid: host", /host's PID namespace \(pidMode\)/],
    ["ipc: host", /host's IPC namespace \(ipcMode\)/],
    ["ipc: shareable", /joins another namespace \(ipcMode shareable\)/],
    ["uts: host", /host's UTS namespace \(utsMode\)/],
    ["userns_mode: host", /host's user namespace \(usernsMode\)/],
    ["cgroup: host", /host's cgroup namespace \(cgroupnsMode\)/],
    ["network_mode: container:builder", /joins another namespace \(networkMode container:builder\)/],
  ])("scan refuses a Compose service with %s", async (line, re) => {
    expect((await scanned({ "compose.yaml": compose(line) }, "app")).messages).toEqual([
      expect.stringMatching(re),
    ]);
  });

  it.each([
    ["network_mode", /networkMode service:web/],
    ["pid", /pidMode service:web/],
    ["ipc", /ipcMode service:web/],
  ])("scan refuses a Compose service whose %s joins another service", async (key, re) => {
    const text = ["services:", ...service("web"), ...service("app", `${key}: service:web`), ""].join("\n");
    expect((await scanned({ "compose.yaml": text }, "app")).messages).toEqual([expect.stringMatching(re)]);
  });

  it("scan refuses Compose services on the engine's host network under another name or through a service", async () => {
    const external = [
      ...["services:", ...service("app", "networks: [outside]")],
      ...["networks:", "  outside:", "    name: host", "    external: true", ""],
    ].join("\n");
    expect((await scanned({ "compose.yaml": external }, "app")).messages).toEqual([
      expect.stringMatching(/host's network namespace/),
    ]);
    const viaService = [
      ...[
        "services:",
        ...service("web", "network_mode: host"),
        ...service("app", "network_mode: service:web"),
      ],
      "",
    ].join("\n");
    expect((await scanned({ "compose.yaml": viaService }, "app")).messages).toEqual([
      expect.stringMatching(/host's network namespace/),
    ]);
  });

  it.each([
    ["NetworkMode host", body({ NetworkMode: "host" }), /host's network namespace/],
    [
      "an endpoint on the network named host",
      body({}, { NetworkingConfig: { EndpointsConfig: { host: {} } } }),
      /host's network namespace/,
    ],
    ["PidMode host", body({ PidMode: "host" }), /host's PID namespace/],
    [
      "IpcMode container:<id>",
      body({ IpcMode: "container:abc" }),
      /joins another namespace \(container:abc\)/,
    ],
    ["UTSMode host", body({ UTSMode: "host" }), /host's UTS namespace/],
    ["UsernsMode host", body({ UsernsMode: "host" }), /host's user namespace/],
    ["CgroupnsMode host", body({ CgroupnsMode: "host" }), /host's cgroup namespace/],
  ])("scan refuses an Engine API body with %s", async (_, text, re) => {
    expect((await scanned({ "body.json": text }, "container#1")).messages).toEqual([
      expect.stringMatching(re),
    ]);
  });

  it("scan refuses a Kubernetes Deployment manifest with hostPID", async () => {
    expect((await scanned({ "deploy.yaml": manifest({ hostPID: true }) }, "task")).messages).toEqual([
      "sandbox-disallow-host-namespaces: the workload shares the host's PID namespace (hostPID) [spec.template.spec.hostPID]",
    ]);
  });

  it.each([
    ["networkMode", ["none", "bridge", "sandbox-net", "hostile", ""]],
    ["pidMode", ["", "private"]],
    ["ipcMode", ["private", "none", ""]],
    ["usernsMode", [""]],
    ["cgroupnsMode", ["private"]],
  ])("passes docker.Container %s values that stay private", (key, values) => {
    for (const v of values) expect(violated(docker({ [key]: v })), `${key}=${v}`).not.toContain(RULE);
  });

  it.each([
    ["hostNetwork/hostPID/hostIPC false", { hostNetwork: false, hostPID: false, hostIPC: false }],
    ["a process namespace shared among the pod's own containers", { shareProcessNamespace: true }],
    ["hostUsers true (the default)", { hostUsers: true }],
    ["hostUsers false", { hostUsers: false }],
  ])("passes a pod with %s", (_, fields) => {
    for (const kind of KINDS) expect(violated(pod(kind, fields)), kind).not.toContain(RULE);
  });

  it.each([
    ["Compose", { "compose.yaml": compose("network_mode: none", "ipc: private", "cgroup: private") }, "app"],
    [
      "an Engine body",
      { "body.json": body({ NetworkMode: "none", IpcMode: "private", CgroupnsMode: "private" }) },
      "container#1",
    ],
    ["a Kubernetes manifest", { "deploy.yaml": manifest({ hostNetwork: false, hostPID: false }) }, "task"],
  ])("scan passes private namespaces written out in %s", async (_, files, name) => {
    expect((await scanned(files, name)).rules).not.toContain(RULE);
  });

  it("notes, without refusing, namespace modes not known until the update", () => {
    for (const o of [
      docker({ networkMode: UNKNOWN_WIRE }),
      docker({ pidMode: UNKNOWN_WIRE }),
      docker({ usernsMode: UNKNOWN_WIRE }),
      pod("Pod", { hostPID: UNKNOWN_WIRE }),
      pod("Deployment", { hostNetwork: UNKNOWN_WIRE }),
    ]) {
      expect(violated(o)).not.toContain(RULE);
      expect(noted(o)).toContain(RULE);
    }
  });

  it("still refuses a known host namespace beside one not known yet", () => {
    expect(mine(docker({ pidMode: "host", ipcMode: UNKNOWN_WIRE }))).toEqual([
      "the workload shares the host's PID namespace (pidMode) [pidMode]",
    ]);
    expect(mine(pod("Job", { hostIPC: true, hostPID: UNKNOWN_WIRE }))).toEqual([
      "the workload shares the host's IPC namespace (hostIPC) [spec.template.spec.hostIPC]",
    ]);
  });
});
