import { z } from "zod";
import { BrokerSchema } from "./broker";
import { BROKER_RESOURCES, checkBroker } from "./broker-spec";
import { type BudgetPlan, BudgetSchema, type FixedCost, planBudget, type TaskSize } from "./budget";
import { joinKey, parseOrThrow, SpecError, type SpecProblem, strictObject } from "./errors";
import { AgentsSchema, AlertSinksSchema } from "./meter";
import { NetworkSchema } from "./network";
import { PROXY_RESOURCES } from "./proxy";
import { RUNSC_POD_MIN_PIDS, type Template, TemplateSchema } from "./template";

const NAME_RULE =
  "lower-case letters, digits and -, starting with a letter and not ending with -, at most 32 characters";
const NAME = /^[a-z](?:[a-z0-9-]{0,30}[a-z0-9])?$/;

/** A sandbox project: a budget, a private network and the task templates, on one backend. */
export const ProjectSchema = strictObject({
  /** The project's name: it prefixes every object and labels it for the off switch. */
  name: z.string({ error: `name must be ${NAME_RULE}` }).regex(NAME, { error: `name must be ${NAME_RULE}` }),
  /** Where the project runs: `docker` (one machine) or `kubernetes`. Defaults to `docker`. */
  backend: z
    .enum(["docker", "kubernetes"], { error: 'backend must be "docker" or "kubernetes"' })
    .default("docker"),
  /** `false` is the hard stop: nothing new may start (the allowance drops to zero). Defaults to `true`. */
  enabled: z.boolean({ error: "enabled must be true or false" }).default(true),
  /** The monthly cap and the rates that price a task. */
  budget: BudgetSchema,
  /** The private network. Defaults to an engine-chosen subnet and proxy port 3128. */
  network: NetworkSchema.default({ proxyPort: 3128 }),
  /** Host folder under which each task's job folder is created. Defaults to `/var/lib/sandbox-projects/<name>`. */
  jobRoot: z
    .string({ error: "jobRoot must be an absolute host path" })
    .regex(/^\/./, { error: "jobRoot must be an absolute host path other than /" })
    .refine((p) => !p.split("/").includes(".."), { error: "jobRoot must not contain .. segments" })
    .optional(),
  /** Run the self-check probe of every template at `up`. Defaults to `true`. */
  probe: z.boolean({ error: "probe must be true or false" }).default(true),
  /**
   * The agents that may launch tasks, each with its templates, monthly cap and concurrency (the ledger enforces
   * them). Defaults to none: any launch is admitted under the project's own limits.
   */
  agents: AgentsSchema.default({}),
  /**
   * The secrets broker: keyed upstreams that templates naming a route may call without holding the key. Defaults
   * to none.
   */
  broker: BrokerSchema.optional(),
  /** Where the ledger's alerts go besides its own record. Defaults to one line on stderr. */
  alerts: AlertSinksSchema.default({ stderr: true }),
  /** The task templates by name. At least one. */
  templates: z
    .record(z.string().regex(NAME, { error: `template names must be ${NAME_RULE}` }), TemplateSchema, {
      error: (iss) =>
        iss.code === "invalid_type" ? "templates must be a mapping of template name to template" : undefined,
    })
    .refine((t) => Object.keys(t).length > 0, { error: "at least one template is required" }),
});
export type ProjectInput = z.input<typeof ProjectSchema>;
export type ProjectSpec = z.output<typeof ProjectSchema>;

/** A checked project: the spec plus what was derived from it. */
export interface ResolvedProject {
  readonly spec: ProjectSpec;
  /** The budget plan for a slot as large as the largest template in every dimension. */
  readonly budget: BudgetPlan;
  /** What the budget priced one slot at: the largest vCPU, memory and disk of any template. */
  readonly slot: SlotSize;
  /** Which templates the slot's size comes from, in words (`"big"`, or `"cpu" (vCPU), "mem" (memory)`). */
  readonly largestTemplate: string;
  /** Host folder under which job folders are created. */
  readonly jobRoot: string;
}

/** The size one task slot is priced and reserved at. */
export interface SlotSize extends TaskSize {
  readonly diskMb: number;
}

/**
 * The slot size that covers every template: the largest vCPU, memory and disk of any of them. Pricing this
 * envelope (not only the most expensive template) keeps the proof true on Kubernetes, whose quota bounds CPU and
 * memory separately, and is what lets any template run in any slot.
 */
export function slotSize(templates: Readonly<Record<string, Template>>): [string, SlotSize] {
  const entries = Object.entries(templates).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const pick = (f: (t: Template) => number) =>
    entries.reduce<[string, number]>((best, [n, t]) => (f(t) > best[1] ? [n, f(t)] : best), ["", -1]);
  const [cpuFrom, vcpu] = pick((t) => t.resources.vcpu);
  const [memFrom, memoryMb] = pick((t) => t.resources.memoryMb);
  const [, diskMb] = pick((t) => t.resources.diskMb);
  const label = cpuFrom === memFrom ? `"${cpuFrom}"` : `"${cpuFrom}" (vCPU) and "${memFrom}" (memory)`;
  return [label, { vcpu, memoryMb, diskMb }];
}

/**
 * Validates a raw project (from stack config or code) and proves its budget. Throws one SpecError naming every
 * bad key; a budget whose worst case exceeds the cap is refused with the arithmetic.
 */
export function resolveProject(input: unknown, keyPrefix = ""): ResolvedProject {
  const spec = parseOrThrow(ProjectSchema, input, keyPrefix);
  const [largest, size] = slotSize(spec.templates);
  const plan = planBudget(size, spec.budget, spec.enabled, alwaysOnCost(spec));
  // Every problem at once: the budget's, and the cross-field checks (agents against a refused budget are judged
  // against no concurrency of its own).
  const budgetProblems: SpecProblem[] = [];
  if ("refusal" in plan) {
    const key =
      spec.budget.maxConcurrentTasks === undefined ? "budget.monthlyCapUsd" : "budget.maxConcurrentTasks";
    budgetProblems.push({
      key: joinKey(keyPrefix, key),
      value: String(spec.budget.maxConcurrentTasks ?? spec.budget.monthlyCapUsd),
      message: `${plan.refusal}, for a slot the size of template ${largest}; raise the cap, lower the concurrency or shrink the template`,
    });
  }
  const concurrency = "refusal" in plan ? Number.POSITIVE_INFINITY : plan.concurrency;
  const problems = [
    ...budgetProblems,
    ...checkMeter(spec, concurrency, keyPrefix),
    ...checkBroker(spec, keyPrefix),
    ...checkPodProcesses(spec, keyPrefix),
    ...checkPools(spec, "refusal" in plan ? undefined : plan, keyPrefix),
  ];
  if (problems.length > 0 || "refusal" in plan) throw new SpecError(problems);
  return {
    spec,
    budget: plan,
    slot: size,
    largestTemplate: largest,
    jobRoot: spec.jobRoot ?? `/var/lib/sandbox-projects/${spec.name}`,
  };
}

/**
 * What a project runs all month whatever its tasks do, paid before any task slot: the egress proxy, whenever a
 * template uses it, and the secrets broker, whenever a template calls it; nothing otherwise. On Docker each such
 * template has a proxy or broker container of its own (see service-units), each priced; on Kubernetes one of each
 * serves every template.
 */
export function alwaysOnCost(spec: ProjectSpec): FixedCost | undefined {
  const templates = Object.values(spec.templates);
  const perTemplate = spec.backend !== "kubernetes";
  const count = (n: number) => (perTemplate ? n : Math.min(n, 1));
  const proxies = count(templates.filter((t) => t.egress.mode === "proxy").length);
  const brokers = spec.broker === undefined ? 0 : count(templates.filter((t) => t.broker.length > 0).length);
  if (proxies === 0 && brokers === 0) return undefined;
  const parts = [
    ...(proxies > 0 ? [`${proxies} ${proxies === 1 ? "proxy" : "proxies"}`] : []),
    ...(brokers > 0 ? [`${brokers} ${brokers === 1 ? "broker" : "brokers"}`] : []),
  ];
  return {
    // The size is the bundle's whole: more than one container is named as a bundle, e.g. `(2 proxies + 1 broker)`.
    label: proxies + brokers > 1 ? `(${parts.join(" + ")})` : (parts[0] ?? ""),
    size: {
      vcpu: proxies * PROXY_RESOURCES.vcpu + brokers * BROKER_RESOURCES.vcpu,
      memoryMb: proxies * PROXY_RESOURCES.memoryMb + brokers * BROKER_RESOURCES.memoryMb,
    },
  };
}

/**
 * Pools (`templates.<name>.pool`): members wait started, so each holds one of the budget's slots all month: the pools
 * together fit the budget's concurrency, whose worst case the budget's proof already priced. A pool needs the Docker
 * backend, and a template without a network of its own per task (proxy mode and broker routes make one at launch).
 */
export function checkPools(spec: ProjectSpec, plan: BudgetPlan | undefined, keyPrefix = ""): SpecProblem[] {
  const pooled = Object.entries(spec.templates)
    .filter(([, t]) => t.pool !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  const problems: SpecProblem[] = [];
  const key = (name: string, k: string) => joinKey(keyPrefix, `templates.${name}.${k}`);
  for (const [name, t] of pooled) {
    if (spec.backend === "kubernetes") {
      problems.push({
        key: key(name, "pool"),
        value: JSON.stringify(t.pool),
        message:
          "pre-started pool members run on the Docker backend only (on Kubernetes every launch creates its pod); remove pool or use backend docker",
      });
    } else if (t.egress.mode === "proxy" || t.broker.length > 0) {
      problems.push({
        key: key(name, "pool"),
        value: JSON.stringify(t.pool),
        message: `template ${name} gets a network of its own per task at launch (${t.egress.mode === "proxy" ? "egress mode proxy" : "broker routes"}), so its tasks cannot wait started; pools serve templates with egress mode none and no broker routes`,
      });
    }
  }
  if (plan === undefined || !spec.enabled || pooled.length === 0) return problems;
  const sizes = pooled.map(([, t]) => t.pool?.size ?? 0);
  const total = sizes.reduce((a, b) => a + b, 0);
  if (total > plan.concurrency) {
    const [last] = pooled.at(-1) ?? [""];
    problems.push({
      key: key(last, "pool.size"),
      value: String(pooled.at(-1)?.[1].pool?.size),
      message: `pools hold ${sizes.join(" + ")} = ${total} slots, each started all month, but the budget allows ${plan.concurrency} at once (${plan.arithmetic}); shrink the pools or raise the concurrency`,
    });
  }
  return problems;
}

/**
 * On Kubernetes a template's process limit is the pod's (the node's podPidsLimit, which the template declares), and
 * under gVisor the sandbox's own threads for the task and its results holder count in it: a runsc template declares
 * at least {@link RUNSC_POD_MIN_PIDS}.
 */
export function checkPodProcesses(spec: ProjectSpec, keyPrefix = ""): SpecProblem[] {
  if (spec.backend !== "kubernetes") return [];
  return Object.entries(spec.templates)
    .filter(([, t]) => t.runtime === "runsc" && t.resources.pids < RUNSC_POD_MIN_PIDS)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, t]) => ({
      key: joinKey(keyPrefix, `templates.${name}.resources.pids`),
      value: String(t.resources.pids),
      message: `on Kubernetes a runsc pod's process limit (the node's podPidsLimit, which pids declares) also holds gVisor's own threads for the task and its results holder (76 on a 2-core node): pids must be at least ${RUNSC_POD_MIN_PIDS}, and the node's podPidsLimit as large`,
    }));
}

/**
 * The meter's cross-field checks: every agent's templates exist, its cap is at most the project's and its
 * concurrency at most the project's. Both backends' launchers keep the ledger, so a metered budget runs on either.
 */
export function checkMeter(spec: ProjectSpec, concurrency: number, keyPrefix = ""): SpecProblem[] {
  const problems: SpecProblem[] = [];
  const templates = Object.keys(spec.templates).sort();
  for (const [name, agent] of Object.entries(spec.agents).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const key = (k: string) => joinKey(keyPrefix, `agents.${name}.${k}`);
    for (const [i, t] of (agent.templates ?? []).entries()) {
      if (!templates.includes(t)) {
        problems.push({
          key: `${key("templates")}[${i}]`,
          value: JSON.stringify(t),
          message: `no such template; the project has: ${templates.join(", ")}`,
        });
      }
    }
    if (agent.monthlyCapUsd !== undefined && agent.monthlyCapUsd > spec.budget.monthlyCapUsd) {
      problems.push({
        key: key("monthlyCapUsd"),
        value: String(agent.monthlyCapUsd),
        message: `an agent's cap must be at most the project's cap (${spec.budget.monthlyCapUsd})`,
      });
    }
    // A disabled project runs nothing: its agents' limits are zero by that alone, whatever they say.
    if (spec.enabled && agent.maxConcurrentTasks !== undefined && agent.maxConcurrentTasks > concurrency) {
      problems.push({
        key: key("maxConcurrentTasks"),
        value: String(agent.maxConcurrentTasks),
        message: `an agent's concurrency must be at most the project's (${concurrency})`,
      });
    }
  }
  return problems;
}
