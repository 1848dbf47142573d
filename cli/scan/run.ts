/**
 * The scan itself: resources from the inputs, judged by the CrossGuard pack's rules (`judge`, the stack rules) with
 * the pack's config, into a {@link ScanReport}. Pure apart from what the caller reads; no output here.
 */
import { adaptResource } from "../../policy/adapters/subject";
import {
  blocks,
  type InputError,
  type ReportFinding,
  type ResourceRef,
  type RuleInfo,
  type ScanReport,
  type Skipped,
} from "../../policy/report/model";
import { crosswalkTags } from "../../policy/report/tags";
import { ALL_RULES, judge } from "../../policy/rules/registry";
import { type AnyRule, type Finding, resolveConfig } from "../../policy/rules/types";
import { ALL_STACK_RULES } from "../../policy/stack/registry";
import type { AnyStackRule, StackResource, StackResourceRef } from "../../policy/stack/types";
import { findExemption, type ScanConfig } from "./config";
import type { ScanItem } from "./documents";

export const PACK_NAME = "sandbox-projects";

/** The rules of the pack, as the scan runs them: every resource rule, then every stack rule. */
export const SCAN_RULES: readonly (AnyRule | AnyStackRule)[] = [...ALL_RULES, ...ALL_STACK_RULES];

export function ruleInfo(rule: AnyRule | AnyStackRule, config: ScanConfig): RuleInfo {
  return {
    id: rule.id,
    description: rule.description,
    remediationSteps: rule.remediationSteps,
    severity: rule.severity,
    mission: rule.mission,
    tags: crosswalkTags(rule.crosswalk, rule.mission),
    enforcementLevel: config.levels[rule.id] ?? rule.enforcementLevel,
    scope: ALL_STACK_RULES.includes(rule as AnyStackRule) ? "stack" : "resource",
  };
}

/** A finding's text as the pack reports it (policy/pulumi/pack.ts `render`). */
export function render(f: Finding): string {
  return f.path === undefined ? f.message : `${f.message} [${f.path}]`;
}

export interface ScanInputs {
  readonly inputs: readonly string[];
  readonly items: readonly ScanItem[];
  readonly skipped: readonly Skipped[];
  readonly errors: readonly InputError[];
}

/** Judges every item with the pack's rules and config. */
export function scanItems(
  input: ScanInputs,
  config: ScanConfig,
  tool: { name: string; version: string },
): ScanReport {
  const rules = SCAN_RULES.map((r) => ruleInfo(r, config));
  const level = (id: string) => rules.find((r) => r.id === id)?.enforcementLevel ?? "mandatory";
  const active = ALL_RULES.filter((r) => level(r.id) !== "disabled");
  const findings: ReportFinding[] = [];
  const skipped: Skipped[] = [...input.skipped];
  const resources: ResourceRef[] = [];
  const add = (ruleId: string, f: Finding, item: ScanItem | undefined, ref: ResourceRef) => {
    const info = rules.find((r) => r.id === ruleId);
    if (info === undefined) return;
    const exemption = f.unchecked ? undefined : findExemption(config.exemptions, ruleId, ref.id);
    findings.push({
      ruleId,
      level: info.enforcementLevel,
      severity: info.severity,
      message: render(f),
      ...(f.path === undefined ? {} : { path: f.path }),
      resource: ref,
      location: item?.locate(f.path) ?? ref.location,
      unchecked: f.unchecked === true,
      ...(exemption === undefined
        ? {}
        : { exemption: { reason: exemption.reason, resource: exemption.resource } }),
    });
  };
  const stacks = new Map<string, { item: ScanItem; resource: StackResource }[]>();
  for (const item of input.items) {
    const subject = adaptResource(item.type, item.props, item.name, item.taint);
    if (item.stack !== undefined) {
      const list = stacks.get(item.stack.stack) ?? [];
      list.push({
        item,
        resource: {
          type: item.type,
          name: item.name,
          urn: item.stack.urn,
          props: item.props,
          subject,
          additionalSecretOutputs: item.stack.additionalSecretOutputs,
          propertyDependencies: {},
          ...(item.stack.parent === undefined ? {} : { parent: item.stack.parent }),
        },
      });
      stacks.set(item.stack.stack, list);
    }
    if (subject === undefined) {
      // Pulumi stacks hold many resources no rule judges (providers, networks, components): not worth listing.
      if (item.stack === undefined)
        skipped.push({
          location: item.resource.location,
          kind: item.resource.kind,
          name: item.name,
          reason: `no rule judges ${item.resource.kind} (${item.type})`,
        });
      continue;
    }
    resources.push(item.resource);
    for (const { rule, findings: fs } of judge(subject, active, config.settings)) {
      for (const f of fs) add(rule.id, f, item, item.resource);
      // Like the pack, every rule notes the parts of a workload that could not be read at all (an unknown list).
      if (subject.subject === "workload")
        for (const p of subject.unknownParts)
          add(rule.id, { message: `${p} could not be checked`, unchecked: true }, item, item.resource);
    }
  }
  // Stack rules: one Pulumi stack per input document, as the engine hands them to the pack after a preview.
  for (const members of stacks.values()) {
    const byUrn = new Map(members.map((m) => [m.resource.urn, m]));
    const ref = (urn: string): StackResourceRef | undefined => {
      const m = byUrn.get(urn);
      return m === undefined
        ? undefined
        : {
            type: m.resource.type,
            name: m.resource.name,
            urn,
            additionalSecretOutputs: m.resource.additionalSecretOutputs,
          };
    };
    const resourcesOfStack: StackResource[] = members.map(({ item, resource }) => {
      const deps: Record<string, StackResourceRef[]> = {};
      for (const [k, urns] of Object.entries(item.stack?.propertyDependencies ?? {}))
        deps[k] = urns.map(ref).filter((x): x is StackResourceRef => x !== undefined);
      return { ...resource, propertyDependencies: deps };
    });
    for (const rule of ALL_STACK_RULES) {
      if (level(rule.id) === "disabled") continue;
      const settings = resolveConfig(rule as never, config.settings[rule.id]) as object;
      for (const f of rule.check(resourcesOfStack, settings)) {
        const m = f.urn === undefined ? members[0] : (byUrn.get(f.urn) ?? members[0]);
        if (m === undefined) continue;
        add(rule.id, f, m.item, m.item.resource);
      }
    }
  }
  skipped.sort(
    (a, b) =>
      (a.location.file < b.location.file ? -1 : a.location.file > b.location.file ? 1 : 0) ||
      (a.location.line ?? 0) - (b.location.line ?? 0),
  );
  const errors = [...input.errors];
  const summary = {
    resources: resources.length,
    mandatory: findings.filter(blocks).length,
    advisory: findings.filter((f) => !f.unchecked && f.exemption === undefined && f.level === "advisory")
      .length,
    exempted: findings.filter((f) => f.exemption !== undefined).length,
    unchecked: findings.filter((f) => f.unchecked).length,
    skipped: skipped.length,
    errors: errors.length,
  };
  return {
    tool: { ...tool, pack: PACK_NAME },
    inputs: input.inputs,
    rules,
    resources,
    findings,
    skipped,
    errors,
    exemptions: config.exemptions,
    summary,
    exitCode: errors.length > 0 ? 2 : summary.mandatory > 0 ? 1 : 0,
  };
}
