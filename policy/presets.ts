/**
 * Named presets: the level of every rule, chosen by name instead of one by one.
 *
 * - `baseline`: the rules answering a check of the Pod Security Standards' baseline level are mandatory, and so are
 *   the mission rules and the fail-closed ones (unjudged objects, unreadable values); the rest advisory;
 * - `restricted`: the same with the restricted level's checks too (restricted includes baseline);
 * - `sandbox`: every rule mandatory, including the ones advisory by default (read-only root, drop ALL, restart, Job
 *   lifecycle, service-account token, runtime class). A `remediate` rule stays `remediate`, which is mandatory in
 *   effect and also redacts;
 * - `gvisor`: `sandbox`, and every workload must run under gVisor: `sandbox-require-runtime-class` allows only the
 *   Docker runtime `runsc` and the Kubernetes RuntimeClass `gvisor` (the toolkit's names for it). Its own settings
 *   in the pack config still win.
 *
 * Under `baseline` and `restricted` nothing Pod Security's level refuses passes: every check of the level has a rule
 * that answers it (`crosswalk.psa`), made mandatory, with the settings below where the rule's default is looser. The
 * presets may refuse more than Pod Security (the rules' own defaults, and the mission rules, which stay mandatory
 * under every preset: exposed ports, runtime socket, secret env, NET_ADMIN).
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
  /** A mission wall: mandatory under every preset. */
  readonly mission?: boolean;
}

/**
 * True for the rules that fail closed on what no other rule can read (an unjudged object, an unreadable value,
 * CWE-636): under a preset they stay mandatory, or a Pod Security violation could pass inside what they refuse.
 */
function failsClosed(rule: PresetRule): boolean {
  return (rule.crosswalk.cwe ?? []).includes("636");
}

/** The level a rule runs at under a preset. */
export function presetLevel(preset: Preset, rule: PresetRule): EnforcementLevel {
  const psa = rule.crosswalk.psa ?? [];
  const checks =
    preset === "baseline" ? PSA_BASELINE_CHECKS : [...PSA_BASELINE_CHECKS, ...PSA_RESTRICTED_CHECKS];
  const mandatory =
    preset === "sandbox" ||
    preset === "gvisor" ||
    rule.mission === true ||
    failsClosed(rule) ||
    psa.some((c) => checks.includes(c));
  if (!mandatory) return "advisory";
  return rule.enforcementLevel === "remediate" ? "remediate" : "mandatory";
}

/** Every rule's level under a preset. */
export function presetLevels(preset: Preset, rules: readonly PresetRule[]): Record<string, EnforcementLevel> {
  return Object.fromEntries(rules.map((r) => [r.id, presetLevel(preset, r)]));
}

/**
 * The settings that make a rule refuse everything Pod Security's check refuses, where the rule's default is looser
 * in a way the toolkit chose (a hostPath job folder, the six-capability drop set, a uid without runAsNonRoot, any
 * spelling a runtime honours). A preset never loosens a rule below its default: where the default is stricter than
 * Pod Security (no sysctl, only NET_BIND_SERVICE added, an explicit seccomp profile), the preset keeps it.
 */
const PSA_BASELINE_SETTINGS: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
  "sandbox-disallow-volume-types": { allowHostPath: false },
  "sandbox-disallow-added-capabilities": { exactNames: true },
  "sandbox-disallow-unconfined-seccomp": { judgePodLevel: true },
  "sandbox-disallow-unconfined-lsm": { judgePodLevel: true },
  "sandbox-require-non-root": { judgePodLevel: true },
};
const PSA_RESTRICTED_SETTINGS: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
  ...PSA_BASELINE_SETTINGS,
  "sandbox-require-drop-all": { acceptSeedSix: false, exactNames: true },
  "sandbox-require-non-root": { requireRunAsNonRoot: true, judgePodLevel: true },
};
/**
 * `sandbox` is restricted's settings but two the toolkit's own templates rely on: a hostPath job folder (judged by
 * the host-mount rules) and the six-capability drop set.
 */
const SANDBOX_SETTINGS: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
  "sandbox-disallow-added-capabilities": { exactNames: true },
  "sandbox-disallow-unconfined-seccomp": { judgePodLevel: true },
  "sandbox-disallow-unconfined-lsm": { judgePodLevel: true },
  "sandbox-require-drop-all": { exactNames: true },
  "sandbox-require-non-root": { requireRunAsNonRoot: true, judgePodLevel: true },
};

/** The settings a preset gives rules, beneath what the pack config sets. */
const PRESET_SETTINGS: Readonly<Record<Preset, Readonly<Record<string, Readonly<Record<string, unknown>>>>>> =
  {
    baseline: PSA_BASELINE_SETTINGS,
    restricted: PSA_RESTRICTED_SETTINGS,
    sandbox: SANDBOX_SETTINGS,
    gvisor: { ...SANDBOX_SETTINGS, "sandbox-require-runtime-class": { allowed: ["runsc", "gvisor"] } },
  };

/** A rule's settings under a preset (empty when the preset sets none). */
export function presetSettings(
  preset: Preset | undefined,
  ruleId: string,
): Readonly<Record<string, unknown>> {
  return preset === undefined ? {} : (PRESET_SETTINGS[preset][ruleId] ?? {});
}
