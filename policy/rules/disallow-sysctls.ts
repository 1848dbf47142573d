import { unchecked, violation } from "./helpers";
import { defineRule, type Finding } from "./types";

/**
 * A sysctl name in its dotted form: a name whose first separator is `/` has every `/` and `.` swapped, as the kubelet
 * converts it (k8s.io/component-helpers node/util/sysctl ConvertSysctlVariableToDotsSeparator) and as runc writes it
 * under /proc/sys (`net/ipv4/ping_group_range` is `net.ipv4.ping_group_range`).
 */
export function dottedSysctl(name: string): string {
  const first = /[./]/.exec(name);
  if (first === null || first[0] === ".") return name;
  return name.replace(/[./]/g, (c) => (c === "." ? "/" : "."));
}

/** No kernel parameter is set for the task (none by default; a team may allow a list such as PSA's safe set). */
export const disallowSysctls = defineRule({
  id: "sandbox-disallow-sysctls",
  description: "No workload sets kernel parameters (sysctls) outside the allowed list (empty by default).",
  mission: false,
  enforcementLevel: "mandatory",
  severity: "medium",
  crosswalk: { psa: ["sysctls"], kyverno: ["restrict-sysctls"], kubeLinter: ["unsafe-sysctls"] },
  subjects: ["workload"],
  configSchema: {
    properties: {
      allowed: {
        type: "array",
        items: { type: "string" },
        description: "sysctl names that may be set.",
        default: [],
      },
    },
  },
  defaults: { allowed: [] as string[] },
  remediationSteps: "Remove the sysctls; a sandbox task gets the kernel's defaults.",
  check(s, config) {
    if (s.subject !== "workload") return [];
    const out: Finding[] = [];
    const allowed = new Set(config.allowed.map((a) => dottedSysctl(a.trim())));
    if (s.sysctlsUnknown) out.push(unchecked("sysctls"));
    for (const x of s.sysctls) {
      if (typeof x.name !== "string") {
        out.push(unchecked("a sysctl name", x.path, x.name));
        continue;
      }
      if (!allowed.has(dottedSysctl(x.name.trim())))
        out.push(violation(`the workload sets the sysctl ${x.name.trim()}`, x.path));
    }
    return out;
  },
});
