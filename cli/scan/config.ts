/**
 * The pack config `scan --config` takes: the file `pulumi preview --policy-pack-config` takes, i.e.
 * `{ "all": "<level>" | { "enforcementLevel": ... }, "<rule id>": "<level>" | { "enforcementLevel"?, ...settings } }`,
 * plus exemptions, which must each give a reason:
 *   `{ "exemptions": [{ "rule": "<id>", "resource": "<urn or file:Kind/name>", "reason": "..." }] }` or
 *   `{ "<rule id>": { "exemptions": [{ "resource": "...", "reason": "..." }] } }`,
 * and a preset, `{ "preset": "baseline" | "restricted" | "sandbox" | "gvisor" }` (policy/presets.ts).
 * Levels: a rule's own entry, else `all`, else the preset's level, else the rule's default.
 * Every problem is reported at once; the scan refuses to run on a config it cannot read (exit code 2).
 *
 * The Pulumi CLI reads `--policy-pack-config` itself and refuses a top-level value that is neither a level nor an
 * object (pkg/resource/analyzer `parsePolicyConfigs`), so `preset` and the top-level `exemptions` list are `scan`'s
 * shorthand: {@link toPackConfig} writes the same config in the shape the engine accepts.
 */
import { isPreset, PRESETS, type Preset, presetLevel, presetSettings } from "../../policy/presets";
import type { Exemption } from "../../policy/report/model";
import {
  type ConfigProperty,
  type ConfigSchema,
  type Crosswalk,
  ENFORCEMENT_LEVELS,
  type EnforcementLevel,
} from "../../policy/rules/types";

const LEVELS = ENFORCEMENT_LEVELS;

/** A rule's facts the config is checked against. */
export interface ConfigurableRule {
  readonly id: string;
  readonly enforcementLevel: EnforcementLevel;
  readonly crosswalk: Crosswalk;
  readonly configSchema?: ConfigSchema;
}

export interface ScanConfig {
  /** Per rule: the settings the rule runs with (as the pack's `getConfig` gives them). */
  readonly settings: Readonly<Record<string, object>>;
  /** Per rule: the level it runs at. */
  readonly levels: Readonly<Record<string, EnforcementLevel>>;
  readonly exemptions: readonly Exemption[];
  /** The preset the levels started from, if any. */
  readonly preset?: Preset;
}

export class ConfigError extends Error {
  constructor(
    readonly problems: readonly string[],
    source: string,
  ) {
    super(`invalid pack config ${source}:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function typeOf(v: unknown): string {
  if (Array.isArray(v)) return "array";
  if (v === null) return "null";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

/** Checks a value against the subset of JSON schema the rules' `configSchema` uses. */
function checkValue(v: unknown, s: ConfigProperty, where: string, problems: string[]): void {
  const t = typeOf(v);
  const ok = t === s.type || (s.type === "number" && t === "integer");
  if (!ok) {
    problems.push(
      `${where} = ${JSON.stringify(v)}: must be ${s.type === "integer" ? "an integer" : `a ${s.type}`}`,
    );
    return;
  }
  if (s.enum !== undefined && !s.enum.includes(v)) {
    problems.push(
      `${where} = ${JSON.stringify(v)}: must be one of ${s.enum.map((e) => JSON.stringify(e)).join(", ")}`,
    );
  }
  if (s.minimum !== undefined && typeof v === "number" && v < s.minimum) {
    problems.push(`${where} = ${v}: must be at least ${s.minimum}`);
  }
  if (s.type === "array" && s.items !== undefined && Array.isArray(v)) {
    const items = s.items;
    v.forEach((x, i) => {
      checkValue(x, items, `${where}[${i}]`, problems);
    });
  }
  if (s.type === "object" && isObj(v) && isObj(s.additionalProperties)) {
    const extra = s.additionalProperties as ConfigProperty;
    for (const [k, x] of Object.entries(v)) checkValue(x, extra, `${where}.${k}`, problems);
  }
}

function readExemption(
  raw: unknown,
  where: string,
  rule: string | undefined,
  known: ReadonlySet<string>,
  problems: string[],
): Exemption | undefined {
  if (!isObj(raw)) {
    problems.push(`${where}: an exemption is an object { rule, resource, reason }`);
    return undefined;
  }
  const ruleId = rule ?? raw.rule;
  const resource = raw.resource;
  const reason = raw.reason;
  const bad: string[] = [];
  if (typeof ruleId !== "string" || !known.has(ruleId))
    bad.push(`rule ${JSON.stringify(ruleId)} is not a rule of the pack`);
  if (typeof resource !== "string" || resource.trim() === "")
    bad.push("resource must name the resource (a URN, or <file>:<Kind>/<name>; * matches anything)");
  if (typeof reason !== "string" || reason.trim() === "")
    bad.push("an exemption needs a reason, which the report prints");
  const extra = Object.keys(raw).filter((k) => !["rule", "resource", "reason"].includes(k));
  if (extra.length > 0) bad.push(`unknown key(s) ${extra.join(", ")}`);
  if (bad.length > 0) {
    const what = `${typeof ruleId === "string" ? ruleId : "?"} on ${typeof resource === "string" ? resource : "?"}`;
    problems.push(`${where} (${what}): ${bad.join("; ")}`);
    return undefined;
  }
  return { rule: ruleId as string, resource: (resource as string).trim(), reason: (reason as string).trim() };
}

function readLevel(v: unknown, where: string, problems: string[]): EnforcementLevel | undefined {
  if (typeof v === "string" && (LEVELS as readonly string[]).includes(v)) return v as EnforcementLevel;
  problems.push(`${where} = ${JSON.stringify(v)}: must be one of ${LEVELS.join(", ")}`);
  return undefined;
}

/**
 * Reads a pack config object against the rules the scan runs. `source` names the file in messages; `preset` (from
 * `--preset`) must be the file's, when the file names one: two presets are refused, never one silently chosen.
 */
export function readScanConfig(
  raw: unknown,
  rules: readonly ConfigurableRule[],
  source: string,
  options: { preset?: Preset } = {},
): ScanConfig {
  const problems: string[] = [];
  const known = new Set(rules.map((r) => r.id));
  const settings: Record<string, object> = {};
  const levels: Record<string, EnforcementLevel> = {};
  const exemptions: Exemption[] = [];
  if (raw === undefined || raw === null) raw = {};
  if (!isObj(raw)) throw new ConfigError(["the config must be a JSON object keyed by rule id"], source);
  let all: EnforcementLevel | undefined;
  if (raw.all !== undefined) {
    const a = raw.all;
    all = readLevel(isObj(a) ? a.enforcementLevel : a, "all", problems);
  }
  let preset = options.preset;
  if (raw.preset !== undefined) {
    if (!isPreset(raw.preset))
      problems.push(`preset = ${JSON.stringify(raw.preset)}: must be one of ${PRESETS.join(", ")}`);
    else if (preset !== undefined && preset !== raw.preset)
      problems.push(
        `preset = ${JSON.stringify(raw.preset)} contradicts --preset ${preset}: the scan would not judge as the config says; give one`,
      );
    else preset = raw.preset;
  }
  if (raw.exemptions !== undefined) {
    if (!Array.isArray(raw.exemptions)) problems.push("exemptions: must be a list");
    else
      raw.exemptions.forEach((e, i) => {
        const x = readExemption(e, `exemptions[${i}]`, undefined, known, problems);
        if (x !== undefined) exemptions.push(x);
      });
  }
  for (const [key, value] of Object.entries(raw)) {
    if (key === "all" || key === "exemptions" || key === "preset") continue;
    const rule = rules.find((r) => r.id === key);
    if (rule === undefined) {
      problems.push(`${key}: not a rule of the pack; known: ${[...known].join(", ")}`);
      continue;
    }
    if (typeof value === "string") {
      const l = readLevel(value, key, problems);
      if (l !== undefined) levels[key] = l;
      continue;
    }
    if (!isObj(value)) {
      problems.push(
        `${key} = ${JSON.stringify(value)}: must be an enforcement level or an object of settings`,
      );
      continue;
    }
    const ruleSettings: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (k === "enforcementLevel") {
        const l = readLevel(v, `${key}.enforcementLevel`, problems);
        if (l !== undefined) levels[key] = l;
      } else if (k === "exemptions") {
        if (!Array.isArray(v)) problems.push(`${key}.exemptions: must be a list`);
        else
          v.forEach((e, i) => {
            const x = readExemption(e, `${key}.exemptions[${i}]`, key, known, problems);
            if (x !== undefined) exemptions.push(x);
          });
      } else {
        const prop = rule.configSchema?.properties[k];
        if (prop === undefined) {
          const allowed = Object.keys(rule.configSchema?.properties ?? {});
          problems.push(
            `${key}.${k}: not a setting of this rule; ${allowed.length === 0 ? "it has none" : `settings: ${allowed.join(", ")}`}`,
          );
          continue;
        }
        checkValue(v, prop, `${key}.${k}`, problems);
        ruleSettings[k] = v;
      }
    }
    settings[key] = ruleSettings;
  }
  if (problems.length > 0) throw new ConfigError(problems, source);
  for (const r of rules) {
    const fromPreset = presetSettings(preset, r.id);
    if (Object.keys(fromPreset).length > 0) settings[r.id] = { ...fromPreset, ...settings[r.id] };
  }
  for (const r of rules)
    levels[r.id] =
      levels[r.id] ?? all ?? (preset === undefined ? r.enforcementLevel : presetLevel(preset, r));
  return { settings, levels, exemptions, ...(preset === undefined ? {} : { preset }) };
}

/**
 * The config as `pulumi preview --policy-pack-config` takes it, with the same verdicts as `scan` gives: every rule's
 * level spelled out (so neither a preset nor `all` is needed), its settings, and its exemptions under its own key.
 */
export function toPackConfig(
  config: ScanConfig,
  rules: readonly ConfigurableRule[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const r of rules) {
    const level = config.levels[r.id] ?? r.enforcementLevel;
    const settings = config.settings[r.id] ?? {};
    const exemptions = config.exemptions
      .filter((e) => e.rule === r.id)
      .map((e) => ({ resource: e.resource, reason: e.reason }));
    out[r.id] =
      Object.keys(settings).length === 0 && exemptions.length === 0
        ? level
        : { enforcementLevel: level, ...settings, ...(exemptions.length === 0 ? {} : { exemptions }) };
  }
  return out;
}
