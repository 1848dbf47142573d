import {
  type BudgetFacts,
  DEFAULT_RATES,
  type Rates,
  type TaskSize,
  taskMonthlyUsd,
} from "../../components/model";
import { parseQuantity } from "../quantity";
import { parseKubeType } from "../sources/kubernetes/workloads";
import { at, field, str } from "../sources/lenient";
import { isUnknown, type Val, type WorkloadView } from "../workload";
import { autoscaledReplicas } from "./autoscalers";
import { type BudgetConfig, judgeFacts, type ProjectFacts, readBudgetFacts } from "./budget-facts-reader";
import { referencedWorkloads } from "./referenced-workloads";
import { judgeSpend, type SpendTerm } from "./spend";
import { defineStackRule, type StackFinding, type StackResource } from "./types";

/** The components' type tokens; each registers its {@link BudgetFacts} as `budgetFacts`. */
export const SANDBOX_PROJECT_TYPES = ["sandbox:docker:SandboxProject", "sandbox:kubernetes:SandboxProject"];

const MB = 1024 * 1024;

/** What the stack runs, per project label: task templates, always-on containers, and what cannot be bounded. */
interface Usage {
  /** Task workloads; a probe is one run of its template, so it takes a slot but never adds one. */
  tasks: { size: TaskSize; name: string; probe: boolean }[];
  always: SpendTerm[];
  /** Things with no limit: nothing bounds their spend. */
  unbounded: string[];
  /** Things whose size is not known yet (preview). */
  uncertain: string[];
}

function newUsage(): Usage {
  return { tasks: [], always: [], unbounded: [], uncertain: [] };
}

/**
 * The size of a workload, or why it has none. Docker: its one container. Kubernetes, as the scheduler sizes a pod
 * (resourcehelper PodRequests): its regular containers and its sidecars (init containers with `restartPolicy:
 * Always`, which run for the pod's whole life) together, or a plain init container with the sidecars beside it,
 * whichever is larger. A regular container or sidecar with no limit is unbounded; a plain init container with none is
 * left out, as before (it ends before the task starts).
 */
function workloadSize(w: WorkloadView): TaskSize | "unbounded" | "unknown" {
  const sidecarPaths = new Set(
    (w.lifecycle.containerRestarts ?? []).filter((r) => r.restart === "always").map((r) => r.path),
  );
  const limitsOf = (c: WorkloadView["containers"][number]): { cpu: Val<number>; mem: Val<number> } => ({
    cpu: c.cpuLimit === undefined ? w.podLimits.cpu : c.cpuLimit,
    mem: c.memoryLimitBytes === undefined ? w.podLimits.memoryBytes : c.memoryLimitBytes,
  });
  let vcpu = 0;
  let mem = 0;
  const sidecars = { cpu: 0, mem: 0 };
  const plainInits: { cpu: number; mem: number }[] = [];
  for (const c of w.containers) {
    const sidecar = c.role === "init" && sidecarPaths.has(c.path);
    if (c.role === "ephemeral") continue;
    const { cpu, mem: m } = limitsOf(c);
    if (c.role === "init" && !sidecar) {
      if (typeof cpu === "number" && typeof m === "number" && cpu > 0 && m > 0)
        plainInits.push({ cpu, mem: m });
      continue;
    }
    if (isUnknown(cpu) || isUnknown(m)) return "unknown";
    if (cpu === undefined || m === undefined || m <= 0 || cpu <= 0) return "unbounded";
    vcpu += cpu;
    mem += m;
    if (sidecar) {
      sidecars.cpu += cpu;
      sidecars.mem += m;
    }
    if (w.origin.backend !== "kubernetes") break;
  }
  for (const i of plainInits) {
    vcpu = Math.max(vcpu, i.cpu + sidecars.cpu);
    mem = Math.max(mem, i.mem + sidecars.mem);
  }
  return { vcpu, memoryMb: mem / MB };
}

function namespaceOf(r: StackResource): string | undefined | "unknown" {
  const ns = str(at(r.props, "metadata.namespace"));
  if (isUnknown(ns)) return "unknown";
  return ns;
}

/**
 * Stack rule: worst-case monthly spend stays within the cap, with the arithmetic in the message.
 *
 * Each SandboxProject component registers its {@link BudgetFacts} as `budgetFacts` (among its inputs and its outputs);
 * the rule reads them with one reader against the model's schema (anything else fails closed) and judges, per project:
 * - the component's own plan, recomputed from the facts: the admitted concurrency × the slot size + the always-on
 *   part (the proxy) must equal the worst case the facts declare and fit the cap;
 * - what the stack runs under the project's `sandbox.project` label, against the same cap and rates: task slots =
 *   the admitted concurrency (at least one per task workload) × the largest task container (Docker,
 *   `sandbox.role=task`) or PodTemplate; every other container, and every pod carrier (replicas × limits) outside a
 *   namespace with a ResourceQuota, runs all month; a ResourceQuota's `limits.cpu`/`limits.memory` bounds its
 *   namespace.
 * A metered project (`enforce: metered`) runs its tasks through the ledger, which admits each run under the cap: its
 * slots are not priced all month; its always-on part must fit the cap, each agent's cap must be at most the
 * project's, and task containers the stack deploys itself (outside the ledger) are priced as running all month.
 * With `monthlyCapUsd` in the pack config, each project's plan and everything the stack runs are judged against that
 * cap at the configured rates as well. Limits not known at preview are a note when the known part fits.
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
      usdPerVcpuHour: {
        type: "number",
        minimum: 0,
        description: "Price of one vCPU-hour (the stack-wide cap's rate; a component's facts carry its own).",
        default: DEFAULT_RATES.usdPerVcpuHour,
      },
      usdPerGbHour: {
        type: "number",
        minimum: 0,
        description:
          "Price of one GB-hour of memory (the stack-wide cap's rate; a component's facts carry its own).",
        default: DEFAULT_RATES.usdPerGbHour,
      },
      hoursPerMonth: {
        type: "number",
        minimum: 1,
        description:
          "Hours in the billing month (for the stack-wide cap; a component's facts carry its own).",
        default: DEFAULT_RATES.hoursPerMonth,
      },
      maxConcurrentTasks: {
        type: "integer",
        minimum: 1,
        description:
          "Tasks that may run at once per project that has no SandboxProject component (a component's facts give its admitted figure).",
        default: 1,
      },
      concurrency: {
        type: "object",
        additionalProperties: { type: "integer", minimum: 0 },
        description:
          "Per-project concurrency (by the sandbox.project label), overriding the component's figure and maxConcurrentTasks.",
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
    ...DEFAULT_RATES,
    maxConcurrentTasks: 1,
    concurrency: {},
    daemonSetNodes: 1,
  },
  remediationSteps:
    "Raise the cap, lower the concurrency, or shrink the task limits; on Kubernetes add a ResourceQuota with limits.cpu and limits.memory.",
  check(resources, config) {
    const out: StackFinding[] = [];
    const budgets: ProjectFacts[] = [];
    for (const r of resources) {
      if (!SANDBOX_PROJECT_TYPES.includes(r.type)) continue;
      const read = readBudgetFacts(r);
      if ("facts" in read) budgets.push(read);
      else out.push(read);
    }
    if (config.monthlyCapUsd === undefined && budgets.length === 0) return out;

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

    const scaled = autoscaledReplicas(resources, namespaceOf);

    const workloadOf = referencedWorkloads(resources);
    for (const r of resources) {
      const w = workloadOf(r);
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
      // A probe container is one deadline-bound run of its template at deploy time: priced as a task in a slot, not
      // as something on all month, but only when nothing restarts it.
      const isProbe = w.role === "probe" && w.lifecycle?.restart === "never";
      // A controller that restarts its pods for ever (a Deployment, a StatefulSet) is always on, whatever its label.
      const isTask =
        !w.lifecycle.restartForcedByController &&
        (w.origin.kind === "PodTemplate" || w.role === "task" || isProbe);
      if (size === "unknown") {
        usage.uncertain.push(`the limits of ${label}`);
        continue;
      }
      if (size === "unbounded") {
        usage.unbounded.push(label);
        continue;
      }
      if (isTask) {
        // A task Job runs `parallelism` pods at once: each is a slot.
        if (isUnknown(w.replicas)) {
          usage.uncertain.push(`the parallelism of ${label}`);
          continue;
        }
        const copies = typeof w.replicas === "number" ? Math.max(1, w.replicas) : 1;
        for (let i = 0; i < copies; i++) usage.tasks.push({ size, name: label, probe: isProbe });
        continue;
      }
      let count = 1;
      if (w.origin.kind === "DaemonSet") count = config.daemonSetNodes;
      else if (isUnknown(w.replicas)) {
        usage.uncertain.push(`the replicas of ${label}`);
        continue;
      } else if (typeof w.replicas === "number") count = Math.max(0, w.replicas);
      const own = at(r.props, "metadata.name");
      const autoscaled = scaled.get(
        `${namespaceOf(r) ?? "default"}/${w.origin.kind}/${typeof own === "string" ? own : "?"}`,
      );
      if (isUnknown(autoscaled)) {
        usage.uncertain.push(`the maxReplicas of the autoscaler of ${label}`);
        continue;
      }
      if (typeof autoscaled === "number") count = Math.max(count, autoscaled);
      if (count > 0)
        usage.always.push({ label: w.role === undefined ? label : `${w.role} ${label}`, count, size });
    }

    const termsOf = (
      project: string,
      u: Usage,
      r: Rates,
      componentConcurrency: number | undefined,
      metered?: { capUsd: number; ownCap: boolean },
    ): SpendTerm[] => {
      const terms: SpendTerm[] = [];
      if (metered !== undefined) {
        // The launcher's runs are charged by the ledger under the project's cap; task containers the stack itself
        // deploys (and its probes) run outside the ledger, so each is priced as running all month.
        const deployed = u.tasks.map((t) => ({ label: `task ${t.name}`, count: 1, size: t.size }));
        if (!metered.ownCap)
          terms.push({
            label: `metered tasks of project "${project}"`,
            count: 0,
            size: { vcpu: 0, memoryMb: 0 },
            usd: metered.capUsd,
          });
        return [...terms, ...deployed, ...u.always];
      }
      if (u.tasks.length > 0) {
        const largest = u.tasks.reduce((a, b) =>
          taskMonthlyUsd(b.size, r) > taskMonthlyUsd(a.size, r) ? b : a,
        );
        const slots = config.concurrency[project] ?? componentConcurrency ?? config.maxConcurrentTasks;
        const workloads = u.tasks.filter((t) => !t.probe).length;
        terms.push({ label: "tasks", count: Math.max(slots, workloads), size: largest.size });
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

    // Per project, against the cap its SandboxProject component declares: its own plan, then what the stack runs.
    for (const b of budgets) {
      const f = b.facts;
      out.push(...judgeFacts(b, config));
      const u = byProject.get(f.project) ?? newUsage();
      const quotas = [...quotaTerms].filter(([ns]) => quotaProjects.get(ns) === f.project).map(([, t]) => t);
      report(
        f.budget.monthlyCapUsd,
        [
          ...termsOf(
            f.project,
            u,
            f.budget,
            f.maxConcurrentTasks,
            f.enforce === "metered" ? { capUsd: f.budget.monthlyCapUsd, ownCap: true } : undefined,
          ),
          ...quotas,
        ],
        u,
        f.budget,
        b.urn,
        `project "${f.project}": `,
      );
    }
    // The whole stack, against the cap the pack config gives: a metered project spends up to its own cap, whatever
    // the stack deploys for it.
    for (const b of budgets) if (b.facts.enforce === "metered") usageFor(b.facts.project);
    if (config.monthlyCapUsd !== undefined) {
      const r: Rates = config;
      const all = newUsage();
      const terms: SpendTerm[] = [];
      for (const [project, u] of byProject) {
        const b = budgets.find((x) => x.facts.project === project);
        terms.push(
          ...termsOf(
            project,
            u,
            r,
            b?.facts.maxConcurrentTasks,
            b?.facts.enforce === "metered"
              ? { capUsd: b.facts.budget.monthlyCapUsd, ownCap: false }
              : undefined,
          ),
        );
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
