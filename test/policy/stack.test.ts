import { describe, expect, it } from "vitest";
import { budgetArithmetic } from "../../components/model";
import { copy, DOCKER, safeContainer } from "./fixtures";
import { type StackFixture, UNKNOWN_WIRE, validateStack } from "./harness";

const BUDGET = "sandbox-require-budget-bound";
const FLOW = "sandbox-disallow-secret-flow";

function task(name: string, memory: number, cpus: string): StackFixture {
  const p = copy(safeContainer());
  p.memory = memory;
  p.cpus = cpus;
  return { type: DOCKER, name, props: p };
}

function proxy(): StackFixture {
  const p = copy(safeContainer());
  p.labels = [
    { label: "sandbox.project", value: "demo" },
    { label: "sandbox.role", value: "proxy" },
  ];
  p.memory = 256;
  p.cpus = "0.5";
  return { type: DOCKER, name: "egress", props: p };
}

describe(BUDGET, () => {
  const config = (cap: number, n: number) => ({ [BUDGET]: { monthlyCapUsd: cap, maxConcurrentTasks: n } });

  it("refuses a worst case above the cap, with the arithmetic", () => {
    const o = validateStack([task("t", 1024, "1")], config(10, 3));
    const expected = `worst case ${budgetArithmetic(3, { vcpu: 1, memoryMb: 1024 }, { monthlyCapUsd: 10, usdPerVcpuHour: 0.004, usdPerGbHour: 0.002, hoursPerMonth: 730, maxConcurrentTasks: 3 })} > cap $10.00`;
    expect(expected).toBe(
      "worst case 3 tasks × (1 vCPU × $0.004 + 1 GB × $0.002) × 730 h = $13.14 > cap $10.00",
    );
    expect(o.violations).toEqual([{ policy: BUDGET, message: expected }]);
  });

  it("accepts a worst case at the cap", () => {
    expect(validateStack([task("t", 1024, "1")], config(13.14, 3)).violations).toEqual([]);
  });

  it("adds always-on containers to the task slots", () => {
    const o = validateStack([task("t", 1024, "1"), proxy()], config(13.14, 3));
    expect(o.violations.map((v) => v.message)).toEqual([
      'worst case 3 tasks × (1 vCPU × $0.004 + 1 GB × $0.002) × 730 h = $13.14 + proxy Container "egress": 1 × (0.5 vCPU × $0.004 + 0.25 GB × $0.002) × 730 h = $1.83; total $14.97 > cap $13.14',
    ]);
  });

  it("reads a SandboxProject component's cap and concurrency when the engine shows them", () => {
    const component: StackFixture = {
      type: "sandbox:docker:SandboxProject",
      name: "demo",
      props: { name: "demo", budget: { monthlyCapUsd: 5, maxConcurrentTasks: 2 } },
    };
    const o = validateStack([component, task("t", 1024, "1")]);
    expect(o.violations.map((v) => v.message)).toEqual([
      'project "demo": worst case 2 tasks × (1 vCPU × $0.004 + 1 GB × $0.002) × 730 h = $8.76 > cap $5.00',
    ]);
  });

  it("a container without limits cannot be bounded", () => {
    const t = task("t", 1024, "1");
    (t.props as Record<string, unknown>).memory = undefined;
    expect(validateStack([t], config(100, 1)).violations.map((v) => v.message)).toEqual([
      'Container "t" has no CPU or memory limit, so nothing bounds its spend under the cap',
    ]);
  });

  it("an unknown limit is a note when the known part fits", () => {
    const t = task("t", 1024, "1");
    (t.props as Record<string, unknown>).memory = UNKNOWN_WIRE;
    const o = validateStack([t, task("u", 1024, "1")], config(5, 1));
    expect(o.violations).toEqual([]);
    expect(o.notes.map((n) => n.policy)).toEqual([BUDGET]);
  });

  it("the known part alone above the cap is a violation even with an unknown", () => {
    const t = task("t", 1024, "1");
    (t.props as Record<string, unknown>).memory = UNKNOWN_WIRE;
    const o = validateStack([t, task("u", 1024, "1")], config(1, 1));
    expect(o.violations.filter((v) => v.policy === BUDGET).map((v) => v.message)).toEqual([
      "worst case 1 task × (1 vCPU × $0.004 + 1 GB × $0.002) × 730 h = $4.38 > cap $1.00",
    ]);
  });

  it("a ResourceQuota bounds its namespace", () => {
    const quota: StackFixture = {
      type: "kubernetes:core/v1:ResourceQuota",
      name: "q",
      props: {
        metadata: { namespace: "sbx" },
        spec: { hard: { "limits.cpu": "2", "limits.memory": "4Gi", "count/pods": "4" } },
      },
    };
    const o = validateStack([quota], { [BUDGET]: { monthlyCapUsd: 5 } });
    expect(o.violations.map((v) => v.message)).toEqual([
      'worst case ResourceQuota "q" (namespace sbx): 1 × (2 vCPU × $0.004 + 4 GB × $0.002) × 730 h = $11.68 > cap $5.00',
    ]);
  });

  it("is silent without any cap", () => {
    expect(validateStack([task("t", 1024, "1")]).violations).toEqual([]);
  });
});

describe(FLOW, () => {
  it("flags a task env computed from a secret-producing resource", () => {
    const pw: StackFixture = {
      type: "random:index/randomPassword:RandomPassword",
      name: "db",
      props: { length: 24 },
    };
    const t = { ...task("t", 512, "1"), dependsOn: { envs: ["db"] } };
    expect(validateStack([pw, t]).violations).toEqual([
      {
        policy: FLOW,
        message:
          'Container "t": envs is computed from random:index/randomPassword:RandomPassword "db", which produces a secret',
      },
    ]);
  });

  it("flags a task command holding a Kubernetes Secret's value, without printing it", () => {
    const value = "s3cr3t-value-123";
    const s: StackFixture = {
      type: "kubernetes:core/v1:Secret",
      name: "creds",
      props: { stringData: { token: value } },
    };
    const t = task("t", 512, "1");
    (t.props as Record<string, unknown>).command = ["sh", "-c", `curl -H 'x: ${value}' example.com`];
    const o = validateStack([s, t]);
    expect(o.violations).toEqual([
      {
        policy: FLOW,
        message:
          'Container "t": command[2] holds the value of Secret "creds" key token (the value is not shown)',
      },
    ]);
    expect(JSON.stringify(o)).not.toContain(value);
  });

  it("flags labels marked secret", () => {
    const t = { ...task("t", 512, "1"), additionalSecretOutputs: ["labels"] };
    expect(validateStack([t]).violations.map((v) => v.message)).toEqual([
      'Container "t": labels is marked secret (additionalSecretOutputs)',
    ]);
  });

  it("lets the proxy hold a credential", () => {
    const pw: StackFixture = { type: "random:index/randomPassword:RandomPassword", name: "db", props: {} };
    expect(validateStack([pw, { ...proxy(), dependsOn: { envs: ["db"] } }]).violations).toEqual([]);
  });
});
