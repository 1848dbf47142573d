/**
 * The budget facts: what a `SandboxProject` component registers about its budget, as known values, so that a stack
 * policy can prove the budget at preview from what the engine shows it. One schema is the contract: the components
 * write it with {@link budgetFacts}, the stack rule `sandbox-require-budget-bound` reads it back with
 * {@link BudgetFactsSchema}, and a value of any other shape is not budget facts (the rule fails closed on it).
 */
import { z } from "zod";
import type { TaskSize } from "./budget";
import { strictObject } from "./errors";
import { alwaysOnCost, type ResolvedProject } from "./project";

const usdAmount = (what: string) =>
  z
    .number({ error: `${what} must be a number of US dollars, 0 or more` })
    .min(0, { error: `${what} must be a number of US dollars, 0 or more` });

const quantity = (what: string) =>
  z
    .number({ error: `${what} must be a number, 0 or more` })
    .min(0, { error: `${what} must be a number, 0 or more` });

const SizeSchema = strictObject({ vcpu: quantity("vcpu"), memoryMb: quantity("memoryMb") });

/** The budget facts' schema: the components' writer and the stack rule's reader are typed by it. */
export const BudgetFactsSchema = strictObject({
  /** The project's name: the `sandbox.project` label of everything it runs. */
  project: z
    .string({ error: "project must be the project's name" })
    .min(1, { error: "project must not be empty" }),
  /** The backend the project runs on. */
  backend: z.enum(["docker", "kubernetes"], { error: 'backend must be "docker" or "kubernetes"' }),
  /** `false` when the project is disabled (the hard stop: nothing is admitted). */
  enabled: z.boolean({ error: "enabled must be true or false" }),
  /** The cap and the rates the project is priced at, defaults filled in. */
  budget: strictObject({
    monthlyCapUsd: usdAmount("the monthly cap"),
    usdPerVcpuHour: usdAmount("the vCPU-hour rate"),
    usdPerGbHour: usdAmount("the GB-hour rate"),
    hoursPerMonth: z
      .number({ error: "hours per month must be a number, 1 or more" })
      .min(1, { error: "hours per month must be a number, 1 or more" }),
  }),
  /**
   * How the cap is held: `worst-case` (the slots' worst case must fit) or `metered` (the ledger charges every
   * launcher run and admits it under the cap). Absent: `worst-case`, the stricter reading.
   */
  enforce: z
    .enum(["worst-case", "metered"], { error: 'enforce must be "worst-case" or "metered"' })
    .default("worst-case"),
  /** Each agent's own monthly cap, where one is set (each must be at most the project's cap). */
  agentCapsUsd: z.record(z.string(), usdAmount("an agent's cap")).default({}),
  /** Tasks the project admits at once: the plan's figure (0 when disabled), not the concurrency setting as written. */
  maxConcurrentTasks: z
    .number({ error: "maxConcurrentTasks must be a whole number, 0 or more" })
    .int({ error: "maxConcurrentTasks must be a whole number, 0 or more" })
    .min(0, { error: "maxConcurrentTasks must be a whole number, 0 or more" }),
  /** The size one task slot is priced at: the largest vCPU and memory of any template. */
  slot: SizeSchema,
  /** What runs all month whatever the tasks do (the egress proxy), priced before the slots; absent when nothing does. */
  fixed: strictObject({
    label: z.string({ error: "fixed.label must be a text" }),
    size: SizeSchema,
  }).optional(),
  /** The worst case: `maxConcurrentTasks` slots plus the fixed part, all month, at the rates. */
  worstCaseUsd: usdAmount("the worst case"),
});

/** The budget facts a `SandboxProject` component registers, as `budgetFacts` among its inputs and its outputs. */
export type BudgetFacts = z.output<typeof BudgetFactsSchema>;

/**
 * Where a component registers its facts: the property `budgetFacts`, both among its inputs and among its registered
 * outputs. The engine shows a stack policy a component's outputs; a preview's JSON and `pulumi stack export` (what
 * `scan` reads) show its inputs; the facts are at the same place in both.
 */
export interface BudgetFactsProps {
  readonly budgetFacts: BudgetFacts;
}

const sizeOf = (s: TaskSize): BudgetFacts["slot"] => ({ vcpu: s.vcpu, memoryMb: s.memoryMb });

/** The budget facts of a resolved project: its admitted concurrency, slot, always-on part and worst case. */
export function budgetFacts(p: ResolvedProject): BudgetFacts {
  const { monthlyCapUsd, usdPerVcpuHour, usdPerGbHour, hoursPerMonth } = p.spec.budget;
  // A disabled project runs nothing, the proxy included: its plan prices nothing.
  const fixed = p.spec.enabled ? alwaysOnCost(p.spec) : undefined;
  return {
    project: p.spec.name,
    backend: p.spec.backend,
    enabled: p.spec.enabled,
    budget: { monthlyCapUsd, usdPerVcpuHour, usdPerGbHour, hoursPerMonth },
    enforce: p.spec.budget.enforce,
    agentCapsUsd: Object.fromEntries(
      Object.entries(p.spec.agents)
        .filter(([, a]) => a.monthlyCapUsd !== undefined)
        .map(([n, a]) => [n, a.monthlyCapUsd as number]),
    ),
    maxConcurrentTasks: p.budget.concurrency,
    slot: sizeOf(p.slot),
    ...(fixed === undefined ? {} : { fixed: { label: fixed.label, size: sizeOf(fixed.size) } }),
    worstCaseUsd: p.budget.worstCaseUsd,
  };
}
