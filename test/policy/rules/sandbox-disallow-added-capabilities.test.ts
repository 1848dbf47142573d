/**
 * sandbox-disallow-added-capabilities: no container adds a Linux capability outside `allowed` (default
 * [NET_BIND_SERVICE], as Pod Security restricted; `[]` allows none). Adds are read the widest way any runtime reads
 * them (any case, `CAP_` optional, trimmed), so no spelling slips through; `exactNames` compares the raw string as
 * Pod Security does. Docker `capabilities.adds`, Compose `cap_add`, the Engine's `CapAdd`, Kubernetes
 * `capabilities.add` in every container list.
 */
import { describe, expect, it } from "vitest";
import { rulesOf, scanJson, tempFiles, violationsOf } from "../../scan/helpers";
import { carrier, DOCKER, safeContainer, safeK8sContainer, safePodSpec } from "../fixtures";
import { noted, type Outcome, type RunOptions, UNKNOWN_WIRE, validate, violated } from "../harness";

const RULE = "sandbox-disallow-added-capabilities";
type Obj = Record<string, unknown>;
const KINDS = ["Pod", "Deployment", "Job"] as const;

const mine = (o: Outcome) => o.violations.filter((v) => v.policy === RULE).map((v) => v.message);
const cfg = (config?: object): RunOptions => (config === undefined ? {} : { config: { [RULE]: config } });
const docker = (adds: unknown, config?: object) =>
  validate(DOCKER, { ...safeContainer(), capabilities: { adds, drops: ["ALL"] } }, cfg(config));
function podSpec(
  add: unknown,
  role: "containers" | "initContainers" | "ephemeralContainers" = "containers",
): Obj {
  const spec = safePodSpec();
  const c = safeK8sContainer(role === "containers" ? "task" : "extra");
  c.securityContext = { ...(c.securityContext as Obj), capabilities: { drop: ["ALL"], add } };
  if (role === "containers") spec.containers = [c];
  else spec[role] = [c];
  return spec;
}
const pod = (kind: string, add: unknown, config?: object) =>
  validate(carrier(kind).type, carrier(kind).build(podSpec(add)), cfg(config));

async function scanned(files: Record<string, string>, name: string, config?: object) {
  const dir = tempFiles({
    ...files,
    ...(config === undefined ? {} : { "cfg.json": JSON.stringify({ [RULE]: config }) }),
  });
  const args = [Object.keys(files)[0] as string, ...(config === undefined ? [] : ["--config", "cfg.json"])];
  const { report } = await scanJson(args, undefined, dir);
  expect(report.errors).toEqual([]);
  expect(report.resources.map((r) => r.name)).toContain(name);
  return {
    rules: rulesOf(report, name),
    messages: violationsOf(report, name).filter((m) => m.startsWith(RULE)),
  };
}
const compose = (...lines: string[]) =>
  [
    "services:",
    "  app:",
    ...[
      "image: sandbox-busybox:1",
      'user: "1000:1000"',
      "cap_drop: [ALL]",
      "security_opt: [no-new-privileges]",
      ...lines,
    ].map((l) => `    ${l}`),
    "",
  ].join("\n");
const body = (capAdd: unknown) =>
  JSON.stringify({
    Image: "sandbox-busybox:1",
    User: "1000:1000",
    HostConfig: { CapDrop: ["ALL"], CapAdd: capAdd, SecurityOpt: ["no-new-privileges"] },
  });
const manifest = (add: unknown) =>
  JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name: "task" }, spec: podSpec(add) });

describe(RULE, () => {
  it("passes the hardened docker.Container and the hardened pods", () => {
    expect(violated(validate(DOCKER, safeContainer()))).not.toContain(RULE);
    for (const kind of KINDS)
      expect(violated(validate(carrier(kind).type, carrier(kind).build(safePodSpec()))), kind).not.toContain(
        RULE,
      );
  });

  it.each([
    [["SYS_ADMIN"], "[SYS_ADMIN]"],
    [["NET_ADMIN"], "[NET_ADMIN]"],
    [["ALL"], "[ALL]"],
    [["cap_sys_ptrace"], "[cap_sys_ptrace]"],
    [[" net_raw "], "[net_raw]"],
    [["NET_BIND_SERVICE", "SYS_MODULE", "DAC_READ_SEARCH"], "[SYS_MODULE, DAC_READ_SEARCH]"],
  ])("refuses docker.Container adds %j, naming only the extra ones", (adds, shown) => {
    expect(mine(docker(adds))).toEqual([`container "fixture" adds capabilities ${shown}`]);
  });

  it.each(KINDS)("refuses a %s that adds capabilities, in any spelling, naming where", (kind) => {
    const at = `${carrier(kind).specPath.join(".")}.containers[0]`;
    expect(mine(pod(kind, ["SYS_ADMIN"]))).toEqual([
      `container "task" adds capabilities [SYS_ADMIN] [${at}]`,
    ]);
    expect(mine(pod(kind, ["CAP_NET_RAW", "sys_ptrace"]))).toEqual([
      `container "task" adds capabilities [CAP_NET_RAW, sys_ptrace] [${at}]`,
    ]);
  });

  it.each(["initContainers", "ephemeralContainers"] as const)("refuses an added capability in %s", (role) => {
    const o = validate(carrier("Pod").type, carrier("Pod").build(podSpec(["NET_ADMIN"], role)));
    expect(mine(o)).toEqual([
      expect.stringMatching(/^(init|ephemeral) container "extra" adds capabilities \[NET_ADMIN\]/),
    ]);
  });

  it.each([
    [
      "Compose cap_add",
      { "compose.yaml": compose("cap_add: [SYS_PTRACE]") },
      "app",
      /adds capabilities \[SYS_PTRACE\]/,
    ],
    [
      "an Engine body's CapAdd",
      { "body.json": body(["NET_ADMIN"]) },
      "container#1",
      /adds capabilities \[NET_ADMIN\]/,
    ],
    [
      "a Kubernetes manifest",
      { "pod.yaml": manifest(["SYS_ADMIN"]) },
      "task",
      /adds capabilities \[SYS_ADMIN\]/,
    ],
  ])("scan refuses %s", async (_, files, name, re) => {
    expect((await scanned(files, name)).messages).toEqual([expect.stringMatching(re)]);
  });

  it.each([[["NET_BIND_SERVICE"]], [["cap_net_bind_service"]], [["Net_Bind_Service"]], [[]], [undefined]])(
    "passes docker.Container adds %j (the default allowed set)",
    (adds) => {
      expect(violated(docker(adds))).not.toContain(RULE);
    },
  );

  it("passes Kubernetes NET_BIND_SERVICE and no add list, and scan passes it on every front", async () => {
    for (const kind of KINDS) {
      expect(violated(pod(kind, ["NET_BIND_SERVICE"])), kind).not.toContain(RULE);
      expect(violated(pod(kind, undefined)), kind).not.toContain(RULE);
    }
    expect(
      (await scanned({ "compose.yaml": compose("cap_add: [NET_BIND_SERVICE]") }, "app")).rules,
    ).not.toContain(RULE);
    expect(
      (await scanned({ "body.json": body(["CAP_NET_BIND_SERVICE"]) }, "container#1")).rules,
    ).not.toContain(RULE);
    expect((await scanned({ "pod.yaml": manifest(["NET_BIND_SERVICE"]) }, "task")).rules).not.toContain(RULE);
  });

  it("allowed: [] refuses every add, NET_BIND_SERVICE too", async () => {
    expect(mine(docker(["NET_BIND_SERVICE"], { allowed: [] }))).toEqual([
      `container "fixture" adds capabilities [NET_BIND_SERVICE]`,
    ]);
    expect(mine(pod("Deployment", ["NET_BIND_SERVICE"], { allowed: [] }))).toHaveLength(1);
    const files = { "compose.yaml": compose("cap_add: [NET_BIND_SERVICE]") };
    expect((await scanned(files, "app", { allowed: [] })).rules).toContain(RULE);
  });

  it("allowed names its set in any spelling, and replaces the default", () => {
    const config = { allowed: ["cap_sys_ptrace", "CHOWN"] };
    expect(violated(docker(["SYS_PTRACE", "chown"], config))).not.toContain(RULE);
    expect(violated(pod("Job", ["SYS_PTRACE"], config))).not.toContain(RULE);
    expect(mine(docker(["NET_BIND_SERVICE"], config))).toEqual([
      `container "fixture" adds capabilities [NET_BIND_SERVICE]`,
    ]);
  });

  it("exactNames compares the raw string, as Pod Security does", async () => {
    const config = { exactNames: true };
    expect(violated(pod("Pod", ["NET_BIND_SERVICE"], config))).not.toContain(RULE);
    expect(mine(pod("Pod", ["cap_net_bind_service"], config))).toEqual([
      `container "task" adds capabilities ["cap_net_bind_service"] outside [NET_BIND_SERVICE] (compared exactly, as Pod Security does) [spec.containers[0]]`,
    ]);
    expect(mine(docker([" NET_BIND_SERVICE"], config))).toEqual([
      expect.stringContaining('[" NET_BIND_SERVICE"]'),
    ]);
    expect(
      (await scanned({ "pod.yaml": manifest(["CAP_NET_BIND_SERVICE"]) }, "task", config)).rules,
    ).toContain(RULE);
  });

  it("notes, without refusing, an add list or entry not known until the update", () => {
    for (const o of [
      docker(UNKNOWN_WIRE),
      docker(["NET_BIND_SERVICE", UNKNOWN_WIRE]),
      pod("Pod", UNKNOWN_WIRE),
      pod("Job", [UNKNOWN_WIRE]),
    ]) {
      expect(violated(o)).not.toContain(RULE);
      expect(noted(o)).toContain(RULE);
    }
  });

  it("still refuses a known extra capability beside an entry not known yet", () => {
    const o = docker(["SYS_ADMIN", UNKNOWN_WIRE]);
    expect(mine(o)).toEqual([`container "fixture" adds capabilities [SYS_ADMIN]`]);
    expect(noted(o)).toContain(RULE);
  });
});
