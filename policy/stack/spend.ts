/**
 * Worst-case monthly spend of what a stack can run, as arithmetic a person can check. Built on the budget module's
 * pricing so the pack, the components and the runtime agree on every cent.
 */
import {
  type Budget,
  budgetArithmetic,
  memoryGb,
  type TaskSize,
  taskMonthlyUsd,
  trimNumber,
  usd,
} from "../../components/model";

/** One line of the worst case: `count` copies of `size`, always on. */
export interface SpendTerm {
  /** `tasks` for the task slots; otherwise a short label such as `proxy "egress"`. */
  readonly label: string;
  readonly count: number;
  readonly size: TaskSize;
}

/** Rates and hours (the cap is compared separately). */
export type Rates = Pick<Budget, "usdPerVcpuHour" | "usdPerGbHour" | "hoursPerMonth">;

function asBudget(rates: Rates, cap: number): Budget {
  return { monthlyCapUsd: cap, ...rates, maxConcurrentTasks: undefined };
}

export function termUsd(t: SpendTerm, rates: Rates): number {
  return t.count * taskMonthlyUsd(t.size, asBudget(rates, 0));
}

/** `3 tasks × (1 vCPU × $0.004 + 1 GB × $0.002) × 730 h = $13.14`, or `proxy "p": 1 × (...) × 730 h = $1.46`. */
export function termArithmetic(t: SpendTerm, rates: Rates): string {
  const budget = asBudget(rates, 0);
  if (t.label === "tasks") return budgetArithmetic(t.count, t.size, budget);
  const cpu = `${trimNumber(t.size.vcpu)} vCPU × $${trimNumber(rates.usdPerVcpuHour)}`;
  const mem = `${trimNumber(memoryGb(t.size.memoryMb), 3)} GB × $${trimNumber(rates.usdPerGbHour)}`;
  return `${t.label}: ${t.count} × (${cpu} + ${mem}) × ${trimNumber(rates.hoursPerMonth)} h = ${usd(termUsd(t, rates))}`;
}

// Money is compared in millionths of a dollar, as in components/model/budget.ts.
const micro = (x: number) => Math.round(x * 1_000_000);

export interface SpendVerdict {
  readonly totalUsd: number;
  readonly fits: boolean;
  /** `worst case <terms> > cap $10.00` (or `<=` when it fits). */
  readonly message: string;
}

/** Sums the terms and compares with the cap, printing the arithmetic. */
export function judgeSpend(terms: readonly SpendTerm[], rates: Rates, capUsd: number): SpendVerdict {
  const total = terms.reduce((sum, t) => sum + termUsd(t, rates), 0);
  const fits = micro(total) <= micro(capUsd);
  const parts = terms.map((t) => termArithmetic(t, rates));
  const body =
    parts.length === 0
      ? "nothing = $0.00"
      : parts.length === 1
        ? (parts[0] ?? "")
        : `${parts.join(" + ")}; total ${usd(total)}`;
  return { totalUsd: total, fits, message: `worst case ${body} ${fits ? "<=" : ">"} cap ${usd(capUsd)}` };
}
