/**
 * The one rule runner. The CrossGuard pack (`pulumi/pack.ts`), the launcher's preflight (`runtime/preflight.ts`) and
 * `scan` (`cli/scan/run.ts`) all judge through {@link evaluate}, which runs rules over one view of a resource, or
 * stack rules over a whole stack, and applies, the same way for each caller:
 *
 * - levels: the rule's default, else the preset's, else the configured level; a `disabled` rule does not run;
 * - exemptions: a violation on an exempted resource carries its {@link Exemption}. It keeps its level (an exempted
 *   violation is skipped, never downgraded): the pack does not report it, `scan` lists it as exempted;
 * - what cannot be checked: a rule's `unchecked` findings (preview unknowns), and one note per unreadable part of a
 *   workload for every rule that judges it. They are never exempted. A value that is present but unreadable is the
 *   rule's violation already (rules/helpers.ts `unchecked`): the rules fail closed on it.
 *
 * Pure: no Pulumi import, no output. What a caller does with a finding (report it, refuse a launch, list it) is the
 * caller's.
 */
import { exemptionsOf, findExemption } from "./exemptions";
import { type Preset, presetLevel } from "./presets";
import type { Exemption } from "./report/model";
import { type AnyRule, type EnforcementLevel, type Finding, resolveConfig } from "./rules/types";
import type { AnyStackRule, StackFinding, StackResource } from "./stack/types";
import type { Subject } from "./workload";

/** One view of a resource to judge with resource rules. */
export interface ViewSubject {
  readonly view: Subject;
  /**
   * The resource's id as exemptions name it: a URN, or `<file>:<Kind>/<name>` (exemptions.ts). Without one, no
   * exemption applies.
   */
  readonly resource?: string;
}

/** Every resource of one stack (or one input set), to judge with stack rules. */
export interface StackSubject {
  readonly stack: readonly StackResource[];
}

/** The config a rule runs with, as the pack config gives it, plus what `scan` reads around it. */
export interface EvaluationConfig {
  /**
   * Each rule's entry as pack config (and CrossGuard's `getConfig`) gives it: `{ "<rule id>": { enforcementLevel?,
   * exemptions?, ...settings } }`. Its `enforcementLevel` is a configured level and its `exemptions` are
   * exemptions; the rest are the rule's settings.
   */
  readonly rules?: Readonly<Record<string, unknown>>;
  /** Configured levels by rule id; they win over a level in `rules`. */
  readonly levels?: Readonly<Record<string, EnforcementLevel>>;
  /** The preset the levels start from (presets.ts). */
  readonly preset?: Preset;
  /** Exemptions besides those under each rule's entry in `rules`, each naming its rule. */
  readonly exemptions?: readonly Exemption[];
}

/** One finding with the level it was found at and, for a violation on an exempted resource, the exemption. */
export interface Evaluation {
  readonly rule: AnyRule | AnyStackRule;
  /** What the rule found; a stack rule's finding may name its resource (`urn`). */
  readonly finding: StackFinding;
  /** The rule's effective level (never `disabled`: a disabled rule does not run). */
  readonly level: Exclude<EnforcementLevel, "disabled">;
  /**
   * The resource the finding is about: the view's id; for a stack rule, the URN the finding names, else the stack's
   * first resource.
   */
  readonly resource?: string;
  /** Set when an exemption covers this violation (never for what could not be checked). */
  readonly exemption?: Exemption;
}

/** A finding's text as every caller shows it: the message, then the path in brackets. */
export function renderFinding(f: Finding): string {
  return f.path === undefined ? f.message : `${f.message} [${f.path}]`;
}

/** The entry of one rule in `config.rules`, when it is an object. */
function entryOf(config: EvaluationConfig, id: string): Record<string, unknown> | undefined {
  const entry = config.rules?.[id];
  return typeof entry === "object" && entry !== null ? (entry as Record<string, unknown>) : undefined;
}

/** A rule's level: configured (`levels`, then its entry), else the preset's, else its own default. */
export function levelOf(
  rule: AnyRule | AnyStackRule,
  config: Pick<EvaluationConfig, "rules" | "levels" | "preset">,
): EnforcementLevel {
  const configured = config.levels?.[rule.id] ?? entryOf(config, rule.id)?.enforcementLevel;
  if (typeof configured === "string") return configured as EnforcementLevel;
  return config.preset === undefined ? rule.enforcementLevel : presetLevel(config.preset, rule);
}

/** Runs resource rules over one view of a resource. */
export function evaluate(
  subject: ViewSubject,
  rules: readonly AnyRule[],
  config?: EvaluationConfig,
): Evaluation[];
/** Runs stack rules over every resource of a stack. */
export function evaluate(
  subject: StackSubject,
  rules: readonly AnyStackRule[],
  config?: EvaluationConfig,
): Evaluation[];
export function evaluate(
  subject: ViewSubject | StackSubject,
  rules: readonly (AnyRule | AnyStackRule)[],
  config: EvaluationConfig = {},
): Evaluation[] {
  const out: Evaluation[] = [];
  for (const rule of rules) {
    const level = levelOf(rule, config);
    if (level === "disabled") continue;
    const settings = resolveConfig(rule, entryOf(config, rule.id));
    const exemptions = [
      ...(config.exemptions ?? []).filter((e) => e.rule === rule.id),
      ...exemptionsOf(rule.id, entryOf(config, rule.id)?.exemptions),
    ];
    const found = (finding: StackFinding, resource: string | undefined): Evaluation => {
      const exemption =
        finding.unchecked || resource === undefined
          ? undefined
          : findExemption(exemptions, rule.id, resource);
      return {
        rule,
        finding,
        level,
        ...(resource === undefined ? {} : { resource }),
        ...(exemption === undefined ? {} : { exemption }),
      };
    };
    if ("stack" in subject) {
      const first = subject.stack[0]?.urn;
      for (const f of (rule as AnyStackRule).check(subject.stack, settings))
        out.push(found(f, f.urn ?? first));
      continue;
    }
    const view = subject.view;
    if (!(rule as AnyRule).subjects.includes(view.subject)) continue;
    for (const f of (rule as AnyRule).check(view, settings)) out.push(found(f, subject.resource));
    // A part of a workload that could not be read at all (a whole container list) is a note for every rule.
    if (view.subject === "workload")
      for (const p of view.unknownParts)
        out.push(found({ message: `${p} could not be checked`, unchecked: true }, subject.resource));
  }
  return out;
}
