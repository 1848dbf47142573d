/**
 * What the budget admits on Kubernetes: the namespace's ResourceQuota (task slots of the largest template, plus the
 * always-on proxy and broker pods) and the LimitRange that gives a container without limits the defaults. Plain objects; the
 * component only wires them.
 */
import {
  type BrokerSpec,
  type Budget,
  budgetArithmetic,
  type ProxySpec,
  taskMonthlyUsd,
  trimNumber,
  usd,
} from "../model";
import { BROKER_DISK_MIB } from "./broker";
import { HOLDER_RESOURCES } from "./pod";
import { PROXY_DISK_MIB } from "./proxy";
import { cpuQuantity, mibQuantity } from "./quantities";

/** What a quota admits, derived from the budget: everything at once costs at most the cap. */
export interface QuotaPlan {
  /** Tasks (pods, and Jobs) at once. */
  readonly tasks: number;
  /** Total vCPU limits the namespace may hold. */
  readonly vcpu: number;
  /** Total memory limits in MiB. */
  readonly memoryMib: number;
  /** Total ephemeral storage in MiB. */
  readonly diskMib: number;
  /** Worst-case monthly spend of the task slots the quota admits (the proxy's share, {@link QuotaExtra}, is on top). */
  readonly worstCaseUsd: number;
  /** The arithmetic, for outputs and messages. */
  readonly arithmetic: string;
}

/**
 * The quota for `tasks` slots of the largest template. The quota bounds the namespace's total CPU and memory
 * limits, so its worst case is (total vCPU × $/vCPU-h + total GB × $/GB-h) × hours, at most the plan's task slots
 * (the totals are rounded down): with the proxy's share on top, at most the cap. A disabled project gets a zero
 * quota: nothing new can start.
 */
export function quotaPlan(
  tasks: number,
  largest: { vcpu: number; memoryMb: number; diskMb: number },
  budget: Budget,
): QuotaPlan {
  // Millicores and MiB are what the API stores; round down so the quota never admits more than was priced.
  const vcpu = Math.floor(Math.round(tasks * largest.vcpu * 1_000_000) / 1000) / 1000;
  const memoryMib = Math.floor(tasks * largest.memoryMb);
  const worstCaseUsd = taskMonthlyUsd({ vcpu, memoryMb: memoryMib }, budget);
  const arithmetic =
    tasks === 0
      ? `quota 0 (the project is disabled or the cap admits no task) = $0.00 ≤ cap ${usd(budget.monthlyCapUsd)}`
      : `quota ${budgetArithmetic(tasks, largest, budget)}: limits.cpu ${trimNumber(vcpu)}, limits.memory ${memoryMib}Mi ≤ cap ${usd(budget.monthlyCapUsd)}`;
  return { tasks, vcpu, memoryMib, diskMib: tasks * largest.diskMb, worstCaseUsd, arithmetic };
}

/** What the always-on proxy pod takes from the namespace's quota (on top of the task slots). */
export interface QuotaExtra {
  readonly vcpu: number;
  readonly memoryMib: number;
  readonly diskMib: number;
  readonly pods: number;
}

/** The proxy's share of the quota: one pod of its limits, so it never takes a task's slot. */
export function proxyQuotaExtra(proxy: ProxySpec): QuotaExtra {
  return {
    vcpu: proxy.resources.vcpu,
    memoryMib: proxy.resources.memoryMb,
    diskMib: PROXY_DISK_MIB,
    pods: 1,
  };
}

/** The broker's share of the quota: one pod of its limits, like the proxy's. */
export function brokerQuotaExtra(broker: BrokerSpec): QuotaExtra {
  return {
    vcpu: broker.resources.vcpu,
    memoryMib: broker.resources.memoryMb,
    diskMib: BROKER_DISK_MIB,
    pods: 1,
  };
}

/**
 * The task pods' holders' share (components/kubernetes/pod.ts): each task slot's pod holds a small second container
 * with limits of its own, so the quota admits it on top of the slot the budget priced.
 */
export function holderQuotaExtra(tasks: number): QuotaExtra {
  return {
    vcpu: Math.round(tasks * HOLDER_RESOURCES.vcpu * 1000) / 1000,
    memoryMib: tasks * HOLDER_RESOURCES.memoryMb,
    diskMib: tasks * HOLDER_RESOURCES.diskMb,
    pods: 0,
  };
}

/** The always-on pods' shares together (undefined when there are none). */
export function sumQuotaExtras(extras: readonly (QuotaExtra | undefined)[]): QuotaExtra | undefined {
  const present = extras.filter((e): e is QuotaExtra => e !== undefined);
  if (present.length === 0) return undefined;
  return present.reduce((a, e) => ({
    vcpu: Math.round((a.vcpu + e.vcpu) * 1000) / 1000,
    memoryMib: a.memoryMib + e.memoryMib,
    diskMib: a.diskMib + e.diskMib,
    pods: a.pods + e.pods,
  }));
}

/**
 * The ResourceQuota's `hard` map for a plan, plus the always-on proxy pod when the project has one. Jobs are the
 * tasks' plus the stack's own probe Jobs (`probeJobs`, one per template when the probe is on): a finished probe Job
 * is kept for its log with its finished pod, and must never hold a task's slot (`pods` counts only pods that run;
 * `count/pods` and `count/jobs.batch` count every object).
 */
export function quotaHard(plan: QuotaPlan, extra?: QuotaExtra, probeJobs = 0): Record<string, string> {
  const e = extra ?? { vcpu: 0, memoryMib: 0, diskMib: 0, pods: 0 };
  const vcpu = Math.round((plan.vcpu + e.vcpu) * 1000) / 1000;
  return {
    "limits.cpu": cpuQuantity(vcpu),
    "limits.memory": mibQuantity(plan.memoryMib + e.memoryMib),
    "limits.ephemeral-storage": mibQuantity(plan.diskMib + e.diskMib),
    "requests.cpu": cpuQuantity(vcpu),
    "requests.memory": mibQuantity(plan.memoryMib + e.memoryMib),
    "requests.ephemeral-storage": mibQuantity(plan.diskMib + e.diskMib),
    pods: String(plan.tasks + e.pods),
    // count/pods counts finished pods too (`pods` only those that run): a kept probe Job keeps its pod.
    "count/pods": String(plan.tasks + e.pods + probeJobs),
    "count/jobs.batch": String(plan.tasks + probeJobs),
  };
}

/** The LimitRange: a container without limits gets `defaults`; one above the largest template is rejected. */
export function limitRangeSpec(
  defaults: { vcpu: number; memoryMb: number; diskMb: number },
  max: { vcpu: number; memoryMb: number; diskMb: number },
) {
  const q = (r: { vcpu: number; memoryMb: number; diskMb: number }) => ({
    cpu: cpuQuantity(r.vcpu),
    memory: mibQuantity(r.memoryMb),
    "ephemeral-storage": mibQuantity(r.diskMb),
  });
  const d = {
    vcpu: Math.min(defaults.vcpu, max.vcpu),
    memoryMb: Math.min(defaults.memoryMb, max.memoryMb),
    diskMb: Math.min(defaults.diskMb, max.diskMb),
  };
  // A task pod is its task container and its holder (components/kubernetes/pod.ts).
  const pod = {
    vcpu: Math.round((max.vcpu + HOLDER_RESOURCES.vcpu) * 1000) / 1000,
    memoryMb: max.memoryMb + HOLDER_RESOURCES.memoryMb,
    diskMb: max.diskMb + HOLDER_RESOURCES.diskMb,
  };
  return {
    limits: [
      { type: "Container", default: q(d), defaultRequest: q(d), max: q(max) },
      { type: "Pod", max: q(pod) },
    ],
  };
}
