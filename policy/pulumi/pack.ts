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
import { adaptResource } from "../adapters/subject";
import { crosswalkTags } from "../report/tags";
import { disallowSecretEnv } from "../rules/disallow-secret-env";
import { type RuleSelection, selectRules } from "../rules/registry";
import { type AnyRule, type ConfigSchema, type Finding, resolveConfig } from "../rules/types";
import { ALL_STACK_RULES } from "../stack/registry";
import type { AnyStackRule, StackResource, StackResourceRef } from "../stack/types";
import type { Subject } from "../workload";
import { applyEdits, cloneRaw, redactionEdits, taintCheck, unwrapProps } from "./props";

export const PACK_NAME = "sandbox-projects";

/** The pack and the reports tag rules the same way. */
export { crosswalkTags } from "../report/tags";

function toPulumiSchema(s: ConfigSchema | undefined): PolicyConfigSchema | undefined {
  return s === undefined ? undefined : (JSON.parse(JSON.stringify(s)) as PolicyConfigSchema);
}

/** The view of the resource being validated; secrets found in the args mark taint. */
function subjectOf(
  args: Pick<ResourceValidationArgs, "type" | "props" | "name" | "opts">,
): Subject | undefined {
  const { value, secretPaths } = unwrapProps(args.props, args.opts?.additionalSecretOutputs ?? []);
  return adaptResource(args.type, value, args.name, taintCheck(secretPaths));
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
  const subject = subjectOf(args);
  if (subject === undefined || !rule.subjects.includes(subject.subject)) {
    args.notApplicable(`${rule.id} judges containers, pods, Services and Ingresses, not ${args.type}`);
  }
  const s = subject as Subject;
  const findings = rule.check(s, resolveConfig(rule, args.getConfig<object>()));
  for (const f of findings) if (!f.unchecked) report(render(f));
  const notes = findings.filter((f) => f.unchecked).map(render);
  if (s.subject === "workload") notes.push(...s.unknownParts.map((p) => `${p} could not be checked`));
  if (notes.length > 0) throw couldNotCheck(notes);
}

/** The rule's remediation as CrossGuard wants it: new props, or undefined when nothing changes. */
export function remediateWithRule(
  rule: AnyRule,
  args: ResourceValidationArgs,
): Record<string, unknown> | undefined {
  const subject = subjectOf(args);
  if (subject === undefined || !rule.subjects.includes(subject.subject)) return undefined;
  const config = resolveConfig(rule, args.getConfig<object>());
  const edits = rule.remediate?.(subject, config) ?? [];
  if (rule.id === disallowSecretEnv.id && subject.subject === "workload") {
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
function policyMetadata(rule: AnyRule | AnyStackRule) {
  return {
    name: rule.id,
    description: rule.description,
    enforcementLevel: rule.enforcementLevel,
    severity: rule.severity,
    tags: crosswalkTags(rule.crosswalk, rule.mission),
    remediationSteps: rule.remediationSteps,
    ...(rule.configSchema === undefined ? {} : { configSchema: toPulumiSchema(rule.configSchema) }),
  };
}

export function resourcePolicy(rule: AnyRule): ResourceValidationPolicy {
  const remediable = rule.remediate !== undefined || rule.id === disallowSecretEnv.id;
  return {
    ...policyMetadata(rule),
    validateResource: (args, report) => validateWithRule(rule, args, report),
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
  const { value, secretPaths } = unwrapProps(r.props, secretOutputs);
  const deps: Record<string, StackResourceRef[]> = {};
  for (const [k, v] of Object.entries(r.propertyDependencies ?? {})) deps[k] = v.map(refOf);
  return {
    type: r.type,
    name: r.name,
    urn: r.urn,
    props: value,
    subject: adaptResource(r.type, value, r.name, taintCheck(secretPaths)),
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

export function stackPolicy(rule: AnyStackRule): StackValidationPolicy {
  return {
    ...policyMetadata(rule),
    validateStack: (args, report) => validateStackWithRule(rule, args, report),
  };
}

/** Everything `new PolicyPack(PACK_NAME, ...)` needs, for a selection of rules. */
export function packArgs(selection: RuleSelection = {}): PolicyPackArgs {
  return {
    description:
      "Sandbox projects: one locked-down, throwaway container per AI-agent task. Judges every Docker container and Kubernetes pod carrier, Service and Ingress in any stack, and the stack's budget and secret flow.",
    policies: [...selectRules(selection).map(resourcePolicy), ...ALL_STACK_RULES.map(stackPolicy)],
  };
}
