/**
 * The rule contract. Rules are pure: `check(subject, config)` over the normalized view, no Pulumi import, so the
 * CrossGuard pack, the runtime launcher and the `scan` command run the same code.
 */
import type { Subject } from "../workload";

/** CrossGuard's levels, spelled as @pulumi/policy spells them. */
export type EnforcementLevel = "advisory" | "mandatory" | "remediate" | "disabled";

/** Every level Pulumi's CLI accepts for a policy. */
export const ENFORCEMENT_LEVELS: readonly EnforcementLevel[] = [
  "advisory",
  "mandatory",
  "remediate",
  "disabled",
];

/** The pack's name: what the engine, the reports and the config schema call it. */
export const PACK_NAME = "sandbox-projects";
export type Severity = "low" | "medium" | "high" | "critical";

/** The public checklist ids a rule answers. */
export interface Crosswalk {
  /** CIS Docker Benchmark v1.6.0, as numbered by docker-bench-security (`5.4`). */
  readonly cis?: readonly string[];
  /** pod-security-admission check ids (`capabilities_restricted`). */
  readonly psa?: readonly string[];
  /** kyverno/policies names (`disallow-privileged-containers`). */
  readonly kyverno?: readonly string[];
  /** Checkov ids (`CKV_K8S_16`). */
  readonly checkov?: readonly string[];
  /** kube-linter check names. */
  readonly kubeLinter?: readonly string[];
  /** kubesec rule ids. */
  readonly kubesec?: readonly string[];
  /** CWE weakness ids (`636`: not failing securely), for rules that have no checklist entry. */
  readonly cwe?: readonly string[];
}

/** One thing a rule found: a violation, or a note that something could not be checked (a preview unknown). */
export interface Finding {
  readonly message: string;
  /** Where in the resource, e.g. `spec.template.spec.containers[0].securityContext`. */
  readonly path?: string;
  /** True when this is "could not be checked", not a violation. */
  readonly unchecked?: boolean;
}

/** A JSON-schema fragment for one config property (the subset CrossGuard's `configSchema` accepts). */
export interface ConfigProperty {
  readonly type: "string" | "number" | "integer" | "boolean" | "array" | "object";
  readonly description?: string;
  readonly default?: unknown;
  readonly items?: ConfigProperty;
  readonly minimum?: number;
  readonly enum?: readonly unknown[];
  readonly additionalProperties?: ConfigProperty | boolean;
}

export interface ConfigSchema {
  readonly properties: Readonly<Record<string, ConfigProperty>>;
  readonly required?: readonly string[];
}

/**
 * A fix as data: where to change what. The pack applies edits to the resource's props; a `scan --fix` can apply
 * them to a manifest. `path` segments are keys and list indexes.
 */
export type Edit =
  | { readonly op: "set"; readonly path: readonly (string | number)[]; readonly value: unknown }
  | { readonly op: "append"; readonly path: readonly (string | number)[]; readonly value: string }
  | {
      readonly op: "removeCapability";
      readonly path: readonly (string | number)[];
      readonly capability: string;
    };

export interface Rule<C extends object = object> {
  /** `<scope>-<verb>-<thing>`, e.g. `sandbox-disallow-privileged`. */
  readonly id: string;
  /** One sentence. */
  readonly description: string;
  /** Mission rules are the four walls the project exists for. */
  readonly mission: boolean;
  readonly enforcementLevel: EnforcementLevel;
  readonly severity: Severity;
  readonly crosswalk: Crosswalk;
  /** Which views the rule judges. */
  readonly subjects: readonly Subject["subject"][];
  readonly configSchema?: ConfigSchema;
  /** The config the rule uses when the pack config says nothing. */
  readonly defaults: C;
  /** What a person does to fix it, in one or two sentences. */
  readonly remediationSteps: string;
  readonly check: (subject: Subject, config: C) => Finding[];
  /**
   * The unambiguous fix, when there is one: edits that make the subject pass. The pack offers it to CrossGuard, which
   * runs it only at level `remediate`, on props whose Pulumi secrets are still marked (`tainted` in the view).
   */
  readonly remediate?: (subject: Subject, config: C) => Edit[];
}

/** Erases a rule's config type for the registry. */
export type AnyRule = Rule<object>;

/** Declares a rule with its config type checked against its defaults. */
export function defineRule<C extends object>(rule: Rule<C>): AnyRule {
  return rule as unknown as AnyRule;
}

/**
 * The config a rule (or stack rule) runs with: its defaults overlaid with its entry in the pack config, less the
 * entry's level and exemptions, which are the runner's (policy/evaluate.ts).
 */
export function resolveConfig<C extends object>(
  rule: { readonly defaults: C },
  given: object | undefined,
): C {
  const out: Record<string, unknown> = { ...(rule.defaults as Record<string, unknown>) };
  for (const [k, v] of Object.entries(given ?? {})) {
    if (k === "enforcementLevel" || k === "exemptions" || v === undefined || v === null) continue;
    out[k] = v;
  }
  return out as C;
}
