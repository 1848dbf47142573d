import type { LaunchSpec } from "../components/model";
import { evaluate } from "../policy/evaluate";
import { ALL_RULES } from "../policy/rules/registry";
import { withJobRoots } from "../policy/rules/require-single-job-mount";
import type { EnforcementLevel } from "../policy/rules/types";
import { adaptLaunchSpec } from "../policy/sources/docker/read";
import type { Preflight } from "./launch-errors";

/** Per-rule settings, as the CrossGuard pack's config takes them: `{ "<rule id>": { enforcementLevel, ... } }`. */
export type RuleConfig = Readonly<Record<string, { readonly enforcementLevel?: EnforcementLevel } & object>>;

/**
 * The launcher's preflight: the exact Engine API body the launcher sends (runtime/docker/taskContainer.ts), judged
 * by the same rules the CrossGuard pack runs at preview, through the same runner (policy/evaluate.ts). A finding of
 * a mandatory (or remediate) rule refuses the launch with the rule's id and message; advisory findings are handed
 * to `warn`. A note that something could not be checked is neither (a body built from a launch spec holds no
 * preview unknowns), and no exemption applies: a launch is not a resource that an exemption names.
 */
export function policyPreflight(
  config: RuleConfig = {},
  warn: (message: string) => void = () => undefined,
): Preflight {
  return (body, spec: LaunchSpec) => {
    const view = adaptLaunchSpec(body, `${spec.project}/${spec.template}`);
    const refusals: string[] = [];
    // The launcher's job folders live under the template's job root: it declares that root for the job-mount rule.
    const rules = withJobRoots(config, [spec.jobFolder.hostRoot]);
    for (const { rule, finding, level } of evaluate({ view }, ALL_RULES, { rules })) {
      if (finding.unchecked) continue;
      const line = `${rule.id}: ${finding.message}`;
      if (level === "advisory") warn(line);
      else refusals.push(line);
    }
    return refusals;
  };
}
