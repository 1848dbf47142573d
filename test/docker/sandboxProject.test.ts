import { beforeAll, describe, expect, it } from "vitest";
import { SandboxProject } from "../../components/docker/sandboxProject";
import { BudgetFactsSchema, budgetFacts, meterOf, SpecError } from "../../components/model";
import { one, outputValue, type Registered, recordingMocks, registeredOutputs } from "../helpers/pulumiMocks";

const NETWORK = "docker:index/network:Network";
const CONTAINER = "docker:index/container:Container";
const VOLUME = "docker:index/volume:Volume";

let registered: Registered[] = [];
let project: SandboxProject;

beforeAll(async () => {
  const mocks = await recordingMocks();
  project = new SandboxProject("demo", {
    budget: { monthlyCapUsd: 10, maxConcurrentTasks: 2 },
    templates: {
      default: { image: "sandbox-busybox:1" },
      six: {
        image: "sandbox-busybox:1",
        capDrop: "seed-six",
        resources: { vcpu: 0.5, memoryMb: 256, pids: 64, tmpfsMb: 32 },
      },
    },
  });
  await outputValue(project.probes);
  registered = await mocks.settle();
});

describe("SandboxProject on Docker", () => {
  it("registers the component, its network, and per template a TaskTemplate with a probe container and job volume", () => {
    expect(registered.map((r) => `${r.type}/${r.name}`).sort()).toEqual(
      [
        "sandbox:docker:SandboxProject/demo",
        `${NETWORK}/demo-net`,
        "sandbox:docker:TaskTemplate/demo-default",
        `${VOLUME}/demo-default-probe-job`,
        `${CONTAINER}/demo-default-probe`,
        "sandbox:docker:TaskTemplate/demo-six",
        `${VOLUME}/demo-six-probe-job`,
        `${CONTAINER}/demo-six-probe`,
      ].sort(),
    );
  });

  it("parents every child to the component (names derive from the component name)", () => {
    const byName = (n: string) => registered.find((r) => r.name === n)?.urn ?? "";
    expect(byName("demo-net")).toContain(
      "::sandbox:docker:SandboxProject$docker:index/network:Network::demo-net",
    );
    expect(byName("demo-default")).toContain(
      "::sandbox:docker:SandboxProject$sandbox:docker:TaskTemplate::demo-default",
    );
    expect(byName("demo-default-probe")).toContain(
      "::sandbox:docker:TaskTemplate$docker:index/container:Container::demo-default-probe",
    );
    expect(byName("demo-six-probe-job")).toContain(
      "sandbox:docker:TaskTemplate$docker:index/volume:Volume::demo-six-probe-job",
    );
  });

  it("makes the network internal, with inter-container traffic off, named and labelled for the off switch", () => {
    expect(one(registered, NETWORK, "demo-net").inputs).toEqual({
      name: "demo-net",
      driver: "bridge",
      internal: true,
      attachable: false,
      options: { "com.docker.network.bridge.enable_icc": "false" },
      labels: [
        { label: "sandbox.managed-by", value: "sandbox-projects" },
        { label: "sandbox.project", value: "demo" },
        { label: "sandbox.role", value: "network" },
      ],
    });
  });

  it("registers the budget facts a stack policy needs among the component's inputs", () => {
    const { inputs } = one(registered, "sandbox:docker:SandboxProject", "demo");
    expect(inputs).toEqual({ budgetFacts: budgetFacts(project.resolved) });
    const c = BudgetFactsSchema.parse(inputs.budgetFacts);
    expect(c).toMatchObject({
      project: "demo",
      backend: "docker",
      enabled: true,
      budget: { monthlyCapUsd: 10, usdPerVcpuHour: 0.004, usdPerGbHour: 0.002, hoursPerMonth: 730 },
      maxConcurrentTasks: 2,
      slot: { vcpu: 1, memoryMb: 512 },
    });
    expect(c.worstCaseUsd).toBeCloseTo(7.3, 10);
  });

  it("exports per template the launch spec the runtime reads", async () => {
    const templates = await outputValue(project.templates);
    expect(Object.keys(templates)).toEqual(["default", "six"]);
    expect(templates.six).toMatchObject({
      project: "demo",
      template: "six",
      capDrop: ["NET_RAW", "MKNOD", "SYS_CHROOT", "SETFCAP", "SETPCAP", "NET_ADMIN"],
      resources: { vcpu: 0.5, memoryMb: 256, pids: 64, diskMb: 1024 },
      network: "none",
      maxConcurrentTasks: 2,
    });
    expect(await outputValue(project.budget)).toMatchObject({
      concurrency: 2,
      arithmetic: "2 tasks × (1 vCPU × $0.004 + 0.5 GB × $0.002) × 730 h = $7.30",
    });
    expect(await outputValue(project.networkName)).toBe("demo-net");
  });

  it("registers its outputs", () => {
    const urn =
      registered.find((r) => r.name === "demo" && r.type === "sandbox:docker:SandboxProject")?.urn ?? "";
    const outputs = registeredOutputs(urn);
    expect(Object.keys(outputs ?? {}).sort()).toEqual([
      "budget",
      "budgetFacts",
      "enabled",
      "meter",
      "networkName",
      "probes",
      "templates",
    ]);
    // What a library launcher opens its ledger with: the same meter the front's ledger keeps the project to.
    expect(outputs?.meter).toEqual(meterOf(project.resolved));
    // The facts are where the engine shows a stack policy a component: among its outputs, as among its inputs.
    expect(outputs?.budgetFacts).toEqual(budgetFacts(project.resolved));
  });
});

describe("the probe container: every wall as an exact input", () => {
  const probe = () => one(registered, CONTAINER, "demo-default-probe").inputs;

  it("drops ALL capabilities and adds none", () => {
    expect(probe().capabilities).toEqual({ drops: ["ALL"], adds: [] });
  });
  it("drops the seed six for the seed-six template", () => {
    expect(one(registered, CONTAINER, "demo-six-probe").inputs.capabilities).toEqual({
      drops: ["NET_RAW", "MKNOD", "SYS_CHROOT", "SETFCAP", "SETPCAP", "NET_ADMIN"],
      adds: [],
    });
  });
  it("sets no-new-privileges and leaves the engine's default seccomp profile in place", () => {
    expect(probe().securityOpts).toEqual(["no-new-privileges:true"]);
  });
  it("is not privileged", () => {
    expect(probe().privileged).toBe(false);
  });
  it("has a read-only root with a small, sized /tmp", () => {
    expect(probe().readOnly).toBe(true);
    expect(probe().tmpfs).toEqual({ "/tmp": "rw,noexec,nosuid,nodev,size=64m,mode=1777" });
  });
  it("runs as 1000:1000", () => {
    expect(probe().user).toBe("1000:1000");
  });
  it("limits memory without swap, and CPU", () => {
    expect(probe().memory).toBe(512);
    expect(probe().memorySwap).toBe(512);
    expect(probe().cpus).toBe("1");
    expect(one(registered, CONTAINER, "demo-six-probe").inputs).toMatchObject({
      memory: 256,
      memorySwap: 256,
      cpus: "0.5",
    });
  });
  it("runs an init as PID 1, so the in-container deadline can kill the task", () => {
    expect(probe().init).toBe(true);
  });
  it("never restarts and publishes nothing", () => {
    expect(probe().restart).toBe("no");
    expect(probe().ports).toEqual([]);
    expect(probe().publishAllPorts).toBe(false);
  });
  it("has no network at all (egress none)", () => {
    expect(probe().networkMode).toBe("none");
    expect(probe().ipcMode).toBe("private");
  });
  it("mounts exactly one writable folder: the job folder", () => {
    expect(probe().mounts).toEqual([
      { type: "volume", source: "demo-probe-default-job", target: "/job", readOnly: false },
    ]);
    expect(probe().volumes).toBeUndefined();
  });
  it("puts no secret and nothing else in the environment", () => {
    expect(probe().envs).toEqual([]);
  });
  it("runs the self-check under the in-container deadline, waits for it and keeps its logs", () => {
    const command = probe().command as string[];
    expect(command.slice(0, 6)).toEqual(["timeout", "-s", "KILL", "60", "sh", "-c"]);
    expect(command[6]).toContain("/proc/self/status");
    expect(probe()).toMatchObject({ attach: true, logs: true, mustRun: false, rm: false, start: true });
  });
  it("uses the runc runtime by default (no runtime override)", () => {
    expect(probe().runtime).toBeUndefined();
  });
  it("labels the probe with the project, role, template and spec hash", () => {
    const labels = probe().labels as { label: string; value: string }[];
    expect(labels.map((l) => l.label)).toEqual([
      "sandbox.managed-by",
      "sandbox.project",
      "sandbox.role",
      "sandbox.spec-hash",
      "sandbox.template",
    ]);
    expect(labels.find((l) => l.label === "sandbox.role")?.value).toBe("probe");
  });
  it("backs the probe's job folder with a sized tmpfs volume owned by the task user", () => {
    expect(one(registered, VOLUME, "demo-default-probe-job").inputs).toMatchObject({
      name: "demo-probe-default-job",
      driver: "local",
      driverOpts: { type: "tmpfs", device: "tmpfs", o: "size=64m,uid=1000,gid=1000,mode=0700" },
    });
  });
});

describe("a refused project registers nothing", () => {
  it("throws the budget refusal before any resource", () => {
    expect(
      () =>
        new SandboxProject("over", {
          budget: { monthlyCapUsd: 10, maxConcurrentTasks: 3 },
          templates: { big: { image: "x:1", resources: { vcpu: 1, memoryMb: 1024 } } },
        }),
    ).toThrow(SpecError);
    expect(registered.some((r) => r.name === "over")).toBe(false);
  });
});
