/**
 * Wires the pure rules into CrossGuard policies: each resource rule validates every resource an adapter can read
 * (any type token, matched inside the adapters), each stack rule validates the whole stack. No rule logic here.
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
import { sealSecrets } from "../adapters/secrets";
import { adaptResource, adaptResources } from "../adapters/subject";
import { EXEMPTIONS_SCHEMA, exemptionsOf, findExemption } from "../exemptions";
import { type Preset, presetLevel } from "../presets";
import { crosswalkTags } from "../report/tags";
import { disallowSecretEnv } from "../rules/disallow-secret-env";
import { type RuleSelection, selectRules } from "../rules/registry";
import { type AnyRule, type ConfigSchema, type Edit, type Finding, resolveConfig } from "../rules/types";
import { ALL_STACK_RULES } from "../stack/registry";
import type { AnyStackRule, StackResource, StackResourceRef } from "../stack/types";
import type { Subject } from "../workload";
import { applyEdits, cloneRaw, redactionEdits, taintCheck, unwrapProps } from "./props";

export const PACK_NAME = "sandbox-projects";

/** The pack and the reports tag rules the same way. */
export { crosswalkTags } from "../report/tags";

/**
 * A rule's settings as CrossGuard declares them, plus `exemptions` on every rule: the Pulumi CLI validates the pack
 * config against this schema, so an exemption without a reason is refused before the pack runs.
 */
function toPulumiSchema(s: ConfigSchema | undefined): PolicyConfigSchema {
  const schema = JSON.parse(JSON.stringify(s ?? { properties: {} })) as PolicyConfigSchema;
  return { ...schema, properties: { ...schema.properties, exemptions: EXEMPTIONS_SCHEMA as never } };
}

/**
 * Wraps a policy's `report` so a violation on an exempted resource is not reported: CrossGuard fixes a policy's
 * level for the whole call, so an exempted violation cannot be downgraded to advisory; it is skipped, and the
 * exemption's reason stays in the pack config. `urnOf` names the resource a stack finding without a URN belongs to
 * (the stack's first resource, as `scan` attributes it).
 */
function exempting(
  ruleId: string,
  config: unknown,
  report: ReportViolation,
  urnOf: (urn: string | undefined) => string | undefined,
): ReportViolation {
  const setting =
    typeof config === "object" && config !== null ? (config as Record<string, unknown>).exemptions : [];
  const exemptions = exemptionsOf(ruleId, setting);
  if (exemptions.length === 0) return report;
  return (message, urn) => {
    const target = urnOf(urn);
    if (target !== undefined && findExemption(exemptions, ruleId, target) !== undefined) return;
    report(message, urn);
  };
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
): { value: unknown; tainted: ReturnType<typeof taintCheck> } {
  const { value, secretPaths } = unwrapProps(props);
  if (record && urn !== undefined) secretsByUrn.set(urn, secretPaths);
  const recorded = urn === undefined || record ? [] : (secretsByUrn.get(urn) ?? []);
  const secrets = [...new Set([...secretPaths, ...recorded])];
  return { value: sealSecrets(value, secrets), tainted: taintCheck([...secrets, ...secretOutputs]) };
}

/** The view of the resource being validated; secrets found in the args mark taint and are sealed. */
function subjectOf(
  args: Pick<ResourceValidationArgs, "type" | "props" | "name" | "opts"> & { urn?: string },
  record = false,
): Subject[] {
  const { value, tainted } = readProps(
    args.props,
    args.urn,
    args.opts?.additionalSecretOutputs ?? [],
    record,
  );
  // One view per pod the resource runs (and its entry point): the rule judges each.
  return adaptResources(args.type, value, args.name, tainted);
}

function render(f: Finding): string {
  return f.path === undefined ? f.message : `${f.message} [${f.path}]`;
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

/** Runs one rule on one resource's args, reporting violations; throws the advisory note for unknowns. */
export function validateWithRule(rule: AnyRule, args: ResourceValidationArgs, report: ReportViolation): void {
  const subjects = subjectOf(args).filter((s) => rule.subjects.includes(s.subject));
  if (subjects.length === 0) {
    args.notApplicable(`${rule.id} judges containers, pods, Services and Ingresses, not ${args.type}`);
  }
  const notes: string[] = [];
  for (const s of subjects) {
    const findings = rule.check(s, resolveConfig(rule, args.getConfig<object>()));
    for (const f of findings) if (!f.unchecked) report(render(f));
    notes.push(...findings.filter((f) => f.unchecked).map(render));
    if (s.subject === "workload") notes.push(...s.unknownParts.map((p) => `${p} could not be checked`));
  }
  if (notes.length > 0) throw couldNotCheck(notes);
}

/** The rule's remediation as CrossGuard wants it: new props, or undefined when nothing changes. */
export function remediateWithRule(
  rule: AnyRule,
  args: ResourceValidationArgs,
): Record<string, unknown> | undefined {
  const config = resolveConfig(rule, args.getConfig<object>());
  const edits: Edit[] = [];
  for (const subject of subjectOf(args, true).filter((s) => rule.subjects.includes(s.subject))) {
    edits.push(...(rule.remediate?.(subject, config) ?? []));
    if (rule.id !== disallowSecretEnv.id || subject.subject !== "workload") continue;
    const tainted = subject.containers.flatMap((c) =>
      c.env.filter((e) => e.tainted && e.from !== "secretRef"),
    );
    edits.push(
      ...redactionEdits(
        tainted.map((e) => ({ path: e.path, name: e.name, docker: subject.origin.backend !== "kubernetes" })),
      ),
    );
  }
  if (edits.length === 0) return undefined;
  const clone = cloneRaw(args.props) as Record<string, unknown>;
  return applyEdits(clone, edits) > 0 ? clone : undefined;
}

/** What a CrossGuard policy says about itself, the same for resource and stack rules. */
function policyMetadata(rule: AnyRule | AnyStackRule, preset: Preset | undefined) {
  return {
    name: rule.id,
    description: rule.description,
    enforcementLevel: preset === undefined ? rule.enforcementLevel : presetLevel(preset, rule),
    severity: rule.severity,
    tags: crosswalkTags(rule.crosswalk, rule.mission),
    remediationSteps: rule.remediationSteps,
    configSchema: toPulumiSchema(rule.configSchema),
  };
}

export function resourcePolicy(rule: AnyRule, preset?: Preset): ResourceValidationPolicy {
  const remediable = rule.remediate !== undefined || rule.id === disallowSecretEnv.id;
  return {
    ...policyMetadata(rule, preset),
    validateResource: (args, report) =>
      validateWithRule(
        rule,
        args,
        exempting(rule.id, args.getConfig<object>(), report, (urn) => urn ?? args.urn),
      ),
    ...(remediable
      ? { remediateResource: (args: ResourceValidationArgs) => remediateWithRule(rule, args) }
      : {}),
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
  const { value, tainted } = readProps(r.props, r.urn, secretOutputs);
  const deps: Record<string, StackResourceRef[]> = {};
  for (const [k, v] of Object.entries(r.propertyDependencies ?? {})) deps[k] = v.map(refOf);
  return {
    type: r.type,
    name: r.name,
    urn: r.urn,
    props: value,
    subject: adaptResource(r.type, value, r.name, tainted),
    additionalSecretOutputs: secretOutputs,
    propertyDependencies: deps,
    ...(r.parent === undefined ? {} : { parent: r.parent.urn }),
  };
}

export function validateStackWithRule(
  rule: AnyStackRule,
  args: StackValidationArgs,
  report: ReportViolation,
): void {
  const resources = args.resources.map(stackResourceOf);
  const findings = rule.check(resources, resolveConfig(rule as never, args.getConfig<object>()));
  for (const f of findings) if (!f.unchecked) report(render(f), f.urn);
  const notes = findings.filter((f) => f.unchecked).map(render);
  if (notes.length > 0) throw couldNotCheck(notes);
}

export function stackPolicy(rule: AnyStackRule, preset?: Preset): StackValidationPolicy {
  return {
    ...policyMetadata(rule, preset),
    validateStack: (args, report) =>
      validateStackWithRule(
        rule,
        args,
        exempting(rule.id, args.getConfig<object>(), report, (urn) => urn ?? args.resources[0]?.urn),
      ),
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
