/** What a stack rule sees: every resource, adapted where an adapter exists, with its dependencies. Pure data. */
import type { ConfigSchema, Crosswalk, EnforcementLevel, Finding, Severity } from "../rules/types";
import type { Subject } from "../workload";

export interface StackResource {
  readonly type: string;
  readonly name: string;
  readonly urn: string;
  /** Plain props; preview unknowns as UNKNOWN. */
  readonly props: unknown;
  /** The rule view when an adapter knows the type. */
  readonly subject: Subject | undefined;
  /** Output names the program marked secret (`additionalSecretOutputs`). */
  readonly additionalSecretOutputs: readonly string[];
  /** Which resources each input property was computed from. */
  readonly propertyDependencies: Readonly<Record<string, readonly StackResourceRef[]>>;
  /** The parent's URN, when the resource has one. */
  readonly parent?: string;
}

export interface StackResourceRef {
  readonly type: string;
  readonly name: string;
  readonly urn: string;
  readonly additionalSecretOutputs: readonly string[];
}

/** A stack finding names the resource it is about. */
export interface StackFinding extends Finding {
  readonly urn?: string;
}

export interface StackRule<C extends object = object> {
  readonly id: string;
  readonly description: string;
  readonly mission: boolean;
  readonly enforcementLevel: EnforcementLevel;
  readonly severity: Severity;
  readonly crosswalk: Crosswalk;
  readonly configSchema?: ConfigSchema;
  readonly defaults: C;
  readonly remediationSteps: string;
  readonly check: (resources: readonly StackResource[], config: C) => StackFinding[];
}

export type AnyStackRule = StackRule<object>;

export function defineStackRule<C extends object>(rule: StackRule<C>): AnyStackRule {
  return rule as unknown as AnyStackRule;
}
