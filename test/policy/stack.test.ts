import { describe, expect, it } from "vitest";
import {
  type BudgetFacts,
  budgetArithmetic,
  budgetFacts,
  DEFAULT_RATES,
  type ProjectInput,
  resolveProject,
} from "../../components/model";
import { REDACTED_SECRET } from "../../policy/sources/lenient";
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

/** A Docker proxy as the toolkit runs it: the proxy image with its own entry point. */
function proxy(): StackFixture {
  const p = copy(safeContainer());
  p.image = "sandbox-proxy:1";
  delete p.command;
  p.labels = [
    { label: "sandbox.project", value: "demo" },
    { label: "sandbox.role", value: "proxy" },
  ];
  p.memory = 256;
  p.cpus = "0.5";
  // The proxy runs its image alone: no task variables, no job folder.
  p.envs = [];
  delete p.mounts;
  return { type: DOCKER, name: "egress", props: p };
}

describe(BUDGET, () => {
  const config = (cap: number, n: number) => ({ [BUDGET]: { monthlyCapUsd: cap, maxConcurrentTasks: n } });

  function probe(name: string, restart?: string): StackFixture {
    const f = task(name, 512, "1");
    const p = f.props as { labels: { label: string; value: string }[]; restart?: string };
    p.labels = [
      { label: "sandbox.project", value: "demo" },
      { label: "sandbox.role", value: "probe" },
    ];
    if (restart !== undefined) p.restart = restart;
    return f;
  }

  it("prices one-shot probe containers as runs in the task slots, never as slots of their own", () => {
    // Three probes of 1 vCPU + 0.5 GB at 2 slots: 2 × $3.65 = $7.30 fits $10; on all month they would be $10.95.
    expect(validateStack([probe("p1"), probe("p2"), probe("p3", "no")], config(10, 2)).violations).toEqual(
      [],
    );
    expect(validateStack([probe("p1"), probe("p2"), probe("p3")], config(7, 2)).violations).toHaveLength(1);
  });

  it("prices a probe container that something restarts as on all month", () => {
    const o = validateStack([probe("p1", "unless-stopped"), probe("p2"), probe("p3")], config(10, 2));
    expect(o.violations.map((v) => v.message).join("\n")).toContain("probe Container");
  });

  it("refuses a worst case above the cap, with the arithmetic", () => {
    const o = validateStack([task("t", 1024, "1")], config(10, 3));
    const expected = `worst case ${budgetArithmetic(3, { vcpu: 1, memoryMb: 1024 }, DEFAULT_RATES)} > cap $10.00`;
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

describe(`${BUDGET}: the budget facts a SandboxProject component writes`, () => {
  const SANDBOX_PROJECT = "sandbox:docker:SandboxProject";
  /** The facts the component registers for a project, built by the components' own writer. */
  const factsOf = (p: Partial<ProjectInput> = {}): BudgetFacts =>
    budgetFacts(
      resolveProject({
        name: "demo",
        budget: { monthlyCapUsd: 10 },
        templates: { t: { image: "x:1", resources: { vcpu: 1, memoryMb: 1024 } } },
        ...p,
      }),
    );
  // What the engine shows of a component: its registered outputs, the facts under `budgetFacts` among them. Its
  // Pulumi name need not be the project's: the rule takes the project from the facts.
  const withProps = (props: object, type = SANDBOX_PROJECT): StackFixture => ({ type, name: "sbx", props });
  const component = (facts: object, type = SANDBOX_PROJECT) =>
    withProps({ budget: { concurrency: 99 }, enabled: true, budgetFacts: facts }, type);
  const messages = (fixtures: StackFixture[]) =>
    validateStack(fixtures)
      .violations.filter((v) => v.policy === BUDGET)
      .map((v) => v.message);

  it("prices the project's workloads at the admitted concurrency, not the setting as written", () => {
    const facts = factsOf();
    // No concurrency was written: the plan admits the two that fit the $10 cap.
    expect(facts.maxConcurrentTasks).toBe(2);
    expect(messages([component(facts), task("t", 1024, "1")])).toEqual([]);
    expect(messages([component(facts), task("t", 1024, "1"), proxy()])).toEqual([
      'project "demo": worst case 2 tasks × (1 vCPU × $0.004 + 1 GB × $0.002) × 730 h = $8.76 + proxy Container "egress": 1 × (0.5 vCPU × $0.004 + 0.25 GB × $0.002) × 730 h = $1.83; total $10.59 > cap $10.00',
    ]);
  });

  it("accepts the facts of every fitting project, on either backend, disabled or with a proxy", () => {
    const proxied = { web: { image: "x:1", egress: { mode: "proxy" as const, allow: ["pypi.org"] } } };
    for (const facts of [
      factsOf(),
      factsOf({ budget: { monthlyCapUsd: 10, maxConcurrentTasks: 1 } }),
      factsOf({ templates: proxied }),
      factsOf({ backend: "kubernetes", templates: proxied }),
      factsOf({ enabled: false, templates: proxied }),
    ]) {
      expect(messages([component(facts, `sandbox:${facts.backend}:SandboxProject`)])).toEqual([]);
    }
    expect(factsOf({ templates: proxied }).fixed).toEqual({
      label: "1 proxy",
      size: { vcpu: 0.5, memoryMb: 256 },
    });
    expect(factsOf({ enabled: false, templates: proxied })).toMatchObject({
      maxConcurrentTasks: 0,
      worstCaseUsd: 0,
    });
  });

  it("recomputes the worst case from the facts: a declared figure that does not add up fails closed", () => {
    expect(messages([component({ ...factsOf(), worstCaseUsd: 1 })])).toEqual([
      'project "demo": the budget facts do not add up: they declare a worst case of $1.00, but 2 tasks × (1 vCPU × $0.004 + 1 GB × $0.002) × 730 h = $8.76; the policy fails closed on them',
    ]);
    const { fixed: _, ...noProxy } = factsOf({
      templates: { web: { image: "x:1", egress: { mode: "proxy", allow: ["pypi.org"] } } },
    });
    expect(messages([component(noProxy)])).toEqual([
      'project "demo": the budget facts do not add up: they declare a worst case of $9.13, but 2 tasks × (1 vCPU × $0.004 + 0.5 GB × $0.002) × 730 h = $7.30; the policy fails closed on them',
    ]);
  });

  it("refuses facts that add up but exceed the cap", () => {
    const lie = { ...factsOf(), maxConcurrentTasks: 3, worstCaseUsd: 13.14 };
    expect(messages([component(lie)])).toEqual([
      'project "demo": worst case 3 tasks × (1 vCPU × $0.004 + 1 GB × $0.002) × 730 h = $13.14 > cap $10.00',
    ]);
  });

  it("reads a metered project's facts: the ledger holds its runs, what the stack deploys must still fit", () => {
    const metered = factsOf({ budget: { monthlyCapUsd: 1, enforce: "metered", maxConcurrentTasks: 50 } });
    expect(metered).toMatchObject({ enforce: "metered", maxConcurrentTasks: 50 });
    // 50 slots would cost $219 a month; the ledger admits each run under the $1 cap instead.
    expect(messages([component(metered)])).toEqual([]);
    // A task container the stack itself deploys runs outside the ledger: priced all month.
    expect(messages([component(metered), task("t", 1024, "1")])).toEqual([
      'project "demo": worst case task Container "t": 1 × (1 vCPU × $0.004 + 1 GB × $0.002) × 730 h = $4.38 > cap $1.00',
    ]);
    // The proxy is paid before any metered run.
    const proxied = factsOf({
      budget: { monthlyCapUsd: 1, enforce: "metered" },
      templates: { web: { image: "x:1", egress: { mode: "proxy", allow: ["pypi.org"] } } },
    });
    expect(messages([component(proxied)])).toEqual([
      'project "demo": the always-on part 1 proxy × (0.5 vCPU × $0.004 + 0.25 GB × $0.002) × 730 h = $1.83 > cap $1.00, before any metered task',
    ]);
    // Against the pack's stack cap, a metered project counts as its own cap.
    expect(
      validateStack([component(metered)], { [BUDGET]: { monthlyCapUsd: 0.5 } }).violations.map(
        (v) => v.message,
      ),
    ).toEqual(['worst case metered tasks of project "demo": at most $1.00 > cap $0.50']);
    expect(validateStack([component(metered)], { [BUDGET]: { monthlyCapUsd: 1 } }).violations).toEqual([]);
  });

  it("refuses an agent whose cap exceeds the project's, and a hand-set enforcement it does not know", () => {
    expect(messages([component({ ...factsOf(), agentCapsUsd: { ci: 12 } })])).toEqual([
      'project "demo": agent "ci" has a cap of $12.00 > the project\'s cap $10.00',
    ]);
    expect(messages([component({ ...factsOf(), enforce: "trust-me" })])[0]).toMatch(
      /^the budget facts of SandboxProject "sbx" do not match the facts this policy reads \(budgetFacts\.enforce = "trust-me": enforce must be "worst-case" or "metered"\)/,
    );
  });

  it("judges the project's plan against the pack's stack cap too, at the pack's rates", () => {
    const fixtures = [component(factsOf())];
    expect(validateStack(fixtures, { [BUDGET]: { monthlyCapUsd: 8.76 } }).violations).toEqual([]);
    expect(
      validateStack(fixtures, { [BUDGET]: { monthlyCapUsd: 5, usdPerGbHour: 0 } }).violations.map(
        (v) => v.message,
      ),
    ).toEqual([
      'project "demo": worst case 2 tasks × (1 vCPU × $0.004 + 1 GB × $0) × 730 h = $5.84 > the stack\'s cap $5.00',
    ]);
  });

  it.each([
    ["no facts at all", withProps({}), "budgetFacts = (missing): expected a mapping with the keys project,"],
    [
      "the old reader's guess (a name and the budget as written)",
      withProps({ name: "demo", budget: { monthlyCapUsd: 5, maxConcurrentTasks: 2 } }),
      "budgetFacts = (missing)",
    ],
    [
      "an older component's facts (the budget as written, no slot)",
      (() => {
        const { slot: _, ...rest } = factsOf();
        return component({ ...rest, budget: { ...rest.budget, maxConcurrentTasks: 2 } });
      })(),
      "budgetFacts.budget.maxConcurrentTasks: unknown key; allowed keys: monthlyCapUsd, usdPerVcpuHour, usdPerGbHour, hoursPerMonth; budgetFacts.slot = (missing): expected a mapping with the keys vcpu, memoryMb",
    ],
    [
      "a key the facts do not have",
      component({ ...factsOf(), name: "demo" }),
      "budgetFacts.name: unknown key; allowed keys: project, backend, enabled, budget, enforce, agentCapsUsd, maxConcurrentTasks, slot, fixed, worstCaseUsd",
    ],
    [
      "a concurrency written as text",
      component({ ...factsOf(), maxConcurrentTasks: "2" }),
      'budgetFacts.maxConcurrentTasks = "2": maxConcurrentTasks must be a whole number, 0 or more',
    ],
    [
      "a negative rate",
      component({ ...factsOf(), budget: { ...factsOf().budget, usdPerGbHour: -1 } }),
      "budgetFacts.budget.usdPerGbHour = -1: the GB-hour rate must be a number of US dollars, 0 or more",
    ],
    ["facts that are not a mapping", component(["demo"] as unknown as object), 'budgetFacts = ["demo"]'],
  ])("fails closed on what is not the facts: %s", (_what, fixture, problem) => {
    const [message, ...more] = messages([fixture, task("t", 1024, "1")]);
    expect(more).toEqual([]);
    expect(message).toContain(
      'the budget facts of SandboxProject "sbx" do not match the facts this policy reads (',
    );
    expect(message).toContain(problem);
    expect(message).toMatch(/the policy fails closed on them$/);
  });

  it("fails closed on a fact the pack sealed as a secret", () => {
    expect(messages([component({ ...factsOf(), project: REDACTED_SECRET })])).toEqual([
      'the budget facts of SandboxProject "sbx" cannot be checked: it is a Pulumi secret, whose value the policy cannot see; the policy fails closed on it',
    ]);
  });

  it("a fact not known until the update is a note, not a pass and not a violation", () => {
    const o = validateStack([component({ ...factsOf(), maxConcurrentTasks: UNKNOWN_WIRE })]);
    expect(o.violations).toEqual([]);
    expect(o.notes).toEqual([
      {
        policy: BUDGET,
        message: `not checked because values are not known yet: the budget facts of SandboxProject "sbx" could not be checked: the value is not known until the update`,
      },
    ]);
  });

  it("reads only the facts: another output not known at preview (the probes' reports) does not matter", () => {
    const o = validateStack([withProps({ probes: UNKNOWN_WIRE, budgetFacts: factsOf() })]);
    expect(o.violations).toEqual([]);
    expect(o.notes).toEqual([]);
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

  it("lets no label hold a credential: not even the proxy's (only the secrets broker may, test/policy/broker.test.ts)", () => {
    const pw: StackFixture = { type: "random:index/randomPassword:RandomPassword", name: "db", props: {} };
    expect(
      validateStack([pw, { ...proxy(), dependsOn: { envs: ["db"] } }]).violations.map((v) => v.message),
    ).toEqual([
      'Container "egress": envs is computed from random:index/randomPassword:RandomPassword "db", which produces a secret',
    ]);
    // A pack configured to let a role hold credentials still can.
    expect(
      validateStack([pw, { ...proxy(), dependsOn: { envs: ["db"] } }], {
        [FLOW]: { allowedRoles: ["proxy"] },
      }).violations,
    ).toEqual([]);
  });
});
