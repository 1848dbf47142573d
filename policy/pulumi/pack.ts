/**
 * Wires the pure rules into CrossGuard policies: each resource rule validates every resource an adapter can read
 * (any type token, matched inside the adapters), each stack rule validates the whole stack, both through
 * `evaluate` (policy/evaluate.ts), as the preflight and `scan` judge; a rule's own `remediate` is its remediation.
 * No rule logic here, and no rule named.
 */
import {
  type PolicyConfigSchema,
  type PolicyPackArgs,
  type PolicyResource,
  type ReportViolation,
  type ResourceValidationArgs,
  type ResourceValidationPolicy,
  type StackValidationArgs,
  type StackValidationPolicy,
  UnknownValueError,
} from "@pulumi/policy";
import { type EvaluationConfig, evaluate, levelOf, renderFinding } from "../evaluate";
import { EXEMPTIONS_SCHEMA } from "../exemptions";
import { type Preset, presetSettings } from "../presets";
import { crosswalkTags } from "../report/tags";
import { type RuleSelection, selectRules } from "../rules/registry";
import { type AnyRule, type ConfigSchema, type Edit, PACK_NAME, resolveConfig } from "../rules/types";
import { judgedType } from "../sources/kubernetes/file";
import { sealSecrets } from "../sources/secrets";
import { adaptResource, adaptResources } from "../sources/subject";
import { ALL_STACK_RULES } from "../stack/registry";
import type { AnyStackRule, StackResource, StackResourceRef } from "../stack/types";
import type { Subject } from "../workload";
import { applyEdits, cloneRaw, taintCheck, unwrapProps } from "./props";
import { ViewCache } from "./view-cache";

/** The pack and the reports tag rules the same way. */
export { crosswalkTags } from "../report/tags";
export { PACK_NAME };

/**
 * A rule's settings as CrossGuard declares them, plus `exemptions` on every rule: the Pulumi CLI validates the pack
 * config against this schema, so an exemption without a reason is refused before the pack runs.
 */
function toPulumiSchema(
  s: ConfigSchema | undefined,
  defaults: Readonly<Record<string, unknown>> = {},
): PolicyConfigSchema {
  const schema = JSON.parse(JSON.stringify(s ?? { properties: {} })) as PolicyConfigSchema;
  // A preset's settings are the defaults the engine fills in, beneath what the pack config sets.
  for (const [k, v] of Object.entries(defaults)) {
    const prop = schema.properties?.[k];
    if (prop !== undefined) (prop as { default?: unknown }).default = v;
  }
  return { ...schema, properties: { ...schema.properties, exemptions: EXEMPTIONS_SCHEMA as never } };
}

/**
 * What one CrossGuard call evaluates with: the policy's entry of the pack config as `getConfig` gives it, i.e. its
 * settings and exemptions. The level is not in it: the engine keeps it, calls no disabled policy, and reports each
 * violation at the policy's level. So a violation on an exempted resource is not reported at all: it cannot be
 * downgraded to advisory for one resource; it is skipped, and the exemption's reason stays in the pack config.
 */
function configOf(
  rule: AnyRule | AnyStackRule,
  args: { getConfig<T extends object>(): T },
  preset?: Preset,
): EvaluationConfig {
  return { rules: { [rule.id]: { ...presetSettings(preset, rule.id), ...args.getConfig<object>() } } };
}

/**
 * Where each resource's Pulumi secrets are, by URN. @pulumi/policy shows secrets only to remediations (validation
 * gets plain text with no mark), and the engine runs a resource's remediations before its validations in this same
 * process; so a remediation records the paths and the validations that follow seal those values (fail closed).
 */
const secretsByUrn = new Map<string, readonly string[]>();

/** Forgets what remediations recorded: the start of another engine run (tests that reuse URNs call it). */
export function forgetRecordedSecrets(): void {
  secretsByUrn.clear();
  resourceViews.clear();
  stackViews.clear();
}

/**
 * Plain props with their secrets sealed, and the taint of every secret path. A remediation (`record`) writes the
 * secret paths it sees for the URN; a validation adds the recorded ones to those it can see itself.
 */
function readProps(
  props: unknown,
  urn: string | undefined,
  secretOutputs: readonly string[],
  record = false,
): { value: unknown; tainted: ReturnType<typeof taintCheck>; taint: readonly string[] } {
  const { value, secretPaths } = unwrapProps(props);
  if (record && urn !== undefined) secretsByUrn.set(urn, secretPaths);
  const recorded = urn === undefined || record ? [] : (secretsByUrn.get(urn) ?? []);
  const secrets = [...new Set([...secretPaths, ...recorded])];
  const taint = [...secrets, ...secretOutputs];
  return { value: sealSecrets(value, secrets), tainted: taintCheck(taint), taint };
}

/** Each resource's views, read once for all the rules (policy/pulumi/view-cache.ts). */
const resourceViews = new ViewCache<Subject[]>();
const stackViews = new ViewCache<Subject | undefined>();

/** The view of the resource being validated; secrets found in the args mark taint and are sealed. */
function subjectOf(
  args: Pick<ResourceValidationArgs, "type" | "props" | "name" | "opts"> & { urn?: string },
  record = false,
): Subject[] {
  const { value, tainted, taint } = readProps(
    args.props,
    args.urn,
    args.opts?.additionalSecretOutputs ?? [],
    record,
  );
  // One view per pod the resource runs (and its entry point): the rule judges each.
  // A generic CustomResource is judged as the kind its inputs name (sources/kubernetes/file.ts judgedType).
  const type = judgedType(args.type, value);
  return resourceViews.get(args.urn, [type, args.name, taint], value, () =>
    adaptResources(type, value, args.name, tainted),
  );
}

/**
 * Reports what could not be checked the way @pulumi/policy reports a preview unknown: an UnknownValueError, which
 * the SDK turns into an advisory "can't run policy ... during preview" note instead of a violation.
 */
function couldNotCheck(items: readonly string[]): UnknownValueError {
  const e = new UnknownValueError("04da6b54-80e4-46f7-96ec-b56ff0331ba9", []);
  e.message = `not checked because values are not known yet: ${items.join("; ")}`;
  return e;
}

/**
 * Runs one rule on one resource's args, reporting each violation no exemption covers (on the resource's URN);
 * throws the advisory note for what could not be checked.
 */
function validateWithRule(
  rule: AnyRule,
  args: ResourceValidationArgs,
  report: ReportViolation,
  preset?: Preset,
): void {
  const subjects = subjectOf(args).filter((s) => rule.subjects.includes(s.subject));
  if (subjects.length === 0) {
    args.notApplicable(`${rule.id} judges containers, pods, Services and Ingresses, not ${args.type}`);
  }
  const notes: string[] = [];
  for (const view of subjects) {
    for (const e of evaluate({ view, resource: args.urn }, [rule], configOf(rule, args, preset))) {
      if (e.finding.unchecked) notes.push(renderFinding(e.finding));
      else if (e.exemption === undefined) report(renderFinding(e.finding));
    }
  }
  if (notes.length > 0) throw couldNotCheck(notes);
}

/**
 * The rule's remediation as CrossGuard wants it: new props, or undefined when nothing changes. Its views are read
 * with the secrets CrossGuard shows only here, which are recorded for the validations that follow.
 */
function remediateWithRule(rule: AnyRule, args: ResourceValidationArgs): Record<string, unknown> | undefined {
  const config = resolveConfig(rule, args.getConfig<object>());
  const edits: Edit[] = [];
  for (const subject of subjectOf(args, true).filter((s) => rule.subjects.includes(s.subject)))
    edits.push(...(rule.remediate?.(subject, config) ?? []));
  if (edits.length === 0) return undefined;
  const clone = cloneRaw(args.props) as Record<string, unknown>;
  return applyEdits(clone, edits) > 0 ? clone : undefined;
}

/** What a CrossGuard policy says about itself, the same for resource and stack rules. */
function policyMetadata(rule: AnyRule | AnyStackRule, preset: Preset | undefined) {
  return {
    name: rule.id,
    description: rule.description,
    enforcementLevel: levelOf(rule, { preset }),
    severity: rule.severity,
    tags: crosswalkTags(rule.crosswalk, rule.mission),
    remediationSteps: rule.remediationSteps,
    configSchema: toPulumiSchema(rule.configSchema, presetSettings(preset, rule.id)),
  };
}

/** A resource rule as a CrossGuard policy, with a remediation when the rule has one. */
export function resourcePolicy(rule: AnyRule, preset?: Preset): ResourceValidationPolicy {
  return {
    ...policyMetadata(rule, preset),
    validateResource: (args, report) => validateWithRule(rule, args, report, preset),
    ...(rule.remediate === undefined
      ? {}
      : { remediateResource: (args: ResourceValidationArgs) => remediateWithRule(rule, args) }),
  };
}

function refOf(r: PolicyResource): StackResourceRef {
  return {
    type: r.type,
    name: r.name,
    urn: r.urn,
    additionalSecretOutputs: r.opts?.additionalSecretOutputs ?? [],
  };
}

/** A stack resource as the pure stack rules see it. */
export function stackResourceOf(r: PolicyResource): StackResource {
  const secretOutputs = r.opts?.additionalSecretOutputs ?? [];
  const { value, tainted, taint } = readProps(r.props, r.urn, secretOutputs);
  const deps: Record<string, StackResourceRef[]> = {};
  for (const [k, v] of Object.entries(r.propertyDependencies ?? {})) deps[k] = v.map(refOf);
  const type = judgedType(r.type, value);
  return {
    type,
    name: r.name,
    urn: r.urn,
    props: value,
    subject: stackViews.get(r.urn, [type, r.name, taint], value, () =>
      adaptResource(type, value, r.name, tainted),
    ),
    additionalSecretOutputs: secretOutputs,
    propertyDependencies: deps,
    ...(r.parent === undefined ? {} : { parent: r.parent.urn }),
  };
}

/**
 * Runs one stack rule on the stack, reporting each violation no exemption covers (on the URN it names, else the
 * stack's first resource); throws the advisory note for what could not be checked.
 */
function validateStackWithRule(
  rule: AnyStackRule,
  args: StackValidationArgs,
  report: ReportViolation,
  preset?: Preset,
): void {
  const notes: string[] = [];
  for (const e of evaluate(
    { stack: args.resources.map(stackResourceOf) },
    [rule],
    configOf(rule, args, preset),
  )) {
    if (e.finding.unchecked) notes.push(renderFinding(e.finding));
    else if (e.exemption === undefined) report(renderFinding(e.finding), e.finding.urn);
  }
  if (notes.length > 0) throw couldNotCheck(notes);
}

/** A stack rule as a CrossGuard policy. */
export function stackPolicy(rule: AnyStackRule, preset?: Preset): StackValidationPolicy {
  return {
    ...policyMetadata(rule, preset),
    validateStack: (args, report) => validateStackWithRule(rule, args, report, preset),
  };
}

/** Which rules a pack holds and, with a preset, the levels they default to (pack config still overrides them). */
export interface PackOptions extends RuleSelection {
  readonly preset?: Preset;
}

/** Everything `new PolicyPack(PACK_NAME, ...)` needs, for a selection of rules. */
export function packArgs(selection: PackOptions = {}): PolicyPackArgs {
  return {
    description:
      "Sandbox projects: one locked-down, throwaway container per AI-agent task. Judges every Docker container and Kubernetes pod carrier, Service and Ingress in any stack, and the stack's budget and secret flow.",
    policies: [
      ...selectRules(selection).map((r) => resourcePolicy(r, selection.preset)),
      ...ALL_STACK_RULES.map((r) => stackPolicy(r, selection.preset)),
    ],
  };
}
