import { violation } from "./helpers";
import { defineRule, type Finding } from "./types";

/**
 * A field the engine reads and the project has not classified is a finding, not a pass: the readers know the whole
 * input schema of the engine version they claim (policy/sources), and a field that schema does not have, or that
 * the project refuses (a legacy link, a log driver that ships output off the machine, a cgroup parent out of the
 * limits), fails closed here; so does a field of an operator's object outside its pinned CRD schema, or refused by
 * its operator's verdict table (policy/sources/kubernetes/crd-fields.ts). Opting out is named: `allowFields` lists the fields (as the schema names them, e.g.
 * `HostConfig.Annotations`) a project accepts, and every report says so through the rule's config.
 */
export const disallowUnjudgedFields = defineRule({
  id: "sandbox-disallow-unjudged-fields",
  description:
    "No field the engine reads that the project refuses or does not know (fields outside the claimed engine schema fail closed).",
  mission: false,
  enforcementLevel: "mandatory",
  severity: "high",
  // CWE-636, not failing securely: what the rules cannot judge must not pass as if judged.
  crosswalk: { cwe: ["636"] },
  subjects: ["workload", "fields"],
  configSchema: {
    properties: {
      allowFields: {
        type: "array",
        items: { type: "string" },
        description:
          "Fields to accept although the project refuses them or its schema does not have them, as the schema names them (`HostConfig.Annotations`, `NetworkingConfig.EndpointsConfig{}.Aliases`).",
      },
    },
  },
  defaults: { allowFields: [] as string[] },
  remediationSteps:
    "Remove the field, or write what it does with fields the rules judge; to accept it anyway, name it in the rule's allowFields.",
  check(s, config) {
    const out: Finding[] = [];
    if (s.subject !== "workload" && s.subject !== "fields") return out;
    const allowed = new Set(config.allowFields);
    for (const f of s.unjudgedFields ?? []) {
      if (allowed.has(f.field)) continue;
      out.push(violation(`${f.path} is not allowed: ${f.reason}`, f.path));
    }
    return out;
  },
});
