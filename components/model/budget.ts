import { z } from "zod";
import { strictObject } from "./errors";

/** The prices a budget counts in: what one vCPU and one GB of memory cost for an hour, and the hours in a month. */
export interface Rates {
  /** US dollars for one vCPU for one hour. */
  readonly usdPerVcpuHour: number;
  /** US dollars for one GB (1024 MB) of memory for one hour. */
  readonly usdPerGbHour: number;
  /** Hours in the billing month. */
  readonly hoursPerMonth: number;
}

/**
 * The rates a budget uses when it names none: $0.004 per vCPU-hour, $0.002 per GB-hour, and 730 hours (the cloud
 * providers' average month). The project schema and the stack policy's settings both default to these.
 */
export const DEFAULT_RATES: Rates = Object.freeze({
  usdPerVcpuHour: 0.004,
  usdPerGbHour: 0.002,
  hoursPerMonth: 730,
});

const money = (what: string) =>
  z
    .number({ error: `${what} must be a number of US dollars, 0 or more` })
    .min(0, { error: `${what} must be a number of US dollars, 0 or more` })
    .max(1_000_000, { error: `${what} must be at most 1000000` });

/**
 * The budget: a hard monthly cap, the rates that price a task, and how many tasks may run at once. The worst case
 * (every allowed task running all month at its limits) must fit under the cap, or the project is refused.
 */
export const BudgetSchema = strictObject({
  /** The hard cap in US dollars per month. */
  monthlyCapUsd: money("the monthly cap"),
  /** Price of one vCPU for one hour. Defaults to {@link DEFAULT_RATES}. */
  usdPerVcpuHour: money("the vCPU-hour rate").default(DEFAULT_RATES.usdPerVcpuHour),
  /** Price of one GB (1024 MB) of memory for one hour. Defaults to {@link DEFAULT_RATES}. */
  usdPerGbHour: money("the GB-hour rate").default(DEFAULT_RATES.usdPerGbHour),
  /** Hours in the billing month. Defaults to {@link DEFAULT_RATES}. */
  hoursPerMonth: z
    .number({ error: "hours per month must be a number between 1 and 744" })
    .min(1, { error: "hours per month must be a number between 1 and 744" })
    .max(744, { error: "hours per month must be a number between 1 and 744" })
    .default(DEFAULT_RATES.hoursPerMonth),
  /**
   * How the cap is held. `worst-case` (the default): the worst case (every slot busy all month) must fit under the
   * cap, so nothing needs to be counted. `metered`: the concurrency may exceed what fits all month; the ledger
   * (runtime/ledger/index.ts) charges every run and admits a launch only while month-to-date spend plus the task's
   * maximum charge fits, and stops running work at the cap.
   */
  enforce: z
    .enum(["worst-case", "metered"], { error: 'budget.enforce must be "worst-case" or "metered"' })
    .default("worst-case"),
  /** Tasks that may run at once. Defaults to the largest number whose worst case fits the cap. */
  maxConcurrentTasks: z
    .number({ error: "the concurrency must be a whole number between 1 and 10000" })
    .int({ error: "the concurrency must be a whole number between 1 and 10000" })
    .min(1, { error: "the concurrency must be a whole number between 1 and 10000" })
    .max(10_000, { error: "the concurrency must be a whole number between 1 and 10000" })
    .optional(),
});
export type Budget = z.output<typeof BudgetSchema>;

/** What one task may use at most: the quantities the budget prices. */
export interface TaskSize {
  readonly vcpu: number;
  readonly memoryMb: number;
}

/** Memory in GB (1024 MB) as priced by the GB-hour rate. */
export function memoryGb(memoryMb: number): number {
  return memoryMb / 1024;
}

/**
 * The one pricing formula: what `size` costs kept busy all month,
 * (vCPU × $/vCPU-hour + GB × $/GB-hour) × hours. Every figure the toolkit prices (the plan, the Kubernetes quota,
 * the stack policy) is a sum of these.
 */
export function taskMonthlyUsd(size: TaskSize, rates: Rates): number {
  return taskUsd(size, rates, rates.hoursPerMonth * 3600);
}

/**
 * What `size` costs kept busy for `seconds`: (vCPU × $/vCPU-hour + GB × $/GB-hour) × hours. The one formula the
 * budget proof ({@link taskMonthlyUsd}) and the ledger's charge for a run both price with.
 */
export function taskUsd(size: TaskSize, rates: Omit<Rates, "hoursPerMonth">, seconds: number): number {
  return (size.vcpu * rates.usdPerVcpuHour + memoryGb(size.memoryMb) * rates.usdPerGbHour) * (seconds / 3600);
}

/** `(1 vCPU × $0.004 + 1 GB × $0.002) × 65 s`: the charge of one run of `size` for `seconds`, as printed. */
export function runArithmetic(size: TaskSize, rates: Omit<Rates, "hoursPerMonth">, seconds: number): string {
  const cpu = `${trimNumber(size.vcpu)} vCPU × $${trimNumber(rates.usdPerVcpuHour)}/h`;
  const mem = `${trimNumber(memoryGb(size.memoryMb), 3)} GB × $${trimNumber(rates.usdPerGbHour)}/h`;
  return `(${cpu} + ${mem}) × ${trimNumber(seconds, 3)} s = ${usdFine(taskUsd(size, rates, seconds))}`;
}

/** An amount to a tenth of a cent or finer when it is small (`$0.0042`), to the cent otherwise. */
export function usdFine(n: number): string {
  // From a dollar (less what rounds to it) on, cents: $0.9999999 of float noise reads as $1.00.
  if (Math.abs(n) >= 0.995) return usd(n);
  return `$${trimNumber(n, 6)}`;
}

/**
 * Worst-case monthly spend: `concurrency` slots, each running the given task size all month, plus the always-on
 * part when there is one.
 */
export function worstCaseMonthlyUsd(
  concurrency: number,
  size: TaskSize,
  rates: Rates,
  fixed?: FixedCost,
): number {
  const slots = concurrency * taskMonthlyUsd(size, rates);
  return fixed === undefined ? slots : slots + taskMonthlyUsd(fixed.size, rates);
}

// Money is compared in millionths of a dollar so that 3 × 0.006 × 730 is not refused for a float's last bit.
const micro = (usd: number) => Math.round(usd * 1_000_000);

/** True when `usdAmount` is within `capUsd`, compared in millionths of a dollar (no float noise in the last bit). */
export function withinCap(usdAmount: number, capUsd: number): boolean {
  return micro(usdAmount) <= micro(capUsd);
}

/** True when two amounts are the same to a millionth of a dollar. */
export function sameUsd(a: number, b: number): boolean {
  return micro(a) === micro(b);
}

/** The largest number of concurrent tasks of `size` whose worst case fits the cap (0 when not even one fits). */
export function maxAffordableConcurrency(size: TaskSize, budget: Budget): number {
  const one = micro(taskMonthlyUsd(size, budget));
  if (one === 0) return 10_000;
  return Math.min(10_000, Math.floor(micro(budget.monthlyCapUsd) / one));
}

/** A number as a person writes it: at most `digits` decimals, no trailing zeros. */
export function trimNumber(n: number, digits = 6): string {
  return Number(n.toFixed(digits)).toString();
}

/** `$13.14`: rounded half up to the cent, after the float noise below a millionth is removed. */
export function usd(n: number): string {
  return `$${(Math.round(Math.round(n * 1_000_000) / 10_000) / 100).toFixed(2)}`;
}

/**
 * The worst-case arithmetic, as printed in refusals and outputs:
 * `3 tasks × (1 vCPU × $0.004 + 1 GB × $0.002) × 730 h = $13.14`.
 */
export function budgetArithmetic(
  concurrency: number,
  size: TaskSize,
  rates: Rates,
  fixed?: FixedCost,
): string {
  const tasks = `${concurrency} ${concurrency === 1 ? "task" : "tasks"} × ${priceArithmetic(size, rates)}`;
  const total = usd(worstCaseMonthlyUsd(concurrency, size, rates, fixed));
  return fixed === undefined
    ? `${tasks} = ${total}`
    : `${tasks} + ${fixed.label} × ${priceArithmetic(fixed.size, rates)} = ${total}`;
}

/** `(1 vCPU × $0.004 + 1 GB × $0.002) × 730 h`: the pricing formula of one `size`, as printed. */
export function priceArithmetic(size: TaskSize, rates: Rates): string {
  const cpu = `${trimNumber(size.vcpu)} vCPU × $${trimNumber(rates.usdPerVcpuHour)}`;
  const mem = `${trimNumber(memoryGb(size.memoryMb), 3)} GB × $${trimNumber(rates.usdPerGbHour)}`;
  return `(${cpu} + ${mem}) × ${trimNumber(rates.hoursPerMonth)} h`;
}

/** Something that runs all month whatever the tasks do (the egress proxy): priced before any task slot. */
export interface FixedCost {
  /** How the arithmetic names it, e.g. `1 proxy`. */
  readonly label: string;
  readonly size: TaskSize;
}

/** The budget a project runs under once checked: how many tasks at once, and what that costs at worst. */
export interface BudgetPlan {
  /** Tasks allowed to run at once; 0 when the project is disabled (the hard stop). */
  readonly concurrency: number;
  /** Worst-case monthly spend of `concurrency` tasks of the largest template, in US dollars. */
  readonly worstCaseUsd: number;
  /** The cap in US dollars. */
  readonly capUsd: number;
  /** The arithmetic behind `worstCaseUsd`, for outputs and messages. */
  readonly arithmetic: string;
}

/**
 * Plans the budget for tasks no larger than `size` (the largest template). Returns a refusal message instead when
 * the worst case exceeds the cap or the cap admits no task at all. A disabled project plans zero tasks.
 */
export function planBudget(
  size: TaskSize,
  budget: Budget,
  enabled: boolean,
  fixed?: FixedCost,
): BudgetPlan | { refusal: string } {
  if (!enabled) {
    return {
      concurrency: 0,
      worstCaseUsd: 0,
      capUsd: budget.monthlyCapUsd,
      arithmetic: "disabled: 0 tasks = $0.00",
    };
  }
  const cap = usd(budget.monthlyCapUsd);
  // What is left for task slots once the always-on part is paid (never below zero).
  const fixedUsd = fixed === undefined ? 0 : taskMonthlyUsd(fixed.size, budget);
  const forTasks: Budget = { ...budget, monthlyCapUsd: Math.max(0, budget.monthlyCapUsd - fixedUsd) };
  const fits = (n: number) => withinCap(worstCaseMonthlyUsd(n, size, budget, fixed), budget.monthlyCapUsd);
  let affordable = maxAffordableConcurrency(size, forTasks);
  while (affordable > 0 && !fits(affordable)) affordable--;
  const plan = (n: number): BudgetPlan => ({
    concurrency: n,
    worstCaseUsd: worstCaseMonthlyUsd(n, size, budget, fixed),
    capUsd: budget.monthlyCapUsd,
    arithmetic: budgetArithmetic(n, size, budget, fixed),
  });
  if (budget.enforce === "metered") {
    // The ledger holds the cap run by run: the concurrency is the setting (else what fits all month, at least one).
    const n = budget.maxConcurrentTasks ?? Math.max(1, affordable);
    const worst = worstCaseMonthlyUsd(n, size, budget, fixed);
    return {
      concurrency: n,
      worstCaseUsd: worst,
      capUsd: budget.monthlyCapUsd,
      arithmetic: `metered: every run charged and admitted under the cap by the ledger (unmetered worst case ${budgetArithmetic(n, size, budget, fixed)})`,
    };
  }
  if (budget.maxConcurrentTasks !== undefined) {
    const n = budget.maxConcurrentTasks;
    if (!fits(n)) {
      const hint = affordable === 0 ? "not even one task fits" : `at most ${affordable} fit`;
      return { refusal: `worst case ${budgetArithmetic(n, size, budget, fixed)} > cap ${cap} (${hint})` };
    }
    return plan(n);
  }
  if (affordable === 0) {
    return {
      refusal: `worst case ${budgetArithmetic(1, size, budget, fixed)} > cap ${cap} (not even one task fits)`,
    };
  }
  return plan(affordable);
}
