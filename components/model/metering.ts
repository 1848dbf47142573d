/**
 * What the meter holds a project to, read once from the resolved project: the cap, the rates, what runs all month,
 * the concurrency, the agents and the templates. The ledger (runtime/ledger.ts) admits and charges by it; the
 * components export it (`meter`), so a launcher of the library meters the project as the front does.
 */
import { taskMonthlyUsd } from "./budget";
import type { Agents } from "./meter";
import { alwaysOnCost, type ResolvedProject } from "./project";

/** What the meter holds a project to: read once from the resolved project ({@link meterOf}). */
export interface Meter {
  readonly project: string;
  readonly enforce: "worst-case" | "metered";
  /** The monthly cap in US dollars. */
  readonly capUsd: number;
  /** What runs all month whatever the tasks do (the proxy), paid before any run. */
  readonly fixedUsd: number;
  readonly rates: { readonly usdPerVcpuHour: number; readonly usdPerGbHour: number };
  /** Tasks of the project that may run at once, across every launcher process. */
  readonly concurrency: number;
  readonly agents: Agents;
  readonly templates: readonly string[];
  /** False when the project is disabled: nothing is admitted. */
  readonly enabled: boolean;
}

/** The meter of a resolved project. */
export function meterOf(p: ResolvedProject): Meter {
  const fixed = p.spec.enabled ? alwaysOnCost(p.spec) : undefined;
  return {
    project: p.spec.name,
    enforce: p.spec.budget.enforce,
    capUsd: p.spec.budget.monthlyCapUsd,
    fixedUsd: fixed === undefined ? 0 : taskMonthlyUsd(fixed.size, p.spec.budget),
    rates: { usdPerVcpuHour: p.spec.budget.usdPerVcpuHour, usdPerGbHour: p.spec.budget.usdPerGbHour },
    concurrency: p.budget.concurrency,
    agents: p.spec.agents,
    templates: Object.keys(p.spec.templates).sort(),
    enabled: p.spec.enabled,
  };
}
