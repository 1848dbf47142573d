/**
 * Worst-case monthly spend of what a stack can run, as arithmetic a person can check. Built on the model's one
 * pricing formula and money comparison, so the pack, the components and the runtime agree on every cent.
 */
import {
  budgetArithmetic,
  priceArithmetic,
  type Rates,
  type TaskSize,
  taskMonthlyUsd,
  usd,
  withinCap,
} from "../../components/model";

/** One line of the worst case: `count` copies of `size`, always on. */
export interface SpendTerm {
  /** `tasks` for the task slots; otherwise a short label such as `proxy "egress"`. */
  readonly label: string;
  readonly count: number;
  readonly size: TaskSize;
  /** A bound in dollars instead of a size (a metered project's tasks: at most its own cap). */
  readonly usd?: number;
}

function termUsd(t: SpendTerm, rates: Rates): number {
  return t.usd ?? t.count * taskMonthlyUsd(t.size, rates);
}

/** `3 tasks × (1 vCPU × $0.004 + 1 GB × $0.002) × 730 h = $13.14`, or `proxy "p": 1 × (...) × 730 h = $1.46`. */
function termArithmetic(t: SpendTerm, rates: Rates): string {
  if (t.usd !== undefined) return `${t.label}: at most ${usd(t.usd)}`;
  if (t.label === "tasks") return budgetArithmetic(t.count, t.size, rates);
  return `${t.label}: ${t.count} × ${priceArithmetic(t.size, rates)} = ${usd(termUsd(t, rates))}`;
}

/** The sum of a stack's worst case, compared with a cap. */
export interface SpendVerdict {
  readonly totalUsd: number;
  readonly fits: boolean;
  /** `worst case <terms> > cap $10.00` (or `<=` when it fits). */
  readonly message: string;
}

/** Sums the terms and compares with the cap, printing the arithmetic. */
export function judgeSpend(terms: readonly SpendTerm[], rates: Rates, capUsd: number): SpendVerdict {
  const total = terms.reduce((sum, t) => sum + termUsd(t, rates), 0);
  const fits = withinCap(total, capUsd);
  const parts = terms.map((t) => termArithmetic(t, rates));
  const body =
    parts.length === 0
      ? "nothing = $0.00"
      : parts.length === 1
        ? (parts[0] ?? "")
        : `${parts.join(" + ")}; total ${usd(total)}`;
  return { totalUsd: total, fits, message: `worst case ${body} ${fits ? "<=" : ">"} cap ${usd(capUsd)}` };
}
