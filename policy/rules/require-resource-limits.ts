import { isUnknown } from "../workload";
import { label, showNumber, unchecked, violation } from "./helpers";
import { defineRule, type Finding } from "./types";

const MB = 1024 * 1024;

/**
 * Every container has a memory and a CPU limit (pod-level limits count for Kubernetes), optionally below a
 * ceiling. Without limits the budget has no bound. Ephemeral containers have no resources field and are skipped.
 */
export const requireResourceLimits = defineRule({
  id: "sandbox-require-resource-limits",
  description:
    "Every container has a memory limit, a CPU limit and a process limit, within the configured maximums.",
  mission: false,
  enforcementLevel: "mandatory",
  severity: "medium",
  crosswalk: {
    cis: ["5.11", "5.12", "5.28"],
    kyverno: ["require-pod-requests-limits"],
    checkov: ["CKV_K8S_11", "CKV_K8S_13"],
    kubeLinter: ["unset-cpu-requirements", "unset-memory-requirements"],
    kubesec: ["LimitsCPU", "LimitsMemory"],
  },
  subjects: ["workload"],
  configSchema: {
    properties: {
      maxCpu: {
        type: "number",
        minimum: 0,
        description: "Largest CPU limit in cores (0 = no maximum).",
        default: 0,
      },
      maxMemoryMb: {
        type: "number",
        minimum: 0,
        description: "Largest memory limit in MB (0 = no maximum).",
        default: 0,
      },
      requireNoSwap: {
        type: "boolean",
        description: "Docker: require memorySwap equal to memory (no swap).",
        default: false,
      },
      requirePidsLimit: {
        type: "boolean",
        description:
          "Docker Engine API bodies (the launcher's and `docker create`'s): require PidsLimit above 0. A process limit set to 0 or less is refused everywhere.",
        default: true,
      },
    },
  },
  defaults: { maxCpu: 0, maxMemoryMb: 0, requireNoSwap: false, requirePidsLimit: true },
  remediationSteps:
    "Set limits: Docker `memory` (MB) and `cpus`; Kubernetes `resources.limits.memory` and `resources.limits.cpu`.",
  check(s, config) {
    if (s.subject !== "workload") return [];
    const out: Finding[] = [];
    for (const c of s.containers) {
      if (c.resourcesNotSupported) continue;
      const who = label(c);
      const mem = c.memoryLimitBytes === undefined ? s.podLimits.memoryBytes : c.memoryLimitBytes;
      const cpu = c.cpuLimit === undefined ? s.podLimits.cpu : c.cpuLimit;
      if (isUnknown(mem)) out.push(unchecked(`the memory limit of ${who}`, c.path, mem));
      else if (mem === undefined || mem <= 0) out.push(violation(`${who} has no memory limit`, c.path));
      else if (config.maxMemoryMb > 0 && mem > config.maxMemoryMb * MB) {
        out.push(
          violation(
            `${who} has a memory limit of ${showNumber(mem / MB)} MB, above the maximum ${config.maxMemoryMb} MB`,
            c.path,
          ),
        );
      }
      if (isUnknown(cpu)) out.push(unchecked(`the CPU limit of ${who}`, c.path, cpu));
      else if (cpu === undefined || cpu <= 0) out.push(violation(`${who} has no CPU limit`, c.path));
      else if (config.maxCpu > 0 && cpu > config.maxCpu) {
        out.push(
          violation(
            `${who} has a CPU limit of ${showNumber(cpu)} cores, above the maximum ${config.maxCpu}`,
            c.path,
          ),
        );
      }
      // The process limit is the fork-bomb wall (CIS Docker 5.28). @pulumi/docker cannot express it and Kubernetes
      // sets it per node, so only an explicit unlimited value is judged there; an Engine body must carry one.
      const pids = c.pidsLimit;
      if (isUnknown(pids)) out.push(unchecked(`the process limit of ${who}`, c.path, pids));
      else if (typeof pids === "number" && pids <= 0)
        out.push(violation(`${who} has no process limit (PidsLimit ${pids} is unlimited)`, c.path));
      else if (pids === undefined && config.requirePidsLimit && s.origin.backend === "launch")
        out.push(
          violation(`${who} has no process limit (PidsLimit): a fork bomb can exhaust the host`, c.path),
        );
      if (config.requireNoSwap && typeof mem === "number" && mem > 0) {
        const swap = c.memorySwapBytes;
        if (isUnknown(swap)) out.push(unchecked(`memorySwap of ${who}`, c.path, swap));
        else if (swap !== mem && s.origin.backend !== "kubernetes")
          out.push(violation(`${who} may swap: memorySwap is not equal to memory`, c.path));
      }
    }
    return out;
  },
});
