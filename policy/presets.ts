/**
 * Named presets: the level of every rule, chosen by name instead of one by one.
 *
 * - `baseline`: the rules answering a check of the Pod Security Standards' baseline level are mandatory, the rest
 *   advisory;
 * - `restricted`: the rules answering a baseline or restricted check (restricted includes baseline) are mandatory,
 *   the rest advisory;
 * - `sandbox`: every rule mandatory, including the ones advisory by default (read-only root, drop ALL, restart, Job
 *   lifecycle, service-account token, runtime class). A `remediate` rule stays `remediate`, which is mandatory in
 *   effect and also redacts;
 * - `gvisor`: `sandbox`, and every workload must run under gVisor: `sandbox-require-runtime-class` allows only the
 *   Docker runtime `runsc` and the Kubernetes RuntimeClass `gvisor` (the toolkit's names for it). Its own settings
 *   in the pack config still win.
 *
 * Which check is at which level is pod-security-admission's own table (k8s.io/pod-security-admission v0.36.3,
 * policy/check_*.go, each check's `Level`); each rule names the checks it answers in `crosswalk.psa`.
 */
import type { Crosswalk, EnforcementLevel } from "./rules/types";

export const PRESETS = ["baseline", "restricted", "sandbox", "gvisor"] as const;
export type Preset = (typeof PRESETS)[number];

/** pod-security-admission checks at the baseline level. */
export const PSA_BASELINE_CHECKS: readonly string[] = [
  "appArmorProfile",
  "capabilities_baseline",
  "hostNamespaces",
  "hostPathVolumes",
  "hostPorts",
  "hostProbesAndHostLifecycle",
  "privileged",
  "procMount",
  "seLinuxOptions",
  "seccompProfile_baseline",
  "sysctls",
  "windowsHostProcess",
];

/** pod-security-admission checks at the restricted level (the restricted profile also runs every baseline check). */
export const PSA_RESTRICTED_CHECKS: readonly string[] = [
  "allowPrivilegeEscalation",
  "capabilities_restricted",
  "procMount_restricted",
  "restrictedVolumes",
  "runAsNonRoot",
  "runAsUser",
  "seccompProfile_restricted",
];

export function isPreset(v: unknown): v is Preset {
  return typeof v === "string" && (PRESETS as readonly string[]).includes(v);
}

/** What a preset needs to know of a rule. */
export interface PresetRule {
  readonly id: string;
  readonly enforcementLevel: EnforcementLevel;
  readonly crosswalk: Crosswalk;
}

/** The level a rule runs at under a preset. */
export function presetLevel(preset: Preset, rule: PresetRule): EnforcementLevel {
  const psa = rule.crosswalk.psa ?? [];
  const checks =
    preset === "baseline" ? PSA_BASELINE_CHECKS : [...PSA_BASELINE_CHECKS, ...PSA_RESTRICTED_CHECKS];
  const mandatory = preset === "sandbox" || preset === "gvisor" || psa.some((c) => checks.includes(c));
  if (!mandatory) return "advisory";
  return rule.enforcementLevel === "remediate" ? "remediate" : "mandatory";
}

/** Every rule's level under a preset. */
export function presetLevels(preset: Preset, rules: readonly PresetRule[]): Record<string, EnforcementLevel> {
  return Object.fromEntries(rules.map((r) => [r.id, presetLevel(preset, r)]));
}

/** The settings a preset gives rules, beneath what the pack config sets. */
const PRESET_SETTINGS: Readonly<Record<Preset, Readonly<Record<string, Readonly<Record<string, unknown>>>>>> =
  {
    baseline: {},
    restricted: {},
    sandbox: {},
    gvisor: { "sandbox-require-runtime-class": { allowed: ["runsc", "gvisor"] } },
  };

/** A rule's settings under a preset (empty when the preset sets none). */
export function presetSettings(
  preset: Preset | undefined,
  ruleId: string,
): Readonly<Record<string, unknown>> {
  return preset === undefined ? {} : (PRESET_SETTINGS[preset][ruleId] ?? {});
}
