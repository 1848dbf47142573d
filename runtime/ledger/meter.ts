/**
 * The meter's arithmetic, pure: what runs have used and when their spend reaches a cap, whether a launch is
 * admitted (or the refusal, with the arithmetic), the alerts a closed run raises, and the month-to-date report. The
 * ledger (runtime/ledger/index.ts) reads the rows and writes the outcome; everything here is priced by the model's one
 * formula (`taskUsd`), the same the budget proof uses.
 */
import { runArithmetic, taskUsd, usd, usdFine, withinCap } from "../../components/model";
import {
  type AdmitRequest,
  type AlertInput,
  BudgetRefused,
  type Meter,
  monthStart,
  nextMonthStart,
  type RunRecord,
  type SpendReport,
} from "./records";

/**
 * What a run has used by `t`: its price for the time since admission, at most its maximum and its end; or, when
 * `ran` is given (the seconds it ran, as the engine knows them), the price of those seconds.
 */
export function usedBy(run: RunRecord, rates: Meter["rates"], t: number, ran?: number): number {
  if (run.status !== "open") return run.chargeUsd ?? 0;
  if (ran !== undefined) return taskUsd(run.size, rates, Math.max(0, ran));
  const seconds = Math.min(run.maxSeconds, Math.max(0, (t - run.admittedAt) / 1000));
  return taskUsd(run.size, rates, seconds);
}

/** USD per millisecond while a run is open. */
function burn(run: RunRecord, rates: Meter["rates"]): number {
  return taskUsd(run.size, rates, 1) / 1000;
}

/**
 * The moment the spend of `runs` reaches `limitUsd`, given what each has used at `now` and that each stops at its
 * maximum; undefined when it never does.
 */
export function reachTime(
  view: MonthView,
  rates: Meter["rates"],
  limitUsd: number,
  now: number,
  agent?: string | null,
): number | undefined {
  const runs = agent === undefined ? view.open : view.open.filter((r) => r.agent === agent);
  let remaining = limitUsd - spentIn(view, rates, now, agent);
  if (remaining <= 1e-9) return now;
  let t = now;
  let active = runs
    .filter((r) => r.status === "open" && r.admittedAt + r.maxSeconds * 1000 > now)
    .map((r) => ({ rate: burn(r, rates), end: r.admittedAt + r.maxSeconds * 1000 }))
    .sort((a, b) => a.end - b.end);
  while (active.length > 0) {
    const rate = active.reduce((s, a) => s + a.rate, 0);
    const next = active[0]?.end ?? t;
    if (rate > 0 && rate * (next - t) >= remaining) return t + remaining / rate;
    remaining -= rate * (next - t);
    t = next;
    active = active.filter((a) => a.end > t);
  }
  return undefined;
}

/** A month as the meter reads it: what closed runs were charged (in all and by agent), and the open runs. */
export interface MonthView {
  readonly closedUsd: number;
  readonly closedByAgent: ReadonlyMap<string | null, number>;
  readonly open: readonly RunRecord[];
}

/** The month's spend at `t` (of one agent when given): closed charges plus what open runs have used. */
export function spentIn(view: MonthView, rates: Meter["rates"], t: number, agent?: string | null): number {
  const closed = agent === undefined ? view.closedUsd : (view.closedByAgent.get(agent) ?? 0);
  const open = agent === undefined ? view.open : view.open.filter((r) => r.agent === agent);
  return open.reduce((s, r) => s + usedBy(r, rates, t), closed);
}

/** What the caps leave for runs: the cap less what runs all month. */
export function runsCap(m: Meter): number {
  return Math.max(0, m.capUsd - m.fixedUsd);
}

/** True when `spent` has reached the cap for runs (the block on launches and `up`). */
export function atCap(spent: number, cap: number): boolean {
  return spent >= cap - 1e-9;
}

/**
 * Why a launch is refused, or undefined when it is admitted: the project is enabled, its agent (when one is named and
 * agents are configured) is known and may use the template (a run of no agent is the operator's own), and the
 * project's and the agent's concurrency and caps hold with the run's maximum charge. `openRuns` counts the project's open runs of every month.
 */
export function admissionRefusal(
  m: Meter,
  view: MonthView,
  openRuns: number,
  req: AdmitRequest,
  now: number,
): BudgetRefused | undefined {
  const refuse = (message: string, reason: BudgetRefused["reason"]) =>
    new BudgetRefused(`launch of template "${req.template}" refused: ${message}`, reason);
  const maxCharge = taskUsd(req.size, m.rates, req.maxSeconds);
  const agent = req.agent ?? null;
  const agents = Object.keys(m.agents);
  const profile = agent === null ? undefined : m.agents[agent];
  const spent = spentIn(view, m.rates, now);
  const cap = runsCap(m);
  const fixed =
    m.fixedUsd > 0 ? ` (cap ${usd(m.capUsd)} less ${usdFine(m.fixedUsd)} for what runs all month)` : "";
  const arithmetic = (base: number) =>
    `month-to-date spend ${usdFine(base)} + this run's maximum ${runArithmetic(req.size, m.rates, req.maxSeconds)} = ${usdFine(base + maxCharge)}`;
  if (!m.enabled) return refuse(`project "${m.project}" is disabled (the hard stop)`, "disabled");
  // No agent: the operator's own run, under the project's cap and concurrency only.
  if (agents.length > 0 && agent !== null && profile === undefined) {
    return refuse(`agent "${agent}" is not one of the project's agents (${agents.join(", ")})`, "agent");
  }
  if (profile?.templates !== undefined && !profile.templates.includes(req.template)) {
    return refuse(`agent "${agent}" may use only the templates ${profile.templates.join(", ")}`, "agent");
  }
  if (atCap(spent, cap)) {
    const month = new Date(now).toISOString().slice(0, 7);
    return refuse(
      `the month's spend ${usdFine(spent)} has reached the cap for runs ${usdFine(cap)}${fixed}; new launches and \`up\` are refused until the cap is raised or the month turns (${new Date(nextMonthStart(month)).toISOString()})`,
      "cap",
    );
  }
  if (!withinCap(spent + maxCharge, cap)) {
    return refuse(`${arithmetic(spent)} > the cap for runs ${usdFine(cap)}${fixed}`, "cap");
  }
  if (openRuns >= m.concurrency) {
    return refuse(
      `${openRuns} tasks of project "${m.project}" are running, its limit is ${m.concurrency}`,
      "concurrency",
    );
  }
  if (profile === undefined || agent === null) return undefined;
  const mineOpen = view.open.filter((r) => r.agent === agent).length;
  if (profile.maxConcurrentTasks !== undefined && mineOpen >= profile.maxConcurrentTasks) {
    return refuse(
      `agent "${agent}" has ${mineOpen} tasks running, its limit is ${profile.maxConcurrentTasks}`,
      "concurrency",
    );
  }
  const mineSpent = spentIn(view, m.rates, now, agent);
  if (profile.monthlyCapUsd !== undefined && !withinCap(mineSpent + maxCharge, profile.monthlyCapUsd)) {
    return refuse(
      `agent "${agent}": ${arithmetic(mineSpent)} > its cap ${usdFine(profile.monthlyCapUsd)}`,
      "agent",
    );
  }
  return undefined;
}

/** The escape signals a closed run raises: proxy refusals, limits hit, a launcher kill, a stop at the cap. */
export function signalAlerts(run: RunRecord): AlertInput[] {
  const who = `run ${run.id} (template ${run.template}${run.agent === null ? "" : `, agent ${run.agent}`})`;
  const denied = run.egress.filter((d) => (d as { decision?: string }).decision === "denied") as {
    method?: string;
    host?: string;
    port?: number;
  }[];
  const what = denied.map((d) => `${d.method ?? ""} ${d.host ?? ""}:${d.port ?? ""}`.trim()).join(", ");
  // The broker's own refusals (a wall said no, no upstream was asked), as escape signals.
  const refusedCalls = run.broker.filter((c) => (c as { refused?: boolean }).refused === true) as {
    method?: string;
    path?: string;
    status?: number;
  }[];
  const signals: [boolean, AlertInput["kind"], string][] = [
    [denied.length > 0, "proxy-refused", `${who}: the proxy refused ${what}`],
    [
      refusedCalls.length > 0,
      "broker-refused",
      `${who}: the broker refused ${refusedCalls.map((c) => `${c.method ?? ""} ${c.path ?? ""} (${c.status ?? ""})`).join(", ")}`,
    ],
    [run.limits.length > 0, "limit-hit", `${who} hit its limits: ${run.limits.join(", ")}`],
    [
      run.killedByLauncher && run.stoppedBy !== "cap",
      "launcher-kill",
      `${who} outlived its deadline; the launcher killed it`,
    ],
    [
      run.stoppedBy === "cap",
      "stopped-by-cap",
      `${who} was stopped at the cap, charged ${usdFine(run.chargeUsd ?? 0)}`,
    ],
  ];
  return signals
    .filter(([raised]) => raised)
    .map(([, kind, message]) => ({ kind, message, agent: run.agent, runId: run.id }));
}

/** Month to date from the month's runs at `now`: spend, what is left, by template and agent, and the forecast. */
export function spendReport(m: Meter, month: string, runs: readonly RunRecord[], now: number): SpendReport {
  const at = Math.min(now, nextMonthStart(month));
  const cap = runsCap(m);
  const byTemplate: Record<string, number> = {};
  const byAgent: Record<string, number> = {};
  let spent = 0;
  for (const r of runs) {
    const u = usedBy(r, m.rates, at);
    spent += u;
    byTemplate[r.template] = (byTemplate[r.template] ?? 0) + u;
    const a = r.agent ?? "(none)";
    byAgent[a] = (byAgent[a] ?? 0) + u;
  }
  const start = monthStart(month);
  const elapsed = Math.max(1, at - start);
  return {
    project: m.project,
    month,
    enforce: m.enforce,
    capUsd: m.capUsd,
    fixedUsd: m.fixedUsd,
    runsCapUsd: cap,
    spentUsd: spent,
    leftUsd: Math.max(0, cap - spent),
    fraction: cap > 0 ? spent / cap : 1,
    forecastUsd: Math.min(cap, (spent / elapsed) * (nextMonthStart(month) - start)),
    runs: runs.length,
    open: runs.filter((r) => r.status === "open").length,
    byTemplate,
    byAgent,
    blocked: atCap(spent, cap),
  };
}

/**
 * The budget alerts the month's spend at `now` calls for: 80, 90 and 100 % of the cap for runs, and each agent at
 * its own cap. Each carries the key that makes it fire once per month and cap.
 */
export function thresholdAlerts(
  m: Meter,
  month: string,
  view: MonthView,
  now: number,
): { alert: AlertInput; onceKey: string }[] {
  const out: { alert: AlertInput; onceKey: string }[] = [];
  const cap = runsCap(m);
  if (cap <= 0) return out;
  const spent = spentIn(view, m.rates, now);
  for (const pct of [80, 90, 100] as const) {
    if (!withinCap(cap * (pct / 100), spent)) continue;
    const kind = `budget-${pct}` as const;
    const message =
      pct === 100
        ? `project "${m.project}" reached its cap: ${usdFine(spent)} of ${usdFine(cap)} for runs this month; running work is stopped, new launches and \`up\` are refused until the cap is raised or the month turns`
        : `project "${m.project}" spent ${usdFine(spent)} of ${usdFine(cap)} for runs this month (${pct} %)`;
    out.push({ alert: { kind, message }, onceKey: `${m.project}:${month}:${kind}:${Math.round(cap * 1e6)}` });
  }
  for (const [agent, profile] of Object.entries(m.agents)) {
    if (profile.monthlyCapUsd === undefined || profile.monthlyCapUsd <= 0) continue;
    const mine = spentIn(view, m.rates, now, agent);
    if (!withinCap(profile.monthlyCapUsd, mine)) continue;
    out.push({
      alert: {
        kind: "agent-budget-100",
        agent,
        message: `agent "${agent}" reached its cap: ${usdFine(mine)} of ${usdFine(profile.monthlyCapUsd)} this month`,
      },
      onceKey: `${m.project}:${month}:agent:${agent}:${Math.round(profile.monthlyCapUsd * 1e6)}`,
    });
  }
  return out;
}
