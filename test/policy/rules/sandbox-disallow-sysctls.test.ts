/**
 * sandbox-disallow-sysctls: no kernel parameter is set for a task (Docker `sysctls`, the Engine's
 * `HostConfig.Sysctls`, Compose `sysctls` as a list or a map, a pod's `securityContext.sysctls`), not even Pod
 * Security's safe set, unless the config's `allowed` list names it exactly.
 */
import { describe, expect, it } from "vitest";
import { rulesOf, scanJson, tempFiles, violationsOf } from "../../scan/helpers";
import { carrier, DOCKER, safeContainer, safePodSpec } from "../fixtures";
import { noted, type Outcome, type RunOptions, UNKNOWN_WIRE, validate, violated } from "../harness";

const RULE = "sandbox-disallow-sysctls";
type Obj = Record<string, unknown>;
const KINDS = ["Pod", "Deployment", "Job"] as const;

const mine = (o: Outcome) => o.violations.filter((v) => v.policy === RULE).map((v) => v.message);
const opts = (config?: object): RunOptions => (config === undefined ? {} : { config: { [RULE]: config } });
const docker = (sysctls: unknown, config?: object) =>
  validate(DOCKER, { ...safeContainer(), sysctls }, opts(config));
/** A hardened pod whose securityContext sets `sysctls`. */
function pod(kind: string, sysctls: unknown, config?: object): Outcome {
  const spec = safePodSpec();
  spec.securityContext = { ...(spec.securityContext as Obj), sysctls };
  return validate(carrier(kind).type, carrier(kind).build(spec), opts(config));
}
const ctl = (name: unknown, value = "1") => ({ name, value });

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
    ...["image: sandbox-busybox:1", 'user: "1000:1000"', "read_only: true", ...lines].map((l) => `    ${l}`),
    "",
  ].join("\n");
const body = (sysctls: Obj) =>
  JSON.stringify({
    Image: "sandbox-busybox:1",
    User: "1000:1000",
    HostConfig: { ReadonlyRootfs: true, Sysctls: sysctls },
  });
const manifest = (sysctls: Obj[]) => {
  const spec = safePodSpec();
  spec.securityContext = { ...(spec.securityContext as Obj), sysctls };
  return JSON.stringify({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "task" },
    spec: { selector: { matchLabels: { a: "b" } }, template: { metadata: { labels: { a: "b" } }, spec } },
  });
};

describe(RULE, () => {
  it("passes the hardened docker.Container and the hardened pods, and empty sysctl lists", () => {
    expect(violated(validate(DOCKER, safeContainer()))).not.toContain(RULE);
    expect(violated(docker({}))).not.toContain(RULE);
    for (const kind of KINDS) {
      expect(violated(validate(carrier(kind).type, carrier(kind).build(safePodSpec()))), kind).not.toContain(
        RULE,
      );
      expect(violated(pod(kind, [])), kind).not.toContain(RULE);
    }
  });

  it.each(["net.ipv4.ip_forward", "kernel.shm_rmid_forced", "net.ipv4.ping_group_range", "kernel.msgmax"])(
    "refuses docker.Container sysctl %s, naming it where it is written",
    (name) => {
      expect(mine(docker({ [name]: "1" }))).toEqual([
        `the workload sets the sysctl ${name} [sysctls.${name}]`,
      ]);
    },
  );

  it("names each sysctl of a docker.Container once", () => {
    expect(mine(docker({ "net.core.somaxconn": "1024", "kernel.sem": "250 32000 32 128" }))).toHaveLength(2);
  });

  it.each(KINDS)("refuses a %s that sets a sysctl, Pod Security's safe ones included", (kind) => {
    const m = mine(pod(kind, [ctl("kernel.shm_rmid_forced", "0"), ctl("net.core.somaxconn", "1024")]));
    const at = `${carrier(kind).specPath.join(".")}.securityContext.sysctls`;
    expect(m).toEqual([
      `the workload sets the sysctl kernel.shm_rmid_forced [${at}[0]]`,
      `the workload sets the sysctl net.core.somaxconn [${at}[1]]`,
    ]);
  });

  it.each([
    [
      "a Compose list",
      { "compose.yaml": compose("sysctls: [net.core.somaxconn=1024]") },
      "app",
      /sysctl net\.core\.somaxconn/,
    ],
    [
      "a Compose map",
      { "compose.yaml": compose("sysctls: { net.ipv4.tcp_syncookies: 0 }") },
      "app",
      /sysctl net\.ipv4\.tcp_syncookies/,
    ],
    [
      "an Engine API body",
      { "body.json": body({ "kernel.msgmax": "65536" }) },
      "container#1",
      /sysctl kernel\.msgmax \[HostConfig\.Sysctls\.kernel\.msgmax\]/,
    ],
    [
      "a Kubernetes Deployment",
      { "deploy.yaml": manifest([ctl("net.ipv4.ip_unprivileged_port_start", "0")]) },
      "task",
      /sysctl net\.ipv4\.ip_unprivileged_port_start/,
    ],
  ])("scan refuses %s that sets a sysctl", async (_, files, name, re) => {
    expect((await scanned(files, name)).messages).toEqual([expect.stringMatching(re)]);
  });

  it("lets through the names the config allows, exactly as written, and no others", () => {
    const cfg = { allowed: ["net.ipv4.ping_group_range"] };
    expect(violated(docker({ "net.ipv4.ping_group_range": "0 2147483647" }, cfg))).not.toContain(RULE);
    expect(violated(pod("Deployment", [ctl("net.ipv4.ping_group_range", "0 1")], cfg))).not.toContain(RULE);
    expect(mine(docker({ "net.ipv4.ping_group_range": "0 1", "net.ipv4.ip_forward": "1" }, cfg))).toEqual([
      "the workload sets the sysctl net.ipv4.ip_forward [sysctls.net.ipv4.ip_forward]",
    ]);
    expect(violated(docker({ "net.ipv4.ping_group_range_x": "1" }, cfg))).toContain(RULE);
    expect(violated(docker({ "net.ipv4.ping_group": "1" }, cfg))).toContain(RULE);
  });

  it("scan reads the allowed list from the pack config", async () => {
    const files = { "compose.yaml": compose("sysctls: [net.ipv4.ping_group_range=0 1, kernel.msgmax=1]") };
    const { messages } = await scanned(files, "app", { allowed: ["net.ipv4.ping_group_range"] });
    expect(messages).toEqual([expect.stringMatching(/sysctl kernel\.msgmax/)]);
    expect(
      (
        await scanned({ "body.json": body({ "net.ipv4.ping_group_range": "0 1" }) }, "container#1", {
          allowed: ["net.ipv4.ping_group_range"],
        })
      ).rules,
    ).not.toContain(RULE);
  });

  it("notes, without refusing, sysctls or a sysctl name not known until the update", () => {
    for (const o of [docker(UNKNOWN_WIRE), pod("Pod", UNKNOWN_WIRE), pod("Job", [ctl(UNKNOWN_WIRE)])]) {
      expect(violated(o)).not.toContain(RULE);
      expect(noted(o)).toContain(RULE);
    }
  });
});
