/**
 * The scan itself: resources from the inputs, judged by the CrossGuard pack's rules (resource rules on each view,
 * stack rules on each stack) with the pack's config, through the runner the pack uses (policy/evaluate.ts), into a
 * {@link ScanReport}. Pure apart from what the caller reads; no output here.
 */

import {
  type Evaluation,
  type EvaluationConfig,
  evaluate,
  levelOf,
  renderFinding,
} from "../../policy/evaluate";
import { idPart } from "../../policy/exemptions";
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
import { disallowUnjudgedWorkloads } from "../../policy/rules/disallow-unjudged-workloads";
import { ALL_RULES } from "../../policy/rules/registry";
import { withJobRoots } from "../../policy/rules/require-single-job-mount";
import { type AnyRule, PACK_NAME } from "../../policy/rules/types";
import { hostVolumes } from "../../policy/sources/kubernetes/claims";
import {
  type InputObject,
  inputObjectsOf,
  withInputObjects,
} from "../../policy/sources/kubernetes/input-objects";
import { dockerHostVolumes } from "../../policy/sources/pulumi/volumes";
import { adaptResources } from "../../policy/sources/subject";
import type { ScanItem } from "../../policy/sources/text/documents";
import { disallowHostPathClaims } from "../../policy/stack/disallow-host-path-claims";
import { DOCKER_NETWORK_TYPE, disallowOpenBridge } from "../../policy/stack/disallow-open-bridge";
import { disallowUnjudgedReferences } from "../../policy/stack/disallow-unjudged-references";
import { disallowWeakRuntimeClass, isRuntimeClass } from "../../policy/stack/disallow-weak-runtime-class";
import { ALL_STACK_RULES } from "../../policy/stack/registry";
import type { AnyStackRule, StackResource, StackResourceRef } from "../../policy/stack/types";
import type { ScanConfig } from "./config";

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
    enforcementLevel: levelOf(rule, config),
    scope: ALL_STACK_RULES.includes(rule as AnyStackRule) ? "stack" : "resource",
  };
}

export interface ScanInputs {
  readonly inputs: readonly string[];
  readonly items: readonly ScanItem[];
  readonly skipped: readonly Skipped[];
  readonly errors: readonly InputError[];
}

/** How a scan treats what it cannot judge. */
export interface ScanOptions {
  /**
   * An object that may create workloads the rules cannot read fails the scan (the pack's level, mandatory); off,
   * it is reported at advisory level (a level configured lower than that stays).
   */
  readonly failOnUnjudged?: boolean;
  /**
   * `--ci`: a mandatory (or remediate) rule's check that could not be made (a preview unknown in a field it reads, a
   * part of a pod that could not be read) fails the scan instead of being a note. The pack judges such a value again
   * at `pulumi up`, when it is known; a CI gate over the preview's JSON never sees it, so it fails closed there.
   */
  readonly failOnUnchecked?: boolean;
}

/** Why `--ci` fails a check it could not make, appended to the finding's message. */
export const UNCHECKED_IN_CI =
  "--ci fails closed on a mandatory check it could not make (the pack judges the value at the update; a gate on the preview never does)";

/** Pulumi plumbing that runs nothing itself: the stack, providers, components, plain networks and namespaces. */
function isPlumbing(item: ScanItem): boolean {
  if (item.stack === undefined) return false;
  if (item.stack.custom === false) return true;
  return (
    item.type === "pulumi:pulumi:Stack" ||
    item.type.startsWith("pulumi:providers:") ||
    /^docker:index\/network:Network$/.test(item.type) ||
    /^kubernetes:core\/v1:Namespace$/.test(item.type)
  );
}

/**
 * A view of an item: the item's own ref, or, for one of several pods (`<name>/<where>`), the item's id with
 * `/<where>` (written with `idPart`, as a site may hold keys of the input).
 */
function refFor(item: ScanItem, name: string): ResourceRef {
  if (name === item.name) return item.resource;
  return { ...item.resource, id: `${item.resource.id}/${idPart(name.slice(item.name.length + 1))}`, name };
}

/** Judges every item with the pack's rules and config. */
export function scanItems(
  input: ScanInputs,
  config: ScanConfig,
  tool: { name: string; version: string },
  options: ScanOptions = {},
): ScanReport {
  const rules = SCAN_RULES.map((r) => {
    const info = ruleInfo(r, config);
    // Without --fail-on-unjudged an unjudged object is reported but does not fail; a lower configured level stays.
    if (r.id !== disallowUnjudgedWorkloads.id || options.failOnUnjudged === true) return info;
    const blocking = info.enforcementLevel === "mandatory" || info.enforcementLevel === "remediate";
    return blocking ? { ...info, enforcementLevel: "advisory" as const } : info;
  });
  const evaluation: EvaluationConfig = {
    rules: config.settings,
    levels: Object.fromEntries(rules.map((r) => [r.id, r.enforcementLevel])),
    exemptions: config.exemptions,
  };
  const findings: ReportFinding[] = [];
  const skipped: Skipped[] = [...input.skipped];
  const resources: ResourceRef[] = [];
  // What each object's inputs were found to break, so that its live form (a state's outputs) adds only what is new.
  const reported = new Set<string>();
  const keyOf = (id: string, rule: string, f: Evaluation["finding"]) =>
    JSON.stringify([id, rule, f.path ?? "", renderFinding(f)]);
  const add = ({ rule, finding: f, level, exemption }: Evaluation, item: ScanItem, ref: ResourceRef) => {
    reported.add(keyOf(ref.id, rule.id, f));
    // With --ci a mandatory check that could not be made blocks, as a violation of its rule does.
    const failsClosed =
      options.failOnUnchecked === true &&
      f.unchecked === true &&
      exemption === undefined &&
      (level === "mandatory" || level === "remediate");
    findings.push({
      ruleId: rule.id,
      level,
      severity: rule.severity,
      message: renderFinding(failsClosed ? { ...f, message: `${f.message}: ${UNCHECKED_IN_CI}` } : f),
      ...(f.path === undefined ? {} : { path: f.path }),
      resource: ref,
      location: item.locate(f.path),
      unchecked: f.unchecked === true && !failsClosed,
      ...(exemption === undefined
        ? {}
        : { exemption: { reason: exemption.reason, resource: exemption.resource } }),
      ...(item.live === true ? { live: true } : {}),
    });
  };
  // Each Pulumi stack's resources, for the stack rules; every other document goes in one set (a claim in one file
  // may be bound to a volume in another), for the host-path claims rule.
  const stacks = new Map<string, { item: ScanItem; resource: StackResource }[]>();
  const plain: { item: ScanItem; resource: StackResource }[] = [];
  // PersistentVolumes that are host folders are judged with the claims that mount them (all documents together).
  const judgedVolumes = new Set<unknown>(
    hostVolumes(input.items.filter((i) => i.stack === undefined && i.live !== true)).map((v) => v.resource),
  );
  // docker.Volumes that bind a host folder are judged with the containers that mount them (sandbox-disallow-host-path-claims).
  for (const v of dockerHostVolumes(input.items)) judgedVolumes.add(v.resource);
  // RuntimeClasses are judged by what they select (sandbox-disallow-weak-runtime-class), with the rest of their set.
  for (const i of input.items) if (isRuntimeClass(i.type)) judgedVolumes.add(i);
  // Network create bodies are judged by their options and fields (sandbox-disallow-open-bridge), with their set.
  for (const i of input.items)
    if (i.stack === undefined && i.type === DOCKER_NETWORK_TYPE) judgedVolumes.add(i);
  // Each set's ServiceAccounts and ConfigMaps (a Pulumi stack's, or every other document's; a state's outputs go with
  // their stack), which its pods read (input-objects.ts: an unset automountServiceAccountToken, envFrom keys).
  const setOf = (item: ScanItem) =>
    item.stack !== undefined
      ? `stack:${item.stack.stack}`
      : item.live === true
        ? `stack:${item.resource.location.file}`
        : "documents";
  const objects = new Map<string, InputObject[]>();
  for (const item of input.items)
    if (item.live !== true) {
      const found = inputObjectsOf([item]);
      if (found.length > 0) objects.set(setOf(item), [...(objects.get(setOf(item)) ?? []), ...found]);
    }
  for (const item of input.items) {
    const subjects = adaptResources(item.type, item.props, item.name, item.taint).map((v) =>
      withInputObjects(v, objects.get(setOf(item)) ?? []),
    );
    if (item.live === true) {
      for (const view of subjects) {
        const ref = refFor(item, view.origin.name);
        for (const e of evaluate({ view, resource: ref.id }, ALL_RULES, evaluation))
          if (!reported.has(keyOf(ref.id, e.rule.id, e.finding))) add(e, item, ref);
      }
      continue;
    }
    const subject = subjects[0];
    const resource: StackResource = {
      type: item.type,
      name: item.name,
      urn: item.stack?.urn ?? item.resource.id,
      props: item.props,
      subject,
      additionalSecretOutputs: item.stack?.additionalSecretOutputs ?? [],
      propertyDependencies: {},
      ...(item.stack?.parent === undefined ? {} : { parent: item.stack.parent }),
    };
    if (item.stack === undefined) plain.push({ item, resource });
    else {
      const list = stacks.get(item.stack.stack) ?? [];
      list.push({ item, resource });
      stacks.set(item.stack.stack, list);
    }
    if (subject === undefined) {
      if (isRuntimeClass(item.type) || (item.stack === undefined && item.type === DOCKER_NETWORK_TYPE))
        resources.push(item.resource);
      // Everything no rule judged is listed, but the plumbing of a Pulumi stack, which runs nothing itself.
      else if (!isPlumbing(item) && !judgedVolumes.has(item))
        skipped.push({
          location: item.resource.location,
          kind: item.resource.kind,
          name: item.name,
          reason: `no rule judges ${item.resource.kind} (${item.type}), and it names no container image`,
        });
      continue;
    }
    resources.push(item.resource);
    for (const view of subjects) {
      const ref = refFor(item, view.origin.name);
      for (const e of evaluate({ view, resource: ref.id }, ALL_RULES, withDeclared(evaluation, item)))
        add(e, item, ref);
    }
  }
  // The documents' claims and volumes, judged together as the pack's stack rule judges a stack's.
  const byId = new Map(plain.map((m) => [m.resource.urn, m.item]));
  // The stack rules judge a set of Kubernetes documents as they judge a Pulumi stack's objects (proxy-only egress,
  // secret flow, the budget bound...); the rules that join Docker objects (or judge theirs too: a Docker
  // `apparmor=<name>`) judge every document together.
  const joining: readonly AnyStackRule[] = [
    disallowHostPathClaims,
    disallowWeakRuntimeClass,
    disallowOpenBridge,
    disallowUnjudgedReferences,
  ];
  const kubePlain = plain.filter((m) => m.resource.type.startsWith("kubernetes:"));
  for (const e of [
    ...evaluate({ stack: plain.map((m) => m.resource) }, joining, evaluation),
    ...(kubePlain.length === 0
      ? []
      : evaluate(
          { stack: kubePlain.map((m) => m.resource) },
          ALL_STACK_RULES.filter((r) => !joining.includes(r)),
          evaluation,
        )),
  ]) {
    const item = e.resource === undefined ? undefined : byId.get(e.resource);
    if (item === undefined) continue;
    if (!resources.includes(item.resource)) resources.push(item.resource);
    add(e, item, item.resource);
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
    for (const e of evaluate({ stack: resourcesOfStack }, ALL_STACK_RULES, evaluation)) {
      const m = (e.resource === undefined ? undefined : byUrn.get(e.resource)) ?? members[0];
      if (m === undefined) continue;
      add(e, m.item, m.item.resource);
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
    assumptions: [
      ...new Map(
        input.items.flatMap((i) =>
          (i.assumptions ?? []).map((statement) => {
            const a = { file: i.resource.location.file, statement };
            return [`${a.file}\0${statement}`, a] as const;
          }),
        ),
      ).values(),
    ],
    exemptions: config.exemptions,
    summary,
    exitCode: errors.length > 0 ? 2 : summary.mandatory > 0 ? 1 : 0,
  };
}

/** The evaluation of an item with the job roots it declares itself (a launch spec), as the launcher's preflight has them. */
function withDeclared(evaluation: EvaluationConfig, item: ScanItem): EvaluationConfig {
  return item.jobRoots === undefined
    ? evaluation
    : { ...evaluation, rules: withJobRoots(evaluation.rules, item.jobRoots) };
}
