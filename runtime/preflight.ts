import type { LaunchSpec } from "../components/model";
import { adaptLaunchSpec } from "../policy/adapters/launch";
import { ALL_RULES, judge } from "../policy/rules/registry";
import type { EnforcementLevel } from "../policy/rules/types";
import { containerCreateBody, type PlainContainerArgs } from "./docker/createBody";
import type { Preflight } from "./launcher";

/** Per-rule settings, as the CrossGuard pack's config takes them: `{ "<rule id>": { enforcementLevel, ... } }`. */
export type RuleConfig = Readonly<Record<string, { readonly enforcementLevel?: EnforcementLevel } & object>>;

/**
 * The launcher's preflight: the exact Engine API body the launcher would send, judged by the same rules the
 * CrossGuard pack runs at preview. A finding of a mandatory (or remediate) rule refuses the launch with the rule's
 * id and message; advisory findings are handed to `warn`.
 */
export function policyPreflight(
  config: RuleConfig = {},
  warn: (message: string) => void = () => undefined,
): Preflight {
  return (args: PlainContainerArgs, spec: LaunchSpec) => {
    const body = containerCreateBody(args, { pidsLimit: spec.resources.pids });
    const subject = adaptLaunchSpec(body, `${spec.project}/${spec.template}`);
    const refusals: string[] = [];
    for (const { rule, findings } of judge(subject, ALL_RULES, config)) {
      const level = config[rule.id]?.enforcementLevel ?? rule.enforcementLevel;
      if (level === "disabled") continue;
      for (const f of findings) {
        if (f.unchecked) continue;
        const line = `${rule.id}: ${f.message}`;
        if (level === "advisory") warn(line);
        else refusals.push(line);
      }
    }
    return refusals;
  };
}
