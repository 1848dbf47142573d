/**
 * Pods whose fields come from another object of the input, judged as the controller builds them; and a reference
 * the input cannot answer, failing closed. Each object is judged alone by the resource rules; this rule reads the
 * objects of one set together (a stack in the pack, every document scanned together in `scan`):
 *
 * - Tekton `taskRef`, `pipelineRef` and step `ref` (StepAction), Argo `workflowTemplateRef` and `templateRef` (and a
 *   WorkflowEventBinding's `submit`, references-argo-events.ts)
 *   (../sources/kubernetes/references.ts), an Argo Rollout's `workloadRef`, analysis templates and Services
 *   (../sources/kubernetes/references-rollouts.ts), a KEDA ScaledObject's target (references-keda.ts): the referencing object with what it names put in place is judged by
 *   every blocking resource rule; what that finds beyond the object's own findings is reported on the referencing
 *   object, with the path where the referenced object writes it. A reference to an object the set does not hold,
 *   a resolver or bundle, a custom task or a name given by a parameter fails closed: what runs cannot be judged.
 * - A `Localhost` seccomp profile that names a file the Security Profiles Operator writes for a SeccompProfile of
 *   the set (../sources/kubernetes/spo-seccomp.ts) is judged by that profile's content, as a Docker profile is. A
 *   Localhost file the input does not ship stays the node administrator's file, as the seccomp rule reads it.
 * - A `Localhost` AppArmor profile (field or old annotation) is the profile of that name the node has loaded
 *   (../sources/kubernetes/spo-apparmor.ts): one shipped as an AppArmorProfile of the set is judged by its mode; one
 *   the input does not ship fails closed unless the configuration names it (`localhostAppArmorProfiles`), and the
 *   name `unconfined` is refused always.
 * - A RoleBinding or ClusterRoleBinding to a role neither in the input nor built in, a role that writes a ConfigMap
 *   a proxy or broker pod of the input mounts, a validating webhook sent through an ExternalName Service of the input
 *   (./cluster-references.ts).
 */

import { label, unchecked, violation } from "../rules/helpers";
import { ALL_RULES } from "../rules/registry";
import { type AnyRule, resolveConfig } from "../rules/types";
import { LAUNCH_TYPE } from "../sources/docker/read";
import { pathFrom, RefIndex, type Resolution, resolveReferences } from "../sources/kubernetes/references";
import {
  type AppArmorProfileObject,
  appArmorProfileProblem,
  appArmorProfiles,
} from "../sources/kubernetes/spo-apparmor";
import {
  type ProfileObject,
  profilesNamed,
  seccompProfiles,
  spoProfileProblem,
} from "../sources/kubernetes/spo-seccomp";
import { adaptResources } from "../sources/subject";
import type { Subject } from "../workload";
import { isUnknown } from "../workload";
import { clusterReferenceFindings } from "./cluster-references";
import { defineStackRule, type StackFinding, type StackResource } from "./types";

type Input = Pick<StackResource, "type" | "name" | "urn" | "props">;

/** The rules a pod built from references must pass: every rule that blocks by default. */
const BLOCKING: readonly AnyRule[] = ALL_RULES.filter(
  (r) => r.enforcementLevel === "mandatory" || r.enforcementLevel === "remediate",
);

type Found = { rule: string; message: string; path?: string; unchecked: boolean };

function findingsOf(views: readonly Subject[]): Map<string, Found> {
  const out = new Map<string, Found>();
  for (const s of views)
    for (const rule of BLOCKING) {
      if (!rule.subjects.includes(s.subject)) continue;
      for (const f of rule.check(s, resolveConfig(rule, undefined)))
        out.set(`${rule.id}\0${f.message}\0${f.path ?? ""}`, {
          rule: rule.id,
          message: f.message,
          unchecked: f.unchecked === true,
          ...(f.path === undefined ? {} : { path: f.path }),
        });
    }
  return out;
}

/** What the pods built from references break that the object alone does not. */
function resolvedFindings(r: Input, res: Resolution, views: readonly Subject[]): StackFinding[] {
  const out: StackFinding[] = [];
  const refs = [...new Set(res.used.map((u) => `${u.from.replace(/ spec.*$/, "")} (${u.ref})`))];
  const before = findingsOf(adaptResources(r.type, r.props, r.name));
  for (const [key, f] of findingsOf(views)) {
    if (before.has(key)) continue;
    const path = pathFrom(f.path, res.used);
    const message = `${f.rule}: ${f.message} (its pod as built from ${refs.join(", ")})`;
    out.push({
      ...(f.unchecked ? { message, unchecked: true } : violation(message, path)),
      ...(path === undefined ? {} : { path }),
      urn: r.urn,
    });
  }
  return out;
}

/** Each container whose Localhost profile is a SeccompProfile of the set, judged by the profile's content. */
function profileFindings(
  r: Input,
  views: readonly Subject[],
  profiles: readonly ProfileObject[],
): StackFinding[] {
  const out = new Map<string, StackFinding>();
  for (const s of views) {
    if (s.subject !== "workload") continue;
    for (const c of s.containers) {
      if (c.seccomp !== "Localhost" || typeof c.seccompLocalhost !== "string") continue;
      for (const p of profilesNamed(c.seccompLocalhost, profiles)) {
        const problem = spoProfileProblem(p, profiles);
        if (problem === undefined) continue;
        const what = `${label(c)} runs under the seccomp profile ${c.seccompLocalhost}, the file the Security Profiles Operator writes for SeccompProfile "${p.name}" of the input`;
        const f =
          problem === "unknown"
            ? unchecked(`the content of SeccompProfile "${p.name}" (${label(c)}'s profile)`, c.seccompSource)
            : violation(`sandbox-disallow-unconfined-seccomp: ${what}, and ${problem}`, c.seccompSource);
        out.set(`${f.message}\0${f.path ?? ""}`, { ...f, urn: r.urn });
      }
    }
  }
  return [...out.values()];
}

/** The pack's settings of this rule. */
export interface ReferencesConfig {
  /** AppArmor profiles the nodes load that the operator knows to confine (a `Localhost` profile by name). */
  readonly localhostAppArmorProfiles: readonly string[];
}

const NO_CONFIG: ReferencesConfig = { localhostAppArmorProfiles: [] };

/** True when an object may name a Localhost AppArmor profile (a cheap look before its pods are built). */
/** Whether the props' text may hold `pattern` (an object that cannot be written as text may hold anything). */
function mayHold(props: unknown, pattern: RegExp): boolean {
  try {
    return pattern.test(JSON.stringify(props) ?? "");
  } catch {
    return true;
  }
}

function mayNameLocalhost(props: unknown): boolean {
  return mayHold(props, /localhost/i);
}

function mayNameAppArmor(props: unknown): boolean {
  return mayHold(props, /apparmor/i);
}

/**
 * Each container that runs under a Localhost AppArmor profile: judged by the AppArmorProfile of the set that the
 * operator loads under that name; else allowed only when the configuration names it; `unconfined` never.
 */
function appArmorFindings(
  r: Input,
  views: readonly Subject[],
  shipped: readonly AppArmorProfileObject[],
  config: ReferencesConfig,
): StackFinding[] {
  const out = new Map<string, StackFinding>();
  const kubeAllowed =
    "RuntimeDefault, a profile shipped in the input as a security-profiles-operator.x-k8s.io AppArmorProfile of that name, or a node profile named in this rule's localhostAppArmorProfiles setting";
  // Docker's `apparmor=<name>` names a profile the host has loaded under that name, as a Kubernetes Localhost
  // profile names the node's: the same verdict, with nothing the input can ship for it.
  const dockerAllowed =
    "docker-default, or a host profile named in this rule's localhostAppArmorProfiles setting";
  for (const s of views) {
    if (s.subject !== "workload") continue;
    const allowed = s.origin.backend === "kubernetes" ? kubeAllowed : dockerAllowed;
    for (const c of s.containers) {
      if (c.appArmor !== "Localhost") continue;
      const name = c.appArmorLocalhost;
      let f: ReturnType<typeof violation> | undefined;
      if (isUnknown(name)) f = unchecked(`the AppArmor profile name of ${label(c)}`, c.appArmorSource, name);
      else if (typeof name !== "string" || name === "")
        f = violation(
          `${label(c)} sets AppArmor type Localhost (${c.appArmorSource}) with no profile name: the kubelet refuses it or runs a profile no rule judged; allowed: ${allowed}`,
          c.appArmorSource,
        );
      else if (name === "unconfined")
        f = violation(
          `${label(c)} names the AppArmor profile "unconfined" (${c.appArmorSource}), which is no confinement at all; allowed: ${allowed}`,
          c.appArmorSource,
        );
      else {
        const p = shipped.find((x) => x.name === name);
        if (p !== undefined) {
          const problem = appArmorProfileProblem(p.props);
          if (problem === "unknown")
            f = unchecked(
              `the mode of AppArmorProfile "${p.name}" (${label(c)}'s profile)`,
              c.appArmorSource,
            );
          else if (problem !== undefined)
            f = violation(
              `sandbox-disallow-unconfined-lsm: ${label(c)} runs under the AppArmor profile "${name}" (${c.appArmorSource}), the AppArmorProfile of the input, and ${problem}`,
              c.appArmorSource,
            );
        } else if (!config.localhostAppArmorProfiles.includes(name))
          f = violation(
            s.origin.backend === "kubernetes"
              ? `${label(c)} runs under the AppArmor profile localhost "${name}" (${c.appArmorSource}), which the input does not ship: its rules are whatever the node has loaded under that name (it may be in complain mode or allow everything), so it cannot be judged; allowed: ${allowed}`
              : `${label(c)} runs under the host's AppArmor profile "${name}" (${c.appArmorSource}: apparmor=${name}): its rules are whatever the host has loaded under that name (it may be in complain mode or allow everything), so it cannot be judged; allowed: ${allowed}`,
            c.appArmorSource,
          );
      }
      if (f !== undefined) out.set(`${f.message}\0${f.path ?? ""}`, { ...f, urn: r.urn });
    }
  }
  return [...out.values()];
}

/** The check, over any set of resources (the stack rule and the scan run it). */
export function checkReferences(
  resources: readonly Input[],
  config: ReferencesConfig = NO_CONFIG,
): StackFinding[] {
  const index = new RefIndex(resources);
  const profiles = seccompProfiles(resources);
  const armor = appArmorProfiles(resources);
  const out: StackFinding[] = clusterReferenceFindings(resources);
  for (const r of resources) {
    if (!r.type.startsWith("kubernetes:")) {
      // A Docker container's `apparmor=<name>`: the host's profile of that name.
      if ((r.type.startsWith("docker:") || r.type === LAUNCH_TYPE) && mayNameAppArmor(r.props))
        out.push(...appArmorFindings(r, adaptResources(r.type, r.props, r.name), armor, config));
      continue;
    }
    const res = resolveReferences(r.type, r.props, index);
    for (const u of res?.unresolved ?? [])
      out.push({ ...violation(`${kindOf(r)} "${r.name}" ${u.reason}`, u.path), urn: r.urn });
    for (const p of res?.unknown ?? [])
      out.push({ ...unchecked(`the object ${kindOf(r)} "${r.name}" names`, p), urn: r.urn });
    const localhost = mayNameLocalhost(r.props);
    const views =
      res !== undefined && res.used.length > 0
        ? adaptResources(res.type ?? r.type, res.props, r.name)
        : profiles.length > 0 || localhost
          ? adaptResources(r.type, r.props, r.name)
          : [];
    if (res !== undefined && res.used.length > 0) out.push(...resolvedFindings(r, res, views));
    if (profiles.length > 0) out.push(...profileFindings(r, views, profiles));
    if (localhost) out.push(...appArmorFindings(r, views, armor, config));
  }
  return out;
}

function kindOf(r: Input): string {
  return r.type.slice(r.type.lastIndexOf(":") + 1);
}

export const disallowUnjudgedReferences = defineStackRule({
  id: "sandbox-disallow-unjudged-references",
  description:
    "Pods built from other objects (Tekton Task, Pipeline and StepAction references, Argo WorkflowTemplate references and the templates a WorkflowEventBinding submits, an Argo Rollout's workloadRef, AnalysisTemplates and Services, a KEDA ScaledObject's scaleTargetRef) and seccomp and AppArmor profiles shipped as SeccompProfile and AppArmorProfile objects are judged with what they reference; a reference the input does not hold, a resolver, a bundle or a Localhost AppArmor profile (or a Docker apparmor=<name>) neither shipped nor configured fails closed, as do a RoleBinding or ClusterRoleBinding to a role neither in the input nor built in, a role that writes a ConfigMap a proxy or broker pod of the input mounts, and a validating webhook sent through an ExternalName Service of the input (outside the cluster).",
  mission: false,
  enforcementLevel: "mandatory",
  severity: "high",
  // CWE-636, not failing securely: what the rules cannot read must not pass as if judged.
  crosswalk: { cwe: ["636"] },
  configSchema: {
    properties: {
      localhostAppArmorProfiles: {
        type: "array",
        items: { type: "string" },
        description:
          "AppArmor profiles loaded on every node that the operator knows to confine: a pod may name one as a Localhost profile (field or annotation) without the input shipping it as an AppArmorProfile. `unconfined` is refused whatever this says.",
        default: [],
      },
    },
  },
  defaults: { localhostAppArmorProfiles: [] } as ReferencesConfig,
  remediationSteps:
    "Declare the referenced Role or ClusterRole, Task, Pipeline, StepAction, WorkflowTemplate, Deployment, StatefulSet, AnalysisTemplate, Service, SeccompProfile or AppArmorProfile in the same input (a resolver's object rendered into it), fix what its pods break, name a node's AppArmor profile in `localhostAppArmorProfiles`, or exempt the object with a reason (`--allow-unjudged <Kind>`).",
  check(resources, config) {
    return checkReferences(resources, config);
  },
});
