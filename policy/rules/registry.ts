/** The registry: every rule once, and packs built by selection. */

import type { Subject } from "../workload";
import { disallowAddedCapabilities } from "./disallow-added-capabilities";
import { disallowDevices } from "./disallow-devices";
import { disallowExposedPorts } from "./disallow-exposed-ports";
import { disallowHostNamespaces } from "./disallow-host-namespaces";
import { disallowHostProbes } from "./disallow-host-probes";
import { disallowPrivilegeEscalation } from "./disallow-privilege-escalation";
import { disallowPrivileged } from "./disallow-privileged";
import { disallowRuntimeSocket } from "./disallow-runtime-socket";
import { disallowSecretEnv } from "./disallow-secret-env";
import { disallowSensitiveHostMounts } from "./disallow-sensitive-host-mounts";
import { disallowServiceAccountToken } from "./disallow-service-account-token";
import { disallowSysctls } from "./disallow-sysctls";
import { disallowUnconfinedLsm } from "./disallow-unconfined-lsm";
import { disallowUnconfinedSeccomp } from "./disallow-unconfined-seccomp";
import { disallowUnjudgedFields } from "./disallow-unjudged-fields";
import { disallowUnjudgedWorkloads } from "./disallow-unjudged-workloads";
import { disallowUnmaskedProc } from "./disallow-unmasked-proc";
import { disallowVolumeTypes } from "./disallow-volume-types";
import { requireDropAll } from "./require-drop-all";
import { requireDropNetAdmin } from "./require-drop-net-admin";
import { requireJobLifecycle } from "./require-job-lifecycle";
import { requireNoRestart } from "./require-no-restart";
import { requireNonRoot } from "./require-non-root";
import { requireReadableValues } from "./require-readable-values";
import { requireReadonlyRootfs } from "./require-readonly-rootfs";
import { requireResourceLimits } from "./require-resource-limits";
import { requireRuntimeClass } from "./require-runtime-class";
import { requireSingleJobMount } from "./require-single-job-mount";
import type { AnyRule, Finding } from "./types";
import { resolveConfig } from "./types";

/** Every resource rule, mission rules first. */
export const ALL_RULES: readonly AnyRule[] = [
  disallowExposedPorts,
  disallowRuntimeSocket,
  disallowSecretEnv,
  requireDropNetAdmin,
  disallowPrivileged,
  disallowHostNamespaces,
  disallowHostProbes,
  disallowAddedCapabilities,
  requireDropAll,
  disallowPrivilegeEscalation,
  disallowUnconfinedSeccomp,
  disallowUnconfinedLsm,
  disallowUnmaskedProc,
  requireNonRoot,
  requireReadonlyRootfs,
  requireResourceLimits,
  requireNoRestart,
  requireJobLifecycle,
  disallowDevices,
  disallowSysctls,
  disallowSensitiveHostMounts,
  requireSingleJobMount,
  disallowVolumeTypes,
  disallowServiceAccountToken,
  requireRuntimeClass,
  requireReadableValues,
  disallowUnjudgedFields,
  disallowUnjudgedWorkloads,
];

/** Which rules a pack holds: all by default, or only the mission rules, minus any excluded ids. */
export interface RuleSelection {
  readonly only?: readonly string[];
  readonly exclude?: readonly string[];
  readonly missionOnly?: boolean;
}

export function selectRules(sel: RuleSelection = {}): AnyRule[] {
  const unknown = [...(sel.only ?? []), ...(sel.exclude ?? [])].filter(
    (id) => !ALL_RULES.some((r) => r.id === id),
  );
  if (unknown.length > 0) {
    throw new Error(
      `unknown rule id(s): ${unknown.join(", ")}; known: ${ALL_RULES.map((r) => r.id).join(", ")}`,
    );
  }
  return ALL_RULES.filter(
    (r) =>
      (sel.only === undefined || sel.only.includes(r.id)) &&
      !(sel.exclude ?? []).includes(r.id) &&
      (!sel.missionOnly || r.mission),
  );
}

/** One rule's findings on one subject. */
export interface RuleResult {
  readonly rule: AnyRule;
  readonly findings: readonly Finding[];
}

/**
 * Runs rules over a subject with per-rule settings (as pack config gives them: `{ [ruleId]: {...} }`): every rule
 * that judges the subject, with no levels or exemptions. The pack, the preflight and `scan` run rules through
 * `evaluate` (policy/evaluate.ts), which applies those.
 */
export function judge(
  subject: Subject,
  rules: readonly AnyRule[] = ALL_RULES,
  config: Readonly<Record<string, object>> = {},
): RuleResult[] {
  return rules
    .filter((r) => r.subjects.includes(subject.subject))
    .map((rule) => ({ rule, findings: rule.check(subject, resolveConfig(rule, config[rule.id])) }));
}
