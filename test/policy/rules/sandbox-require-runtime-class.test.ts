/**
 * sandbox-require-runtime-class: when runtimes are configured, a workload names one of them. Docker's `runtime`
 * (Engine `HostConfig.Runtime`, Compose `runtime`) is a daemon runtime name, or a containerd shim's name
 * (`io.containerd.runsc.v1` is runsc); Kubernetes' `runtimeClassName` names a RuntimeClass, taken as written.
 */
import { describe, expect, it } from "vitest";
import { rulesOf, scanJson, tempFiles, violationsOf } from "../../scan/helpers";
import { carrier, DOCKER, safeContainer, safePodSpec } from "../fixtures";
import { noted, type Outcome, type RunOptions, UNKNOWN_WIRE, validate, violated } from "../harness";

const RULE = "sandbox-require-runtime-class";
type Spec = Record<string, unknown>;

const mine = (o: Outcome) => o.violations.filter((v) => v.policy === RULE).map((v) => v.message);
const opts = (allowed?: string[]): RunOptions =>
  allowed === undefined ? {} : { config: { [RULE]: { allowed } } };
const docker = (props: object, allowed?: string[], extra: RunOptions = {}) =>
  validate(DOCKER, { ...safeContainer(), ...props }, { ...opts(allowed), ...extra });
function kube(kind: string, rc: unknown, allowed?: string[], extra: RunOptions = {}): Outcome {
  const s: Spec = safePodSpec();
  if (rc !== undefined) s.runtimeClassName = rc;
  const c = carrier(kind);
  return validate(c.type, c.build(s), { ...opts(allowed), ...extra });
}

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
const pod = (runtimeClassName?: string) =>
  JSON.stringify({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "task" },
    spec: { ...safePodSpec(), ...(runtimeClassName === undefined ? {} : { runtimeClassName }) },
  });
const CONFIG = JSON.stringify({ [RULE]: { allowed: ["runsc", "gvisor"] } });

async function scanned(file: string, text: string, name: string, args: string[] = ["--config", "c.json"]) {
  const dir = tempFiles({ [file]: text, "c.json": CONFIG });
  const { report } = await scanJson([...args, file], undefined, dir);
  // The input was read, and as the resource named: a pass below is a verdict, not a miss.
  expect(report.errors).toEqual([]);
  expect(report.resources.map((r) => r.name)).toContain(name);
  return { rules: rulesOf(report, name), messages: violationsOf(report, name) };
}

describe(RULE, () => {
  it("passes the hardened docker.Container and the hardened Pod, Deployment and Job (no runtime required by default)", () => {
    expect(violated(docker({}))).not.toContain(RULE);
    expect(violated(docker({ runtime: "runc" }))).not.toContain(RULE);
    for (const kind of ["Pod", "Deployment", "Job"])
      expect(violated(kube(kind, undefined)), kind).not.toContain(RULE);
  });

  it("passes the hardened workloads when they name an allowed runtime", () => {
    expect(violated(docker({ runtime: "runsc" }, ["runsc"]))).not.toContain(RULE);
    for (const kind of ["Pod", "Deployment", "Job"])
      expect(violated(kube(kind, "gvisor", ["gvisor"])), kind).not.toContain(RULE);
  });

  it.each([
    ["unset", {}, /^runtime is not set; allowed: runsc, kata \[runtime\]$/],
    ["runc", { runtime: "runc" }, /^runtime is runc; allowed: runsc, kata/],
    ["runc's shim", { runtime: "io.containerd.runc.v2" }, /^runtime is io\.containerd\.runc\.v2;/],
    ["another case (the daemon's names are exact)", { runtime: "RUNSC" }, /^runtime is RUNSC;/],
    ["empty", { runtime: "" }, /^runtime is ; allowed/],
  ])("refuses a docker.Container with the runtime %s", (_, props, re) => {
    const m = mine(docker(props, ["runsc", "kata"]));
    expect(m).toHaveLength(1);
    expect(m[0]).toMatch(re);
  });

  it.each([
    ["Pod", undefined, /^runtimeClassName is not set; allowed: gvisor \[spec\.runtimeClassName\]$/],
    ["Pod", "runc", /^runtimeClassName is runc;/],
    // A RuntimeClass is a name: the shim spelling is Docker's, not a class the kubelet looks up.
    ["Pod", "io.containerd.runsc.v1", /^runtimeClassName is io\.containerd\.runsc\.v1;/],
    ["Deployment", undefined, /\[spec\.template\.spec\.runtimeClassName\]$/],
    ["Job", "kata", /^runtimeClassName is kata; allowed: gvisor \[spec\.template\.spec\.runtimeClassName\]$/],
  ])("refuses a %s with runtimeClassName %s", (kind, rc, re) => {
    const m = mine(kube(kind, rc, ["gvisor"]));
    expect(m).toHaveLength(1);
    expect(m[0]).toMatch(re);
  });

  it.each([
    ["runsc", "runsc"],
    ["gVisor's shim name", "io.containerd.runsc.v1"],
    ["Kata's shim name", "io.containerd.kata.v2"],
  ])("passes a docker.Container whose runtime is %s", (_, runtime) => {
    expect(violated(docker({ runtime }, ["runsc", "kata"]))).not.toContain(RULE);
  });

  it("requires only what is configured: a runtime outside the list fails whatever it is", () => {
    expect(violated(docker({ runtime: "runsc" }, ["kata"]))).toContain(RULE);
    expect(violated(kube("Pod", "gvisor", ["kata"]))).toContain(RULE);
    expect(violated(docker({ runtime: "runsc" }, []))).not.toContain(RULE);
  });

  describe("the gvisor preset", () => {
    const preset: RunOptions = { preset: "gvisor" };
    it("refuses workloads not under gVisor", () => {
      expect(mine(docker({}, undefined, preset))).toEqual([
        "runtime is not set; allowed: runsc, gvisor [runtime]",
      ]);
      expect(violated(docker({ runtime: "runc" }, undefined, preset))).toContain(RULE);
      expect(violated(kube("Pod", undefined, undefined, preset))).toContain(RULE);
      expect(violated(kube("Job", "runc", undefined, preset))).toContain(RULE);
    });
    it("passes Docker's runsc and the RuntimeClass gvisor", () => {
      expect(violated(docker({ runtime: "runsc" }, undefined, preset))).not.toContain(RULE);
      expect(violated(docker({ runtime: "io.containerd.runsc.v1" }, undefined, preset))).not.toContain(RULE);
      expect(violated(kube("Pod", "gvisor", undefined, preset))).not.toContain(RULE);
    });
  });

  describe("scan", () => {
    it.each([
      ["no runtime", [], /runtime is not set/],
      ["runtime: runc", ["runtime: runc"], /runtime is runc/],
    ])("refuses a Compose service with %s", async (_, extra, re) => {
      const { rules, messages } = await scanned("compose.yaml", compose(...extra), "app");
      expect(rules).toContain(RULE);
      expect(messages.find((m) => m.startsWith(RULE))).toMatch(re);
    });

    it.each([
      ["runtime: runsc", "runtime: runsc"],
      ["gVisor's shim name", "runtime: io.containerd.runsc.v1"],
    ])("passes a Compose service with %s", async (_, line) => {
      expect((await scanned("compose.yaml", compose(line), "app")).rules).not.toContain(RULE);
    });

    it("judges an Engine API body's HostConfig.Runtime", async () => {
      expect((await scanned("body.json", body({ Runtime: "runc" }), "container#1")).rules).toContain(RULE);
      expect((await scanned("body.json", body({}), "container#1")).rules).toContain(RULE);
      expect((await scanned("body.json", body({ Runtime: "runsc" }), "container#1")).rules).not.toContain(
        RULE,
      );
      // The daemon folds field names and keeps the last duplicate: `runtime` is Runtime.
      expect((await scanned("body.json", body({ runtime: "runsc" }), "container#1")).rules).not.toContain(
        RULE,
      );
    });

    it("judges a Pod manifest's runtimeClassName, and the gvisor preset applies to scan", async () => {
      expect((await scanned("pod.yaml", pod(), "task")).rules).toContain(RULE);
      expect((await scanned("pod.yaml", pod("runc"), "task")).rules).toContain(RULE);
      expect((await scanned("pod.yaml", pod("gvisor"), "task")).rules).not.toContain(RULE);
      const preset = ["--preset", "gvisor"];
      expect((await scanned("body.json", body({ Runtime: "runc" }), "container#1", preset)).rules).toContain(
        RULE,
      );
      expect(
        (await scanned("body.json", body({ Runtime: "runsc" }), "container#1", preset)).rules,
      ).not.toContain(RULE);
    });
  });

  it("notes a runtime not known until the update, on Docker and Kubernetes", () => {
    for (const o of [docker({ runtime: UNKNOWN_WIRE }, ["runsc"]), kube("Pod", UNKNOWN_WIRE, ["gvisor"])]) {
      expect(violated(o)).not.toContain(RULE);
      expect(noted(o)).toContain(RULE);
    }
    // With nothing required, an unknown is not even a note.
    expect(noted(docker({ runtime: UNKNOWN_WIRE }))).not.toContain(RULE);
  });
});
