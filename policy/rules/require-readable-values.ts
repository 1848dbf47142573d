import { violation } from "./helpers";
import { defineRule, type Finding } from "./types";

/**
 * A workload whose settings cannot be read cannot be judged, so it is refused: a Pulumi secret where a wall is set
 * (the input shows no value), a binary or tagged value, a pod spec of the wrong shape. Each rule that reads such a
 * field also fails closed on it; this rule covers the values no single rule reads as a field.
 */
export const requireReadableValues = defineRule({
  id: "sandbox-require-readable-values",
  description: "Every setting of a container or pod can be read, so every wall can be judged.",
  mission: false,
  enforcementLevel: "mandatory",
  severity: "high",
  crosswalk: { cwe: ["636", "20"] },
  subjects: ["workload"],
  defaults: {},
  remediationSteps:
    "Write the setting as a plain value of its type: no Pulumi secret where a wall is set (keep secrets out of the workload spec), no binary or tagged values.",
  check(s) {
    if (s.subject !== "workload") return [];
    const out: Finding[] = [];
    for (const p of s.unreadableParts)
      out.push(violation(`${p.path === "" ? "the resource" : p.path} cannot be read: ${p.reason}`, p.path));
    return out;
  },
});
