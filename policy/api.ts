/**
 * The policy layer's public entry: the rules the CrossGuard pack runs, as plain functions over any resource.
 *
 *   const subjects = adaptResources("kubernetes:core/v1:Pod", props, "my-pod");
 *   for (const s of subjects) for (const { rule, findings } of judge(s)) ...
 *
 * `packArgs()` builds a pack of your own from the same rules (`new PolicyPack("mine", packArgs({ preset }))`);
 * the ready-made pack is the package's `policy-pack/` folder.
 */

export { isPreset, PRESETS, type Preset, presetLevels } from "./presets";
export { PACK_NAME, type PackOptions, packArgs } from "./pulumi/pack";
export { ALL_RULES, judge, type RuleResult, type RuleSelection, selectRules } from "./rules/registry";
export type { AnyRule, Crosswalk, EnforcementLevel, Finding, Rule, Severity } from "./rules/types";
export { adaptLaunchSpec } from "./sources/docker/read";
export { adaptResource, adaptResources } from "./sources/subject";
export { ALL_STACK_RULES } from "./stack/registry";
export type { StackResource } from "./stack/types";
export type { Subject } from "./workload";
