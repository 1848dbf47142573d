import { describe, expect, it } from "vitest";
import {
  type Budget,
  BudgetSchema,
  budgetArithmetic,
  DEFAULT_RATES,
  maxAffordableConcurrency,
  planBudget,
  runArithmetic,
  sameUsd,
  taskMonthlyUsd,
  taskUsd,
  withinCap,
  worstCaseMonthlyUsd,
} from "../../components/model";

const budget = (b: Partial<Budget> & { monthlyCapUsd: number }): Budget => BudgetSchema.parse(b);
const oneByOne = { vcpu: 1, memoryMb: 1024 };

describe("budget defaults", () => {
  it("prices $0.004 per vCPU-hour, $0.002 per GB-hour, 730 hours, no fixed concurrency", () => {
    expect(BudgetSchema.parse({ monthlyCapUsd: 10 })).toEqual({
      enforce: "worst-case",
      monthlyCapUsd: 10,
      usdPerVcpuHour: 0.004,
      usdPerGbHour: 0.002,
      hoursPerMonth: 730,
    });
    expect(BudgetSchema.parse({ monthlyCapUsd: 10 })).toEqual({
      monthlyCapUsd: 10,
      enforce: "worst-case",
      ...DEFAULT_RATES,
    });
  });
});

describe("budget arithmetic", () => {
  it.each([
    [{ vcpu: 1, memoryMb: 1024 }, 0.006, 4.38],
    [{ vcpu: 1, memoryMb: 512 }, 0.005, 3.65],
    [{ vcpu: 0.5, memoryMb: 256 }, 0.0025, 1.825],
    [{ vcpu: 4, memoryMb: 8192 }, 0.032, 23.36],
  ])("a task of %j costs $%d an hour and $%d a month", (size, hourly, monthly) => {
    expect(taskMonthlyUsd(size, { ...DEFAULT_RATES, hoursPerMonth: 1 })).toBeCloseTo(hourly, 10);
    expect(taskMonthlyUsd(size, DEFAULT_RATES)).toBeCloseTo(monthly, 10);
  });

  it("multiplies by the concurrency for the worst case, and adds the always-on part", () => {
    expect(worstCaseMonthlyUsd(3, oneByOne, DEFAULT_RATES)).toBeCloseTo(13.14, 10);
    const proxy = { label: "1 proxy", size: { vcpu: 0.5, memoryMb: 256 } };
    expect(worstCaseMonthlyUsd(3, oneByOne, DEFAULT_RATES, proxy)).toBeCloseTo(13.14 + 1.825, 10);
    expect(budgetArithmetic(3, oneByOne, DEFAULT_RATES, proxy)).toBe(
      "3 tasks × (1 vCPU × $0.004 + 1 GB × $0.002) × 730 h + 1 proxy × (0.5 vCPU × $0.004 + 0.25 GB × $0.002) × 730 h = $14.97",
    );
  });

  it("prints the worst case as the issue's example", () => {
    expect(budgetArithmetic(3, oneByOne, budget({ monthlyCapUsd: 10 }))).toBe(
      "3 tasks × (1 vCPU × $0.004 + 1 GB × $0.002) × 730 h = $13.14",
    );
    expect(budgetArithmetic(1, { vcpu: 0.5, memoryMb: 256 }, budget({ monthlyCapUsd: 10 }))).toBe(
      "1 task × (0.5 vCPU × $0.004 + 0.25 GB × $0.002) × 730 h = $1.83",
    );
  });

  it.each([
    [10, 2],
    [13.14, 3],
    [13.13, 2],
    [4.38, 1],
    [4.37, 0],
    [0, 0],
  ])("a cap of $%d affords %d tasks of 1 vCPU and 1 GB", (cap, n) => {
    expect(maxAffordableConcurrency(oneByOne, budget({ monthlyCapUsd: cap }))).toBe(n);
  });

  it("counts money exactly at the edge: 3 tasks fit a cap of exactly $13.14", () => {
    const worst = worstCaseMonthlyUsd(3, oneByOne, DEFAULT_RATES);
    expect(withinCap(worst, 13.14)).toBe(true);
    expect(withinCap(worst, 13.139)).toBe(false);
    expect(sameUsd(worst, 13.14)).toBe(true);
    expect(sameUsd(worst, 13.139)).toBe(false);
  });

  it("admits any concurrency up to the limit when tasks are free", () => {
    expect(
      maxAffordableConcurrency(oneByOne, budget({ monthlyCapUsd: 0, usdPerVcpuHour: 0, usdPerGbHour: 0 })),
    ).toBe(10_000);
  });
});

describe("planBudget", () => {
  it("refuses a fixed concurrency whose worst case exceeds the cap, with the arithmetic", () => {
    expect(planBudget(oneByOne, budget({ monthlyCapUsd: 10, maxConcurrentTasks: 3 }), true)).toEqual({
      refusal:
        "worst case 3 tasks × (1 vCPU × $0.004 + 1 GB × $0.002) × 730 h = $13.14 > cap $10.00 (at most 2 fit)",
    });
  });

  it("refuses a cap below one task", () => {
    expect(planBudget(oneByOne, budget({ monthlyCapUsd: 1 }), true)).toEqual({
      refusal:
        "worst case 1 task × (1 vCPU × $0.004 + 1 GB × $0.002) × 730 h = $4.38 > cap $1.00 (not even one task fits)",
    });
    expect(planBudget(oneByOne, budget({ monthlyCapUsd: 1, maxConcurrentTasks: 1 }), true)).toEqual({
      refusal:
        "worst case 1 task × (1 vCPU × $0.004 + 1 GB × $0.002) × 730 h = $4.38 > cap $1.00 (not even one task fits)",
    });
  });

  it("lets a metered budget run more at once than fits all month: the ledger holds the cap run by run", () => {
    expect(
      planBudget(oneByOne, budget({ monthlyCapUsd: 1, enforce: "metered", maxConcurrentTasks: 20 }), true),
    ).toEqual({
      concurrency: 20,
      worstCaseUsd: expect.closeTo(87.6, 10),
      capUsd: 1,
      arithmetic:
        "metered: every run charged and admitted under the cap by the ledger (unmetered worst case 20 tasks × (1 vCPU × $0.004 + 1 GB × $0.002) × 730 h = $87.60)",
    });
    // Without a concurrency, what fits all month, but at least one task.
    expect(planBudget(oneByOne, budget({ monthlyCapUsd: 1, enforce: "metered" }), true)).toMatchObject({
      concurrency: 1,
    });
    expect(planBudget(oneByOne, budget({ monthlyCapUsd: 10, enforce: "metered" }), true)).toMatchObject({
      concurrency: 2,
    });
    // Disabled is still the hard stop.
    expect(planBudget(oneByOne, budget({ monthlyCapUsd: 1, enforce: "metered" }), false)).toMatchObject({
      concurrency: 0,
    });
  });

  it("prices a run by the same formula as the month: size × rates × its seconds", () => {
    const rates = { usdPerVcpuHour: 0.004, usdPerGbHour: 0.002, hoursPerMonth: 730 };
    expect(taskUsd(oneByOne, rates, 730 * 3600)).toBeCloseTo(taskMonthlyUsd(oneByOne, rates), 12);
    expect(taskUsd({ vcpu: 2, memoryMb: 512 }, rates, 1800)).toBeCloseTo(0.0045, 12);
    expect(runArithmetic({ vcpu: 2, memoryMb: 512 }, rates, 1800)).toBe(
      "(2 vCPU × $0.004/h + 0.5 GB × $0.002/h) × 1800 s = $0.0045",
    );
  });

  it("refuses an enforcement mode it does not know", () => {
    expect(BudgetSchema.safeParse({ monthlyCapUsd: 1, enforce: "soft" }).error?.issues[0]?.message).toBe(
      'budget.enforce must be "worst-case" or "metered"',
    );
  });

  it("keeps a fixed concurrency that fits", () => {
    expect(planBudget(oneByOne, budget({ monthlyCapUsd: 10, maxConcurrentTasks: 2 }), true)).toEqual({
      concurrency: 2,
      worstCaseUsd: expect.closeTo(8.76, 10),
      capUsd: 10,
      arithmetic: "2 tasks × (1 vCPU × $0.004 + 1 GB × $0.002) × 730 h = $8.76",
    });
  });

  it("picks the largest concurrency that fits when none is given", () => {
    const plan = planBudget(oneByOne, budget({ monthlyCapUsd: 100 }), true);
    expect(plan).toMatchObject({
      concurrency: 22,
      arithmetic: "22 tasks × (1 vCPU × $0.004 + 1 GB × $0.002) × 730 h = $96.36",
    });
  });

  it("pays an always-on part (the egress proxy) before any task slot, and shows it in the arithmetic", () => {
    const proxy = { label: "1 proxy", size: { vcpu: 0.5, memoryMb: 256 } };
    expect(planBudget(oneByOne, budget({ monthlyCapUsd: 10 }), true, proxy)).toEqual({
      concurrency: 1,
      worstCaseUsd: expect.closeTo(6.205, 10),
      capUsd: 10,
      arithmetic:
        "1 task × (1 vCPU × $0.004 + 1 GB × $0.002) × 730 h + 1 proxy × (0.5 vCPU × $0.004 + 0.25 GB × $0.002) × 730 h = $6.21",
    });
    expect(planBudget(oneByOne, budget({ monthlyCapUsd: 10, maxConcurrentTasks: 2 }), true, proxy)).toEqual({
      refusal:
        "worst case 2 tasks × (1 vCPU × $0.004 + 1 GB × $0.002) × 730 h + 1 proxy × (0.5 vCPU × $0.004 + 0.25 GB × $0.002) × 730 h = $10.59 > cap $10.00 (at most 1 fit)",
    });
    expect(planBudget(oneByOne, budget({ monthlyCapUsd: 2 }), true, proxy)).toEqual({
      refusal:
        "worst case 1 task × (1 vCPU × $0.004 + 1 GB × $0.002) × 730 h + 1 proxy × (0.5 vCPU × $0.004 + 0.25 GB × $0.002) × 730 h = $6.21 > cap $2.00 (not even one task fits)",
    });
  });

  it("drops the allowance to zero when the project is disabled, whatever the cap", () => {
    expect(planBudget(oneByOne, budget({ monthlyCapUsd: 0, maxConcurrentTasks: 5 }), false)).toEqual({
      concurrency: 0,
      worstCaseUsd: 0,
      capUsd: 0,
      arithmetic: "disabled: 0 tasks = $0.00",
    });
  });
});

describe("budget refusals", () => {
  it.each([
    [{ monthlyCapUsd: -1 }, "monthlyCapUsd", "the monthly cap must be a number of US dollars, 0 or more"],
    [{ monthlyCapUsd: "ten" }, "monthlyCapUsd", "the monthly cap must be a number of US dollars, 0 or more"],
    [
      { monthlyCapUsd: 10, usdPerVcpuHour: -0.1 },
      "usdPerVcpuHour",
      "the vCPU-hour rate must be a number of US dollars, 0 or more",
    ],
    [
      { monthlyCapUsd: 10, hoursPerMonth: 800 },
      "hoursPerMonth",
      "hours per month must be a number between 1 and 744",
    ],
    [
      { monthlyCapUsd: 10, maxConcurrentTasks: 1.5 },
      "maxConcurrentTasks",
      "the concurrency must be a whole number between 1 and 10000",
    ],
    [
      { monthlyCapUsd: 10, maxConcurrentTasks: 0 },
      "maxConcurrentTasks",
      "the concurrency must be a whole number between 1 and 10000",
    ],
    [
      { monthlyCapUsd: 10, capUsd: 3 },
      "capUsd",
      "unknown key; allowed keys: monthlyCapUsd, usdPerVcpuHour, usdPerGbHour, hoursPerMonth, enforce, maxConcurrentTasks",
    ],
  ])("%j is refused at %s", (input, key, message) => {
    const r = BudgetSchema.safeParse(input);
    expect(r.success).toBe(false);
    const issue = r.error?.issues[0];
    expect(issue?.code === "unrecognized_keys" ? issue.keys[0] : issue?.path.join(".")).toBe(key);
    expect(issue?.message).toBe(message);
  });
});
