import { describe, expect, it } from "vitest";
import { BudgetFactsSchema, budgetFacts, type ProjectInput, resolveProject } from "../../components/model";

const project = (p: Partial<ProjectInput> = {}) =>
  resolveProject({
    name: "demo",
    budget: { monthlyCapUsd: 10 },
    templates: { t: { image: "x:1", resources: { vcpu: 1, memoryMb: 1024, diskMb: 2048 } } },
    ...p,
  });
const proxied = { web: { image: "x:1", egress: { mode: "proxy" as const, allow: ["pypi.org"] } } };

describe("budgetFacts", () => {
  it("writes the admitted concurrency, the slot, the cap and rates, and the plan's worst case", () => {
    expect(budgetFacts(project())).toEqual({
      project: "demo",
      backend: "docker",
      enabled: true,
      budget: { monthlyCapUsd: 10, usdPerVcpuHour: 0.004, usdPerGbHour: 0.002, hoursPerMonth: 730 },
      enforce: "worst-case",
      agentCapsUsd: {},
      maxConcurrentTasks: 2,
      slot: { vcpu: 1, memoryMb: 1024 },
      worstCaseUsd: expect.closeTo(8.76, 10),
    });
  });

  it("writes a metered budget and each agent's own cap", () => {
    const p = project({
      budget: { monthlyCapUsd: 10, enforce: "metered", maxConcurrentTasks: 50 },
      agents: { ci: { monthlyCapUsd: 4 }, dev: {} },
    });
    expect(budgetFacts(p)).toMatchObject({
      enforce: "metered",
      agentCapsUsd: { ci: 4 },
      maxConcurrentTasks: 50,
    });
  });

  it("adds the always-on proxy when a template uses it, and prices nothing for a disabled project", () => {
    expect(budgetFacts(project({ templates: proxied }))).toMatchObject({
      fixed: { label: "1 proxy", size: { vcpu: 0.5, memoryMb: 256 } },
      maxConcurrentTasks: 2,
      worstCaseUsd: expect.closeTo(9.125, 10),
    });
    const off = budgetFacts(project({ enabled: false, templates: proxied }));
    expect(off).toMatchObject({ enabled: false, maxConcurrentTasks: 0, worstCaseUsd: 0 });
    expect(off).not.toHaveProperty("fixed");
  });

  it.each([
    ["docker", {}],
    ["a proxy", { templates: proxied }],
    ["kubernetes", { backend: "kubernetes" as const, templates: proxied }],
    ["a disabled project", { enabled: false }],
    ["a fixed concurrency", { budget: { monthlyCapUsd: 10, maxConcurrentTasks: 1, hoursPerMonth: 744 } }],
  ])("is read back unchanged by the schema the stack rule reads it with: %s", (_what, p) => {
    const facts = budgetFacts(project(p));
    expect(BudgetFactsSchema.parse(JSON.parse(JSON.stringify(facts)))).toEqual(facts);
  });

  it("is strict: a key the schema does not know is refused, not ignored", () => {
    const r = BudgetFactsSchema.safeParse({ ...budgetFacts(project()), name: "demo" });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.code).toBe("unrecognized_keys");
  });
});
