/**
 * What the meter holds a project to, read once from the resolved project: the cap, the rates, what runs all month,
 * the concurrency, the agents and the templates. The ledger (runtime/ledger/index.ts) admits and charges by it; the
 * components export it (`meter`), so a launcher of the library meters the project as the front does.
 */
import { taskMonthlyUsd, taskUsd } from "./budget";
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

/** Seconds the launcher waits past a template's deadline before it kills the task itself (its maximum charge). */
export const LAUNCHER_GRACE_SECONDS = 5;

/**
 * What the ledger can never admit, said before anything is deployed: a template whose one run's maximum charge
 * (its deadline plus the launcher's grace, at its size) exceeds the cap for runs (the cap less what runs all month),
 * or an agent's own cap, for a template the agent may use. Each such launch would be refused every time.
 */
export function admissionWarnings(p: ResolvedProject): string[] {
  const m = meterOf(p);
  const rates = { ...m.rates };
  const runsCap = Math.max(0, m.capUsd - m.fixedUsd);
  const usd = (n: number) => `$${n < 0.01 ? n.toPrecision(2) : n.toFixed(2)}`;
  const maxOf = (t: string) => {
    const tpl = p.spec.templates[t];
    if (tpl === undefined) return 0;
    const seconds = tpl.timeoutSeconds + LAUNCHER_GRACE_SECONDS;
    return taskUsd({ vcpu: tpl.resources.vcpu, memoryMb: tpl.resources.memoryMb }, rates, seconds);
  };
  const out: string[] = [];
  const fixed =
    m.fixedUsd > 0 ? ` (the cap ${usd(m.capUsd)} less ${usd(m.fixedUsd)} for what runs all month)` : "";
  for (const t of m.templates) {
    const max = maxOf(t);
    if (max > runsCap + 1e-9)
      out.push(
        `template ${t}: one run may charge up to ${usd(max)} (its ${p.spec.templates[t]?.timeoutSeconds} s deadline plus ${LAUNCHER_GRACE_SECONDS} s), more than the cap for runs ${usd(runsCap)}${fixed}: the ledger can never admit it; raise sandbox:budget.monthlyCapUsd or shorten the template's timeoutSeconds`,
      );
  }
  for (const [name, agent] of Object.entries(m.agents).sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (agent.monthlyCapUsd === undefined) continue;
    for (const t of agent.templates ?? m.templates) {
      const max = maxOf(t);
      if (max > agent.monthlyCapUsd + 1e-9 && max <= runsCap + 1e-9)
        out.push(
          `agent ${name}: its cap ${usd(agent.monthlyCapUsd)} admits no run of template ${t} (one run may charge up to ${usd(max)}): raise sandbox:agents.${name}.monthlyCapUsd or leave ${t} out of its templates`,
        );
    }
  }
  return out;
}
