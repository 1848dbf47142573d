/**
 * The budget facts a SandboxProject component registers, as `sandbox-require-budget-bound` reads and judges them:
 * one reader against the model's schema (anything else fails closed), and the component's own plan recomputed from
 * them.
 */
import {
  type BudgetFacts,
  type BudgetFactsProps,
  BudgetFactsSchema,
  budgetArithmetic,
  priceArithmetic,
  problemsFromZod,
  type Rates,
  renderProblem,
  sameUsd,
  taskMonthlyUsd,
  usd,
  withinCap,
  worstCaseMonthlyUsd,
} from "../../components/model";
import { unchecked } from "../rules/helpers";
import { field, REDACTED_SECRET, unreadable } from "../sources/lenient";
import { isUnreadable, UNKNOWN, type Unknown, type Unreadable } from "../workload";
import type { StackFinding, StackResource } from "./types";

export interface BudgetConfig extends Rates {
  monthlyCapUsd?: number;
  maxConcurrentTasks: number;
  concurrency: Record<string, number>;
  daemonSetNodes: number;
}

/** A SandboxProject component's budget facts, with the URN findings about them name. */
export interface ProjectFacts {
  readonly facts: BudgetFacts;
  readonly urn: string;
}

/** The first value in `v` (at any depth) the rule cannot read now: an unreadable one first, else a preview unknown. */
function unreadableIn(v: unknown): Unreadable | Unknown | undefined {
  if (isUnreadable(v)) return v;
  if (typeof v === "string" && v.includes(REDACTED_SECRET)) return unreadable(v, "a text");
  if (typeof v !== "object" || v === null) return v === UNKNOWN ? UNKNOWN : undefined;
  let found: Unknown | undefined;
  for (const x of Array.isArray(v) ? v : Object.values(v)) {
    const bad = unreadableIn(x);
    if (isUnreadable(bad)) return bad;
    if (bad === UNKNOWN) found = UNKNOWN;
  }
  return found;
}

/** The property a SandboxProject component registers its facts under, among its inputs and its outputs. */
const FACTS: keyof BudgetFactsProps = "budgetFacts";

/**
 * The one reader of a SandboxProject component's budget facts: its `budgetFacts` property, parsed with the schema
 * the components write it with. A value not known at preview is a note; a secret, or a value of any other shape (a
 * component of another toolkit version, facts written by hand, none at all), fails closed: a finding, never a pass.
 */
export function readBudgetFacts(r: StackResource): ProjectFacts | StackFinding {
  const what = `the budget facts of SandboxProject "${r.name}"`;
  const raw = field(r.props, FACTS);
  const bad = unreadableIn(raw);
  if (bad !== undefined) return { ...unchecked(what, undefined, bad), urn: r.urn };
  const parsed = BudgetFactsSchema.safeParse(raw);
  if (parsed.success) return { facts: parsed.data, urn: r.urn };
  const problems = problemsFromZod(parsed.error, raw, FACTS).map(renderProblem).join("; ");
  return {
    message: `${what} do not match the facts this policy reads (${problems}): a component of another toolkit version, or facts written by hand; the policy fails closed on them`,
    urn: r.urn,
  };
}

/**
 * The component's own plan, recomputed from its facts: the admitted concurrency of slots plus the always-on part
 * must add up to the worst case the facts declare and fit the project's cap, and, priced at the pack's rates, the
 * stack's cap when the pack config gives one (the stack's worst case is at least any one project's).
 */
export function judgeFacts({ facts: f, urn }: ProjectFacts, config: BudgetConfig): StackFinding[] {
  const scope = `project "${f.project}": `;
  const plan = (rates: Rates) => ({
    usd: worstCaseMonthlyUsd(f.maxConcurrentTasks, f.slot, rates, f.fixed),
    arithmetic: budgetArithmetic(f.maxConcurrentTasks, f.slot, rates, f.fixed),
  });
  const own = plan(f.budget);
  if (!sameUsd(own.usd, f.worstCaseUsd)) {
    return [
      {
        message: `${scope}the budget facts do not add up: they declare a worst case of ${usd(f.worstCaseUsd)}, but ${own.arithmetic}; the policy fails closed on them`,
        urn,
      },
    ];
  }
  const out: StackFinding[] = [];
  for (const [agent, cap] of Object.entries(f.agentCapsUsd).sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (!withinCap(cap, f.budget.monthlyCapUsd)) {
      out.push({
        message: `${scope}agent "${agent}" has a cap of ${usd(cap)} > the project's cap ${usd(f.budget.monthlyCapUsd)}`,
        urn,
      });
    }
  }
  if (f.enforce === "metered") {
    // The ledger holds the task spend under the cap run by run; what runs all month must still fit before it.
    const fixedUsd = f.fixed === undefined ? 0 : taskMonthlyUsd(f.fixed.size, f.budget);
    if (!withinCap(fixedUsd, f.budget.monthlyCapUsd)) {
      out.push({
        message: `${scope}the always-on part ${f.fixed?.label ?? ""} × ${priceArithmetic(f.fixed?.size ?? f.slot, f.budget)} = ${usd(fixedUsd)} > cap ${usd(f.budget.monthlyCapUsd)}, before any metered task`,
        urn,
      });
    }
    return out;
  }
  if (!withinCap(own.usd, f.budget.monthlyCapUsd)) {
    out.push({ message: `${scope}worst case ${own.arithmetic} > cap ${usd(f.budget.monthlyCapUsd)}`, urn });
  }
  if (config.monthlyCapUsd !== undefined) {
    const stack = plan(config);
    if (!withinCap(stack.usd, config.monthlyCapUsd)) {
      out.push({
        message: `${scope}worst case ${stack.arithmetic} > the stack's cap ${usd(config.monthlyCapUsd)}`,
        urn,
      });
    }
  }
  return out;
}
