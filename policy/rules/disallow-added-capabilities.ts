import { canonicalCapability } from "../../components/model";
import { label, showList, unchecked, violation } from "./helpers";
import { defineRule, type Finding } from "./types";

/**
 * Containers add no capability beyond an allowed set. By default the set is Pod Security `restricted`'s:
 * NET_BIND_SERVICE only (binding a port below 1024, which an unprivileged process inside its own network namespace
 * cannot abuse); `allowed: []` refuses every add, as the hardened template adds nothing.
 */
export const disallowAddedCapabilities = defineRule({
  id: "sandbox-disallow-added-capabilities",
  description:
    "No container adds a Linux capability outside the allowed set (NET_BIND_SERVICE by default, as PSA restricted).",
  mission: false,
  enforcementLevel: "mandatory",
  severity: "high",
  crosswalk: {
    cis: ["5.4"],
    psa: ["capabilities_baseline", "capabilities_restricted"],
    kyverno: ["disallow-capabilities", "disallow-capabilities-strict"],
    checkov: ["CKV_K8S_25", "CKV_K8S_39"],
    kubesec: ["CapSysAdmin"],
  },
  subjects: ["workload"],
  configSchema: {
    properties: {
      allowed: {
        type: "array",
        items: { type: "string" },
        description:
          "Capabilities a container may add (any case, CAP_ optional). Default [NET_BIND_SERVICE], as Pod Security restricted; [] allows none.",
        default: ["NET_BIND_SERVICE"],
      },
      exactNames: {
        type: "boolean",
        description:
          "Allow an add only when spelled exactly as in `allowed`, as Pod Security compares it (cap_net_bind_service is refused): the baseline and restricted presets set it.",
        default: false,
      },
    },
  },
  defaults: { allowed: ["NET_BIND_SERVICE"] as string[], exactNames: false },
  remediationSteps: "Remove the capability from the add list; a task that needs it is not a sandbox task.",
  check(s, config) {
    if (s.subject !== "workload") return [];
    const allowed = new Set(config.allowed.map((a) => canonicalCapability(a) ?? a.trim().toUpperCase()));
    const out: Finding[] = [];
    for (const c of s.containers) {
      const add = c.capabilities.added;
      const extra = add.raw.filter((x, i) =>
        config.exactNames ? !config.allowed.includes(x) : !allowed.has(add.caps[i] ?? ""),
      );
      if (extra.length > 0)
        out.push(
          violation(
            `${label(c)} adds capabilities ${showList(extra.map((x) => (config.exactNames ? JSON.stringify(x) : x.trim())))}${config.exactNames ? ` outside ${showList(config.allowed)} (compared exactly, as Pod Security does)` : ""}`,
            c.path,
          ),
        );
      if (add.unknown)
        out.push(unchecked(`the added capabilities of ${label(c)}`, c.path, c.capabilities.add));
    }
    return out;
  },
});
