import { describe, expect, it } from "vitest";
import { alwaysOnCost, resolveProject, SpecError } from "../../components/model";

const base = {
  name: "demo",
  budget: { monthlyCapUsd: 10 },
  templates: { default: { image: "sandbox-busybox:1" } },
};

const messageOf = (input: unknown, prefix = "") => {
  try {
    resolveProject(input, prefix);
  } catch (e) {
    expect(e).toBeInstanceOf(SpecError);
    return (e as Error).message;
  }
  throw new Error("expected a refusal");
};

describe("resolveProject", () => {
  it("fills every default and plans the budget for the largest template", () => {
    const p = resolveProject({
      ...base,
      templates: { small: { image: "x:1", resources: { vcpu: 0.5, memoryMb: 256 } }, big: { image: "x:1" } },
    });
    expect(p.spec.backend).toBe("docker");
    expect(p.spec.enabled).toBe(true);
    expect(p.spec.probe).toBe(true);
    expect(p.spec.network).toEqual({ proxyPort: 3128 });
    expect(p.jobRoot).toBe("/var/lib/sandbox-projects/demo");
    expect(p.largestTemplate).toBe('"big"');
    expect(p.slot).toEqual({ vcpu: 1, memoryMb: 512, diskMb: 1024 });
    expect(p.budget).toEqual({
      concurrency: 2,
      worstCaseUsd: expect.closeTo(7.3, 10),
      capUsd: 10,
      arithmetic: "2 tasks × (1 vCPU × $0.004 + 0.5 GB × $0.002) × 730 h = $7.30",
    });
  });

  it("refuses a worst case above the cap with the arithmetic, naming the largest template", () => {
    expect(
      messageOf({
        ...base,
        budget: { monthlyCapUsd: 10, maxConcurrentTasks: 3 },
        templates: { big: { image: "x:1", resources: { vcpu: 1, memoryMb: 1024 } } },
      }),
    ).toBe(
      "invalid sandbox project:\n" +
        '  - budget.maxConcurrentTasks = 3: worst case 3 tasks × (1 vCPU × $0.004 + 1 GB × $0.002) × 730 h = $13.14 > cap $10.00 (at most 2 fit), for a slot the size of template "big"; raise the cap, lower the concurrency or shrink the template',
    );
  });

  it("refuses a budget below one task", () => {
    expect(messageOf({ ...base, budget: { monthlyCapUsd: 1 } }, "sandbox:")).toBe(
      "invalid sandbox project:\n" +
        '  - sandbox:budget.monthlyCapUsd = 1: worst case 1 task × (1 vCPU × $0.004 + 0.5 GB × $0.002) × 730 h = $3.65 > cap $1.00 (not even one task fits), for a slot the size of template "default"; raise the cap, lower the concurrency or shrink the template',
    );
  });

  it("prices a slot as large as the largest template in every dimension", () => {
    const p = resolveProject({
      ...base,
      budget: { monthlyCapUsd: 100 },
      templates: {
        cpu: { image: "x:1", resources: { vcpu: 4, memoryMb: 512 } },
        mem: { image: "x:1", resources: { vcpu: 0.5, memoryMb: 8192, diskMb: 2048 } },
      },
    });
    expect(p.slot).toEqual({ vcpu: 4, memoryMb: 8192, diskMb: 2048 });
    expect(p.largestTemplate).toBe('"cpu" (vCPU) and "mem" (memory)');
    expect(p.budget.arithmetic).toBe("4 tasks × (4 vCPU × $0.004 + 8 GB × $0.002) × 730 h = $93.44");
  });

  it("counts the egress proxy when a template uses it: a cap that holds 2 tasks alone holds 1 with the proxy", () => {
    expect(resolveProject({ ...base, budget: { monthlyCapUsd: 7.3 } }).budget.concurrency).toBe(2);
    const p = resolveProject({
      ...base,
      budget: { monthlyCapUsd: 7.3 },
      templates: { web: { image: "x:1", egress: { mode: "proxy", allow: ["pypi.org"] } } },
    });
    expect(p.budget.arithmetic).toBe(
      "1 task × (1 vCPU × $0.004 + 0.5 GB × $0.002) × 730 h + 1 proxy × (0.5 vCPU × $0.004 + 0.25 GB × $0.002) × 730 h = $5.48",
    );
    expect(p.budget.concurrency).toBe(1);
  });

  it("counts one proxy and one broker per template that uses them on Docker, and one of each on Kubernetes", () => {
    const templates = {
      a: { image: "x:1", egress: { mode: "proxy" as const, allow: ["pypi.org"] }, broker: ["gh"] },
      b: { image: "x:1", egress: { mode: "proxy" as const, allow: ["github.com"] } },
      c: { image: "x:1", broker: ["gh"] },
      d: { image: "x:1" },
    };
    const broker = {
      routes: { gh: { upstream: "https://api.github.com", paths: ["/**"], credential: { secret: "gh" } } },
    };
    const docker = alwaysOnCost(resolveProject({ ...base, templates, broker }).spec);
    expect(docker).toEqual({ label: "(2 proxies + 2 brokers)", size: { vcpu: 1.5, memoryMb: 768 } });
    const kube = alwaysOnCost(resolveProject({ ...base, backend: "kubernetes", templates, broker }).spec);
    expect(kube).toEqual({ label: "(1 proxy + 1 broker)", size: { vcpu: 0.75, memoryMb: 384 } });
    const one = alwaysOnCost(resolveProject({ ...base, templates: { b: templates.b } }).spec);
    expect(one).toEqual({ label: "1 proxy", size: { vcpu: 0.5, memoryMb: 256 } });
  });

  it("accepts a disabled project with a zero cap: the hard stop admits nothing", () => {
    const p = resolveProject({ ...base, enabled: false, budget: { monthlyCapUsd: 0 } });
    expect(p.budget.concurrency).toBe(0);
  });

  it("disabling is never refused for an agent's concurrency: the hard stop clamps every agent to zero", () => {
    const agents = { ci: { maxConcurrentTasks: 2 } };
    const p = resolveProject({ ...base, enabled: false, budget: { monthlyCapUsd: 10 }, agents });
    expect(p.budget.concurrency).toBe(0);
    // Enabled, the same agent above the project's concurrency is still refused.
    expect(messageOf({ ...base, budget: { monthlyCapUsd: 10, maxConcurrentTasks: 1 }, agents })).toBe(
      "invalid sandbox project:\n  - agents.ci.maxConcurrentTasks = 2: an agent's concurrency must be at most the project's (1)",
    );
  });

  it("checks each agent against the project: its templates exist, its cap and concurrency are within the project's", () => {
    expect(
      messageOf({
        ...base,
        budget: { monthlyCapUsd: 10, maxConcurrentTasks: 2 },
        agents: {
          ci: { templates: ["default", "gpu"], monthlyCapUsd: 11 },
          dev: { maxConcurrentTasks: 3 },
        },
      }),
    ).toBe(
      [
        "invalid sandbox project:",
        '  - agents.ci.templates[1] = "gpu": no such template; the project has: default',
        "  - agents.ci.monthlyCapUsd = 11: an agent's cap must be at most the project's cap (10)",
        "  - agents.dev.maxConcurrentTasks = 3: an agent's concurrency must be at most the project's (2)",
      ].join("\n"),
    );
    expect(messageOf({ ...base, agents: { "Bad Name": {} } })).toBe(
      'invalid sandbox project:\n  - agents.Bad Name = "Bad Name": agent names must be lower-case letters, digits, ., _ and -, starting with a letter or digit, at most 64 characters',
    );
  });

  it("takes a metered budget on either backend: both launchers keep the ledger", () => {
    for (const backend of ["docker", "kubernetes"] as const) {
      const p = resolveProject({ ...base, backend, budget: { monthlyCapUsd: 10, enforce: "metered" } });
      expect(p.spec.budget.enforce).toBe("metered");
      expect(p.spec.backend).toBe(backend);
    }
  });

  it("asks a gVisor template on Kubernetes for room for gVisor's threads in the pod's process limit, and only there", () => {
    const gvisor = (pids: number) => ({ image: "sandbox-busybox:1", runtime: "runsc", resources: { pids } });
    const templates = {
      a: gvisor(64),
      b: gvisor(127),
      c: gvisor(128),
      d: { image: "x:1", resources: { pids: 8 } },
    };
    expect(messageOf({ ...base, backend: "kubernetes", templates }, "sandbox:")).toBe(
      [
        "invalid sandbox project:",
        ...["a", "b"].map(
          (t, i) =>
            `  - sandbox:templates.${t}.resources.pids = ${[64, 127][i]}: on Kubernetes a runsc pod's process limit (the node's podPidsLimit, which pids declares) also holds gVisor's own threads for the task and its results holder (76 on a 2-core node): pids must be at least 128, and the node's podPidsLimit as large`,
        ),
      ].join("\n"),
    );
    // On Docker the limit is the sandbox's own cgroup, with one container: 64 is enough there.
    expect(resolveProject({ ...base, templates }).spec.templates.a?.resources.pids).toBe(64);
    expect(
      resolveProject({ ...base, backend: "kubernetes", templates: { c: gvisor(128) } }).spec.backend,
    ).toBe("kubernetes");
  });

  it("refuses alert sinks it cannot deliver to", () => {
    expect(messageOf({ ...base, alerts: { file: "alerts.jsonl", webhook: "ftp://x/y", sms: true } })).toBe(
      [
        "invalid sandbox project:",
        '  - alerts.file = "alerts.jsonl": alerts.file must be an absolute host path',
        '  - alerts.webhook = "ftp://x/y": alerts.webhook must be an http:// or https:// URL without credentials in it',
        "  - alerts.sms: unknown key; allowed keys: stderr, file, webhook",
      ].join("\n"),
    );
  });

  it("lists every problem at once, each with its key, its value and what is allowed", () => {
    expect(
      messageOf(
        {
          name: "Demo",
          budget: { monthlyCapUsd: "ten" },
          templates: { Bad_Name: { image: "x:1" }, ok: { image: "x:1", resources: { memoryMb: "lots" } } },
          budgets: {},
        },
        "sandbox:",
      ),
    ).toBe(
      [
        "invalid sandbox project:",
        '  - sandbox:name = "Demo": name must be lower-case letters, digits and -, starting with a letter and not ending with -, at most 32 characters',
        '  - sandbox:budget.monthlyCapUsd = "ten": the monthly cap must be a number of US dollars, 0 or more',
        '  - sandbox:templates.Bad_Name = "Bad_Name": template names must be lower-case letters, digits and -, starting with a letter and not ending with -, at most 32 characters',
        '  - sandbox:templates.ok.resources.memoryMb = "lots": memoryMb (megabytes) must be a whole number between 16 and 262144',
        '  - sandbox:budgets: unknown key (did you mean "budget"?); allowed keys: name, backend, enabled, budget, network, jobRoot, probe, agents, broker, alerts, templates',
      ].join("\n"),
    );
  });

  it.each([
    [{ backend: "nomad" }, 'backend = "nomad": backend must be "docker" or "kubernetes"'],
    [{ enabled: "yes" }, 'enabled = "yes": enabled must be true or false'],
    [{ templates: {} }, "templates = {}: at least one template is required"],
    [{ jobRoot: "jobs" }, 'jobRoot = "jobs": jobRoot must be an absolute host path other than /'],
    [{ jobRoot: "/" }, 'jobRoot = "/": jobRoot must be an absolute host path other than /'],
    [
      { network: { subnet: "8.8.8.0/24" } },
      'network.subnet = "8.8.8.0/24": subnet must be a private IPv4 CIDR (inside 10/8, 172.16/12 or 192.168/16, prefix /8 to /30)',
    ],
    [
      { network: { proxyPort: 0 } },
      "network.proxyPort = 0: proxyPort must be a whole number between 1 and 65535",
    ],
  ])("refuses %j", (patch, line) => {
    expect(messageOf({ ...base, ...patch })).toBe(`invalid sandbox project:\n  - ${line}`);
  });

  it("accepts private subnets only", () => {
    expect(resolveProject({ ...base, network: { subnet: "10.231.0.0/24" } }).spec.network.subnet).toBe(
      "10.231.0.0/24",
    );
    expect(resolveProject({ ...base, network: { subnet: "172.20.0.0/16" } }).spec.network.subnet).toBe(
      "172.20.0.0/16",
    );
    expect(() => resolveProject({ ...base, network: { subnet: "172.32.0.0/16" } })).toThrow(SpecError);
  });
});
