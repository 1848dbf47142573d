/**
 * sandbox-require-resource-limits: every container has a memory, a CPU and (Engine API bodies) a process limit, the
 * bound of the budget. @pulumi/docker's `memory` is MB and `cpus` is sent as NanoCpus (else cpuQuota/cpuPeriod, the
 * period 100000 by default); Kubernetes limits are quantities, a pod-level limit counting for containers without one;
 * ephemeral containers have no resources field. A process limit of 0 or less is unlimited.
 */
import { describe, expect, it } from "vitest";
import { rulesOf, scanJson, tempFiles, violationsOf } from "../../scan/helpers";
import { carrier, DOCKER, safeContainer, safeK8sContainer, safePodSpec } from "../fixtures";
import { noted, type Outcome, UNKNOWN_WIRE, validate, violated } from "../harness";

const RULE = "sandbox-require-resource-limits";
type Obj = Record<string, unknown>;
/** Sets one field (an edit of a fixture). */
const put = (o: Obj, key: string, value: unknown): void => {
  o[key] = value;
};
const KINDS = ["Pod", "Deployment", "Job"] as const;

const mine = (o: Outcome) => o.violations.filter((v) => v.policy === RULE).map((v) => v.message);
const opts = (config?: object) => (config === undefined ? {} : { config: { [RULE]: config } });
const docker = (props: Obj, config?: object) =>
  validate(DOCKER, { ...safeContainer(), ...props }, opts(config));

/** Edits of a hardened pod: its spec and its first container's `resources`. */
type Edit = (spec: Obj, resources: Obj) => void;
function podProps(kind: string, edit: Edit): Obj {
  const spec = safePodSpec();
  edit(spec, ((spec.containers as Obj[])[0] as Obj).resources as Obj);
  return carrier(kind).build(spec);
}
const kube = (kind: string, edit: Edit, config?: object) =>
  validate(carrier(kind).type, podProps(kind, edit), opts(config));
const limits = (r: Obj) => r.limits as Obj;
/** Edits: one container limit set, one removed. */
const limit =
  (key: string, value: unknown): Edit =>
  (_, r) =>
    put(limits(r), key, value);
const unlimited =
  (key: string): Edit =>
  (_, r) =>
    void delete limits(r)[key];

async function scanned(files: Record<string, string>, name: string, config?: object) {
  const cfg: Record<string, string> =
    config === undefined ? {} : { "cfg.json": JSON.stringify({ [RULE]: config }) };
  const dir = tempFiles({ ...files, ...cfg });
  const args = [Object.keys(files)[0] as string, ...(config === undefined ? [] : ["--config", "cfg.json"])];
  const { report } = await scanJson(args, undefined, dir);
  expect(report.resources.map((r) => r.name)).toContain(name);
  return { rules: rulesOf(report, name), messages: violationsOf(report, name) };
}
const BASE = ["image: x", 'user: "1000:1000"', "read_only: true", "cap_drop: [ALL]", "network_mode: none"];
const compose = (...lines: string[]) =>
  `services:\n  app:\n${[...BASE, 'security_opt: ["no-new-privileges"]', ...lines].map((l) => `    ${l}`).join("\n")}\n`;
const HC = { Memory: 536870912, NanoCpus: 1e9, PidsLimit: 64 };
const WALLS = {
  CapDrop: ["ALL"],
  SecurityOpt: ["no-new-privileges"],
  ReadonlyRootfs: true,
  NetworkMode: "none",
};
const body = (hc: Obj) => JSON.stringify({ Image: "x", User: "1000:1000", HostConfig: { ...WALLS, ...hc } });

describe(RULE, () => {
  it("passes the hardened docker.Container and the hardened pods", () => {
    expect(violated(docker({}))).not.toContain(RULE);
    for (const kind of KINDS) expect(violated(kube(kind, () => {})), kind).not.toContain(RULE);
  });

  it.each([
    ["no memory", { memory: undefined, memorySwap: undefined }, /has no memory limit/],
    ["memory 0", { memory: 0, memorySwap: undefined }, /has no memory limit/],
    ["memory -1", { memory: -1, memorySwap: undefined }, /has no memory limit/],
    ["no cpus", { cpus: undefined }, /has no CPU limit/],
    ["cpus 0", { cpus: "0" }, /has no CPU limit/],
    ["cpus below one billionth (no NanoCpus)", { cpus: "0.0000000001" }, /has no CPU limit/],
    ["a cpuPeriod with no quota", { cpus: undefined, cpuPeriod: 100000 }, /has no CPU limit/],
  ])("refuses docker.Container with %s", (_, props, re) => {
    const m = mine(docker(props));
    expect(m).toHaveLength(1);
    expect(m[0]).toMatch(re);
  });

  it.each([
    ["cpuQuota and cpuPeriod", { cpus: undefined, cpuQuota: 50000, cpuPeriod: 100000 }],
    ["cpuQuota alone (the default period)", { cpus: undefined, cpuQuota: 50000 }],
    ["a fraction of a CPU", { cpus: "0.25" }],
    ["no process limit (@pulumi/docker cannot set one)", {}],
  ])("passes docker.Container with %s", (_, props) => {
    expect(violated(docker(props))).not.toContain(RULE);
  });

  const requestsOnly: Edit = (s, r) => {
    unlimited("cpu")(s, r);
    put(r.requests as Obj, "cpu", "2");
  };
  const init = { ...safeK8sContainer("setup"), resources: { limits: { memory: "64Mi" } } };
  const kubeFailing: [string, Edit, RegExp][] = [
    ["no memory limit", unlimited("memory"), /container "task" has no memory limit/],
    ["no CPU limit", unlimited("cpu"), /container "task" has no CPU limit/],
    ["memory 0", limit("memory", "0"), /has no memory limit/],
    ["cpu 0", limit("cpu", "0"), /has no CPU limit/],
    ["requests but no CPU limit", requestsOnly, /has no CPU limit/],
    [
      "an init container without a CPU limit",
      (s) => put(s, "initContainers", [init]),
      /init container "setup" has no CPU/,
    ],
  ];

  describe.each(KINDS)("on a %s", (kind) => {
    it.each(kubeFailing)("refuses %s", (_, edit, re) => {
      const m = mine(kube(kind, edit));
      expect(m).toHaveLength(1);
      expect(m[0]).toMatch(re);
    });
  });

  const podLimits: Edit = (s, r) => {
    delete r.limits;
    put(s, "resources", { limits: { cpu: "1", memory: "1Gi" } });
  };
  const debug = { ...safeK8sContainer("debug"), resources: undefined };
  it.each([
    ["pod-level limits for a container without its own", podLimits],
    [
      "an ephemeral container (the API gives it no resources)",
      ((s) => put(s, "ephemeralContainers", [debug])) as Edit,
    ],
    [
      "memory in plain bytes and cpu in cores",
      ((_, r) => put(r, "limits", { memory: "536870912", cpu: "1.5" })) as Edit,
    ],
  ])("passes %s", (_, edit) => {
    for (const kind of KINDS) expect(violated(kube(kind, edit)), kind).not.toContain(RULE);
  });

  describe("maximums", () => {
    it("maxMemoryMb refuses more memory and passes the maximum itself", () => {
      const cfg = { maxMemoryMb: 256 };
      expect(mine(docker({ memory: 512, memorySwap: 512 }, cfg))).toEqual([
        expect.stringMatching(/memory limit of 512 MB, above the maximum 256 MB/),
      ]);
      expect(mine(kube("Pod", limit("memory", "257Mi"), cfg))).toEqual([
        expect.stringMatching(/memory limit of 257 MB, above the maximum 256 MB/),
      ]);
      expect(violated(docker({ memory: 256, memorySwap: 256 }, cfg))).not.toContain(RULE);
      expect(violated(kube("Job", limit("memory", "256Mi"), cfg))).not.toContain(RULE);
    });

    it("maxCpu refuses more cores and passes the maximum itself", () => {
      const cfg = { maxCpu: 0.5 };
      expect(mine(docker({ cpus: "1" }, cfg))).toEqual([
        expect.stringMatching(/CPU limit of 1 cores, above the maximum 0.5/),
      ]);
      expect(mine(kube("Deployment", limit("cpu", "600m"), cfg))).toEqual([
        expect.stringMatching(/CPU limit of 0.6 cores, above the maximum 0.5/),
      ]);
      expect(violated(kube("Pod", limit("cpu", "500m"), cfg))).not.toContain(RULE);
      expect(violated(docker({ cpus: undefined, cpuQuota: 50000 }, cfg))).not.toContain(RULE);
    });
  });

  describe("requireNoSwap", () => {
    const cfg = { requireNoSwap: true };
    it.each([
      ["no memorySwap (the daemon gives as much swap again)", { memorySwap: undefined }],
      ["unlimited swap", { memorySwap: -1 }],
      ["memorySwap above memory", { memorySwap: 1024 }],
    ])("refuses docker.Container with %s", (_, props) => {
      expect(mine(docker(props, cfg))).toEqual([
        expect.stringMatching(/may swap: memorySwap is not equal to memory/),
      ]);
      expect(violated(docker(props))).not.toContain(RULE);
    });

    it("passes memorySwap equal to memory, and does not judge Kubernetes (no swap field)", () => {
      expect(violated(docker({ memory: 512, memorySwap: 512 }, cfg))).not.toContain(RULE);
      expect(violated(kube("Pod", () => {}, cfg))).not.toContain(RULE);
    });
  });

  it.each([
    ["docker.Container memory", () => docker({ memory: UNKNOWN_WIRE })],
    ["docker.Container cpus", () => docker({ cpus: UNKNOWN_WIRE })],
    ["a Kubernetes CPU limit", () => kube("Pod", limit("cpu", UNKNOWN_WIRE))],
    ["a Kubernetes memory limit", () => kube("Job", limit("memory", UNKNOWN_WIRE))],
  ])("notes %s not known until the update", (_, run) => {
    const o = run();
    expect(violated(o)).not.toContain(RULE);
    expect(noted(o)).toContain(RULE);
  });

  describe("scan: Engine API bodies", () => {
    it.each([
      ["no Memory", { ...HC, Memory: undefined }, /has no memory limit/],
      ["no NanoCpus", { ...HC, NanoCpus: undefined }, /has no CPU limit/],
      [
        "no PidsLimit",
        { ...HC, PidsLimit: undefined },
        /no process limit \(PidsLimit\): a fork bomb can exhaust/,
      ],
      ["PidsLimit -1", { ...HC, PidsLimit: -1 }, /PidsLimit -1 is unlimited/],
      ["PidsLimit 0", { ...HC, PidsLimit: 0 }, /PidsLimit 0 is unlimited/],
    ])("refuses a body with %s", async (_, hc, re) => {
      const { messages } = await scanned({ "body.json": body(hc) }, "container#1");
      expect(messages.filter((m) => m.startsWith(RULE))).toEqual([expect.stringMatching(re)]);
    });

    it("passes a body with every limit, and a CPU quota in place of NanoCpus", async () => {
      expect((await scanned({ "body.json": body(HC) }, "container#1")).rules).not.toContain(RULE);
      const quota = { ...HC, NanoCpus: undefined, CpuQuota: 50000, CpuPeriod: 100000 };
      expect((await scanned({ "body.json": body(quota) }, "container#1")).rules).not.toContain(RULE);
    });

    it("requirePidsLimit: false accepts a body with no PidsLimit, never an unlimited one", async () => {
      const off = { requirePidsLimit: false };
      const run = async (pids: number | undefined) =>
        (await scanned({ "body.json": body({ ...HC, PidsLimit: pids }) }, "container#1", off)).rules;
      expect(await run(undefined)).not.toContain(RULE);
      expect(await run(-1)).toContain(RULE);
    });
  });

  describe("scan: Compose", () => {
    it.each([
      ["no mem_limit", ["cpus: 1"]],
      ["mem_limit 0", ["mem_limit: 0", "cpus: 1"]],
      ["no cpus", ["mem_limit: 512m"]],
      ["pids_limit -1", ["mem_limit: 512m", "cpus: 1", "pids_limit: -1"]],
      ["pids_limit 0", ["mem_limit: 512m", "cpus: 1", "pids_limit: 0"]],
    ])("refuses a service with %s", async (_, lines) => {
      expect((await scanned({ "compose.yaml": compose(...lines) }, "app")).rules).toContain(RULE);
    });

    it.each([
      ["mem_limit and cpus", ["mem_limit: 512m", "cpus: 1"]],
      ["mem_limit in plain bytes", ["mem_limit: 536870912", "cpus: 0.5"]],
      [
        "deploy.resources.limits",
        ["deploy:", "  resources:", "    limits: { memory: 1g, cpus: 0.5, pids: 100 }"],
      ],
      ["a positive pids_limit", ["mem_limit: 512m", "cpus: 1", "pids_limit: 100"]],
    ])("passes a service with %s", async (_, lines) => {
      expect((await scanned({ "compose.yaml": compose(...lines) }, "app")).rules).not.toContain(RULE);
    });
  });

  it("scan refuses a Job manifest without a memory limit, and passes the hardened one", async () => {
    const meta = { apiVersion: "batch/v1", kind: "Job", metadata: { name: "task" } };
    const job = (edit: Edit) => ({ "job.yaml": JSON.stringify({ ...podProps("Job", edit), ...meta }) });
    expect((await scanned(job(unlimited("memory")), "task")).rules).toContain(RULE);
    expect(
      (
        await scanned(
          job(() => {}),
          "task",
        )
      ).rules,
    ).not.toContain(RULE);
  });
});
