import { isUnknown } from "../workload";
import { unchecked, violation } from "./helpers";
import { defineRule, type Finding } from "./types";

/**
 * The runtime a Docker container runs under: Docker (v23 and later) also takes a containerd shim's name as the runtime
 * (`io.containerd.runsc.v1` is gVisor's runsc, `io.containerd.kata.v2` Kata, `io.containerd.runc.v2` runc), so the
 * shim name is the runtime it names. Kubernetes names a RuntimeClass, whose handler another rule judges.
 */
export function dockerRuntimeName(r: string, backend: string): string {
  if (backend === "kubernetes") return r;
  const m = /^io\.containerd\.([a-z0-9-]+)\.v\d+$/.exec(r);
  return m?.[1] ?? r;
}

/** When the platform requires a stronger wall (gVisor, Kata), the workload names one of the allowed runtimes. */
export const requireRuntimeClass = defineRule({
  id: "sandbox-require-runtime-class",
  description:
    "When runtimes are configured, every workload runs on one of them (Kubernetes runtimeClassName, Docker runtime).",
  mission: false,
  enforcementLevel: "advisory",
  severity: "medium",
  crosswalk: { kyverno: ["restrict-runtimeClassName"] },
  subjects: ["workload"],
  configSchema: {
    properties: {
      allowed: {
        type: "array",
        items: { type: "string" },
        description:
          "Allowed runtime classes / Docker runtimes, e.g. [gvisor, runsc, kata]. Empty: not required.",
        default: [],
      },
    },
  },
  defaults: { allowed: [] as string[] },
  remediationSteps:
    "Set `runtimeClassName` (Kubernetes) or `runtime` (Docker) to an allowed sandboxed runtime.",
  check(s, config) {
    if (s.subject !== "workload" || config.allowed.length === 0) return [];
    const out: Finding[] = [];
    const r = s.runtimeClass;
    const key = s.origin.backend === "kubernetes" ? "runtimeClassName" : "runtime";
    const path = s.origin.backend === "kubernetes" ? `${s.podPath}.runtimeClassName` : "runtime";
    if (isUnknown(r)) out.push(unchecked(key, path, r));
    else if (r === undefined || !config.allowed.includes(dockerRuntimeName(r.trim(), s.origin.backend))) {
      out.push(
        violation(
          `${key} is ${r === undefined ? "not set" : r.trim()}; allowed: ${config.allowed.join(", ")}`,
          path,
        ),
      );
    }
    return out;
  },
});
