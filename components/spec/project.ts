import { z } from "zod";
import { type BudgetPlan, BudgetSchema, planBudget, type TaskSize } from "./budget";
import { joinKey, parseOrThrow, SpecError, strictObject } from "./errors";
import { NetworkSchema } from "./network";
import { type Template, TemplateSchema } from "./template";

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
  /** The budget plan for the largest template. */
  readonly budget: BudgetPlan;
  /** The template the budget was planned for (the most expensive one). */
  readonly largestTemplate: string;
  /** Host folder under which job folders are created. */
  readonly jobRoot: string;
}

/** The most expensive template per hour, and its size. */
export function largestTemplate(
  templates: Readonly<Record<string, Template>>,
  spec: ProjectSpec,
): [string, TaskSize] {
  let best: [string, TaskSize] = ["", { vcpu: 0, memoryMb: 0 }];
  let bestCost = -1;
  for (const [name, t] of Object.entries(templates)) {
    const size = { vcpu: t.resources.vcpu, memoryMb: t.resources.memoryMb };
    const cost = size.vcpu * spec.budget.usdPerVcpuHour + (size.memoryMb / 1024) * spec.budget.usdPerGbHour;
    if (cost > bestCost || (cost === bestCost && name < best[0])) {
      best = [name, size];
      bestCost = cost;
    }
  }
  return best;
}

/**
 * Validates a raw project (from stack config or code) and proves its budget. Throws one SpecError naming every
 * bad key; a budget whose worst case exceeds the cap is refused with the arithmetic.
 */
export function resolveProject(input: unknown, keyPrefix = ""): ResolvedProject {
  const spec = parseOrThrow(ProjectSchema, input, keyPrefix);
  const [largest, size] = largestTemplate(spec.templates, spec);
  const plan = planBudget(size, spec.budget, spec.enabled);
  if ("refusal" in plan) {
    const key =
      spec.budget.maxConcurrentTasks === undefined ? "budget.monthlyCapUsd" : "budget.maxConcurrentTasks";
    throw new SpecError([
      {
        key: joinKey(keyPrefix, key),
        value: String(spec.budget.maxConcurrentTasks ?? spec.budget.monthlyCapUsd),
        message: `${plan.refusal}, for template "${largest}"; raise the cap, lower the concurrency or shrink the template`,
      },
    ]);
  }
  return {
    spec,
    budget: plan,
    largestTemplate: largest,
    jobRoot: spec.jobRoot ?? `/var/lib/sandbox-projects/${spec.name}`,
  };
}
