import { type TaskSize, taskMonthlyUsd } from "../../components/model";
import { parseKubeType } from "../adapters/kubernetes";
import { at, field, num, str } from "../adapters/read";
import { parseQuantity } from "../quantity";
import { isUnknown, type WorkloadView } from "../workload";
import { judgeSpend, type Rates, type SpendTerm } from "./spend";
import { defineStackRule, type StackFinding, type StackResource } from "./types";

/** The components' type tokens; their `budget` input is read when the engine shows it (it may not). */
export const SANDBOX_PROJECT_TYPES = ["sandbox:docker:SandboxProject", "sandbox:kubernetes:SandboxProject"];

const MB = 1024 * 1024;

interface BudgetConfig {
  monthlyCapUsd?: number;
  usdPerVcpuHour: number;
  usdPerGbHour: number;
  hoursPerMonth: number;
  maxConcurrentTasks: number;
  concurrency: Record<string, number>;
  daemonSetNodes: number;
}

/** What a SandboxProject component shows of its budget, read defensively (any field may be absent or unknown). */
interface ProjectBudget {
  readonly project: string;
  readonly cap: number | undefined;
  readonly rates: Partial<Rates>;
  readonly concurrency: number | undefined;
  readonly urn: string;
}

function knownNumber(v: unknown): number | undefined {
  const n = num(v);
  return typeof n === "number" ? n : undefined;
}

function componentBudget(r: StackResource): ProjectBudget | undefined {
  const p = r.props;
  const budget = [field(p, "budget"), at(p, "project.budget"), at(p, "spec.budget")].find(
    (b) => b !== undefined && !isUnknown(b),
  );
  const nameRaw = [str(field(p, "name")), str(at(p, "project.name")), str(at(p, "spec.name"))].find(
    (n) => typeof n === "string",
  );
  if (budget === undefined) return undefined;
  const rates: Partial<Rates> = {};
  const cpu = knownNumber(field(budget, "usdPerVcpuHour"));
  const gb = knownNumber(field(budget, "usdPerGbHour"));
  const hours = knownNumber(field(budget, "hoursPerMonth"));
  if (cpu !== undefined) rates.usdPerVcpuHour = cpu;
  if (gb !== undefined) rates.usdPerGbHour = gb;
  if (hours !== undefined) rates.hoursPerMonth = hours;
  return {
    project: typeof nameRaw === "string" ? nameRaw : r.name,
    cap: knownNumber(field(budget, "monthlyCapUsd")),
    rates,
    concurrency: knownNumber(field(budget, "maxConcurrentTasks")),
    urn: r.urn,
  };
}

/** What the stack runs, per project label: task templates, always-on containers, and what cannot be bounded. */
interface Usage {
  tasks: { size: TaskSize; name: string }[];
  always: SpendTerm[];
  /** Things with no limit: nothing bounds their spend. */
  unbounded: string[];
  /** Things whose size is not known yet (preview). */
  uncertain: string[];
}

function newUsage(): Usage {
  return { tasks: [], always: [], unbounded: [], uncertain: [] };
}

/** The size of a workload (sum of its regular containers' limits), or why it has none. */
function workloadSize(w: WorkloadView): TaskSize | "unbounded" | "unknown" {
  let vcpu = 0;
  let mem = 0;
  for (const c of w.containers) {
    if (c.role !== "container") continue;
    const cpu = c.cpuLimit === undefined ? w.podLimits.cpu : c.cpuLimit;
    const m = c.memoryLimitBytes === undefined ? w.podLimits.memoryBytes : c.memoryLimitBytes;
    if (isUnknown(cpu) || isUnknown(m)) return "unknown";
    if (cpu === undefined || m === undefined || m <= 0 || cpu <= 0) return "unbounded";
    vcpu += cpu;
    mem += m;
    if (w.origin.backend !== "kubernetes") break;
  }
  return { vcpu, memoryMb: mem / MB };
}

function namespaceOf(r: StackResource): string | undefined | "unknown" {
  const ns = str(at(r.props, "metadata.namespace"));
  if (isUnknown(ns)) return "unknown";
  return ns;
}

/**
 * Stack rule: worst-case monthly spend of everything the stack can run stays within the cap, with the arithmetic in
 * the message. Task slots = concurrency × the largest task container (Docker, `sandbox.role=task`) or PodTemplate;
 * every other container, and every pod carrier (replicas × limits) outside a namespace with a ResourceQuota, runs
 * all month; a ResourceQuota's `limits.cpu`/`limits.memory` bounds its namespace.
 */
export const requireBudgetBound = defineStackRule<BudgetConfig>({
  id: "sandbox-require-budget-bound",
  description: "The worst-case monthly spend of everything in the stack stays within the project's cap.",
  mission: false,
  enforcementLevel: "mandatory",
  severity: "high",
  crosswalk: { kyverno: ["add-ns-quota"], checkov: ["CKV_K8S_21"] },
  configSchema: {
    properties: {
      monthlyCapUsd: {
        type: "number",
        minimum: 0,
        description:
          "The cap in US dollars per month for the whole stack. Without it, the SandboxProject components' caps are used.",
      },
      usdPerVcpuHour: { type: "number", minimum: 0, description: "Price of one vCPU-hour.", default: 0.004 },
      usdPerGbHour: {
        type: "number",
        minimum: 0,
        description: "Price of one GB-hour of memory.",
        default: 0.002,
      },
      hoursPerMonth: { type: "number", minimum: 1, description: "Hours in the billing month.", default: 730 },
      maxConcurrentTasks: {
        type: "integer",
        minimum: 1,
        description: "Tasks that may run at once per project.",
        default: 1,
      },
      concurrency: {
        type: "object",
        additionalProperties: { type: "integer", minimum: 0 },
        description: "Per-project concurrency (by the sandbox.project label), overriding maxConcurrentTasks.",
        default: {},
      },
      daemonSetNodes: {
        type: "integer",
        minimum: 1,
        description: "Nodes a DaemonSet is priced on.",
        default: 1,
      },
    },
  },
  defaults: {
    usdPerVcpuHour: 0.004,
    usdPerGbHour: 0.002,
    hoursPerMonth: 730,
    maxConcurrentTasks: 1,
    concurrency: {},
    daemonSetNodes: 1,
  },
  remediationSteps:
    "Raise the cap, lower the concurrency, or shrink the task limits; on Kubernetes add a ResourceQuota with limits.cpu and limits.memory.",
  check(resources, config) {
    const out: StackFinding[] = [];
    const budgets = resources.map(componentBudget).filter((b): b is ProjectBudget => b !== undefined);
    if (config.monthlyCapUsd === undefined && budgets.every((b) => b.cap === undefined)) return out;

    // Namespaces bounded by a ResourceQuota, priced at the quota.
    const quotaTerms = new Map<string, SpendTerm>();
    const quotaProjects = new Map<string, string>();
    const stackUsage = newUsage();
    const byProject = new Map<string, Usage>();
    const usageFor = (project: string | undefined) => {
      const key = project ?? "";
      let u = byProject.get(key);
      if (u === undefined) {
        u = newUsage();
        byProject.set(key, u);
      }
      return u;
    };
    let unknownQuotaNamespace = false;
    for (const r of resources) {
      if (parseKubeType(r.type)?.kind !== "ResourceQuota") continue;
      const hard = at(r.props, "spec.hard");
      const cpu = field(hard, "limits.cpu");
      const mem = field(hard, "limits.memory");
      const ns = namespaceOf(r);
      if (isUnknown(cpu) || isUnknown(mem) || ns === "unknown") {
        unknownQuotaNamespace = true;
        stackUsage.uncertain.push(`ResourceQuota "${r.name}"`);
        continue;
      }
      const c = parseQuantity(cpu);
      const m = parseQuantity(mem);
      if (c === undefined || m === undefined) continue; // not a bound on both; its namespace's pods are priced one by one
      const projectLabel = str(field(at(r.props, "metadata.labels"), "sandbox.project"));
      if (typeof projectLabel === "string") quotaProjects.set(ns ?? "default", projectLabel);
      quotaTerms.set(ns ?? "default", {
        label: `ResourceQuota "${r.name}" (namespace ${ns ?? "default"})`,
        count: 1,
        size: { vcpu: c, memoryMb: m / MB },
      });
    }

    for (const r of resources) {
      const w = r.subject;
      if (w === undefined || w.subject !== "workload") continue;
      const label = `${w.origin.kind} "${w.origin.name}"`;
      if (w.origin.backend === "kubernetes") {
        const ns = namespaceOf(r);
        if (ns === "unknown") {
          if (quotaTerms.size > 0 || unknownQuotaNamespace) {
            stackUsage.uncertain.push(`the namespace of ${label}`);
            continue;
          }
        } else if (quotaTerms.has(ns ?? "default")) continue;
      }
      const size = workloadSize(w);
      const usage = usageFor(w.project);
      const isTask = w.origin.kind === "PodTemplate" || w.role === "task";
      if (size === "unknown") {
        usage.uncertain.push(`the limits of ${label}`);
        continue;
      }
      if (size === "unbounded") {
        usage.unbounded.push(label);
        continue;
      }
      if (isTask) {
        usage.tasks.push({ size, name: label });
        continue;
      }
      let count = 1;
      if (w.origin.kind === "DaemonSet") count = config.daemonSetNodes;
      else if (isUnknown(w.replicas)) {
        usage.uncertain.push(`the replicas of ${label}`);
        continue;
      } else if (typeof w.replicas === "number") count = Math.max(0, w.replicas);
      if (count > 0)
        usage.always.push({ label: w.role === undefined ? label : `${w.role} ${label}`, count, size });
    }

    const rates = (over: Partial<Rates>): Rates => ({
      usdPerVcpuHour: over.usdPerVcpuHour ?? config.usdPerVcpuHour,
      usdPerGbHour: over.usdPerGbHour ?? config.usdPerGbHour,
      hoursPerMonth: over.hoursPerMonth ?? config.hoursPerMonth,
    });
    const termsOf = (
      project: string,
      u: Usage,
      r: Rates,
      componentConcurrency: number | undefined,
    ): SpendTerm[] => {
      const terms: SpendTerm[] = [];
      if (u.tasks.length > 0) {
        const largest = u.tasks.reduce((a, b) =>
          taskMonthlyUsd(b.size, { monthlyCapUsd: 0, ...r }) >
          taskMonthlyUsd(a.size, { monthlyCapUsd: 0, ...r })
            ? b
            : a,
        );
        const slots = config.concurrency[project] ?? componentConcurrency ?? config.maxConcurrentTasks;
        terms.push({ label: "tasks", count: Math.max(slots, u.tasks.length), size: largest.size });
      }
      return [...terms, ...u.always];
    };
    const report = (
      cap: number,
      terms: SpendTerm[],
      u: Usage,
      r: Rates,
      urn: string | undefined,
      scope: string,
    ) => {
      for (const x of u.unbounded)
        out.push({
          message: `${scope}${x} has no CPU or memory limit, so nothing bounds its spend under the cap`,
          ...(urn ? { urn } : {}),
        });
      const verdict = judgeSpend(terms, r, cap);
      if (!verdict.fits) out.push({ message: `${scope}${verdict.message}`, ...(urn ? { urn } : {}) });
      else if (u.uncertain.length > 0) {
        out.push({
          message: `${scope}the budget bound could not be fully checked (${u.uncertain.join(", ")} not known until the update); known part: ${verdict.message}`,
          unchecked: true,
        });
      }
    };

    // Per project, against the cap its SandboxProject component declares.
    for (const b of budgets) {
      if (b.cap === undefined) continue;
      const u = byProject.get(b.project) ?? newUsage();
      const r = rates(b.rates);
      const quotas = [...quotaTerms].filter(([ns]) => quotaProjects.get(ns) === b.project).map(([, t]) => t);
      report(
        b.cap,
        [...termsOf(b.project, u, r, b.concurrency), ...quotas],
        u,
        r,
        b.urn,
        `project "${b.project}": `,
      );
    }
    // The whole stack, against the cap the pack config gives.
    if (config.monthlyCapUsd !== undefined) {
      const r = rates({});
      const all = newUsage();
      const terms: SpendTerm[] = [];
      for (const [project, u] of byProject) {
        const b = budgets.find((x) => x.project === project);
        terms.push(...termsOf(project, u, r, b?.concurrency));
        all.unbounded.push(...u.unbounded);
        all.uncertain.push(...u.uncertain);
      }
      terms.push(...quotaTerms.values());
      all.uncertain.push(...stackUsage.uncertain);
      report(config.monthlyCapUsd, terms, all, r, undefined, "");
    }
    return out;
  },
});
