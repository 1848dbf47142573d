/**
 * Compose interpolation (compose-go `template` and `interpolation`): `$VAR`, `${VAR}`, `${VAR:-default}`,
 * `${VAR-default}`, `${VAR:?err}`, `${VAR?err}`, `${VAR:+alt}`, `${VAR+alt}`, `$$`, nested defaults, with the same
 * quirks (the operator is the first one written in the match, text after a braced substitution is interpolated
 * again, `${` that names nothing is an error). Strings at typed paths are then cast the way compose-go casts them:
 * `privileged: "yes"` is true, `read_only: "1"` is an error.
 */
import { ComposeError } from "./yaml";

/** Looks a variable up; `undefined` when unset. Records what it was asked. */
export type Lookup = (name: string) => string | undefined;

// `$$`, `$NAME`, `${NAME}`, `${NAME<op>...}` (greedy to the last `}`), or an invalid `${`.
const PATTERN = /\$(?:(\$)|([_a-z][_a-z0-9]*)|\{(?:([_a-z][_a-z0-9]*(?::?[-+?](?:.*))?)\}|()))/i;
const PATTERN_ALL = new RegExp(PATTERN.source, "gi");

const OPERATORS = [":?", "?", ":-", "-", ":+", "+"] as const;
type Operator = (typeof OPERATORS)[number];

/** The operator written first in the match (compose-go picks it before cutting at the first closing brace). */
function firstOperator(s: string): Operator {
  let best: Operator = ":?";
  let at = -1;
  for (const op of OPERATORS) {
    const i = s.indexOf(op);
    if (i >= 0 && (at < 0 || i < at)) {
      best = op;
      at = i;
    }
  }
  return best;
}

/** Index of the brace that closes the first `{` (the character after each `{` is skipped, as compose-go does). */
function firstClosingBrace(s: string): number {
  let open = 0;
  for (let i = 0; i < s.length; i++) {
    if (s[i] === "}") {
      open--;
      if (open === 0) return i;
    }
    if (s[i] === "{") {
      open++;
      i++;
    }
  }
  return -1;
}

function partition(s: string, sep: string): [string, string] {
  const i = s.indexOf(sep);
  return i < 0 ? [s, ""] : [s.slice(0, i), s.slice(i + sep.length)];
}

/** Applies an operator; `undefined` when the braced text does not contain it (then it is a plain `${NAME}`). */
function applyOperator(op: Operator, body: string, lookup: Lookup): string | undefined {
  if (!body.includes(op)) return undefined;
  const [name, arg] = partition(body, op);
  const value = lookup(name);
  switch (op) {
    case ":-":
    case "-":
      return value === undefined || (op === ":-" && value === "") ? substitute(arg, lookup) : value;
    case ":+":
    case "+":
      return value !== undefined && (op === "+" || value !== "") ? substitute(arg, lookup) : (value ?? "");
    default: {
      if (value === undefined || (op === ":?" && value === "")) {
        const reason = substitute(arg, lookup);
        throw new ComposeError(
          `required variable ${name} is missing a value${reason === "" ? "" : `: ${reason}`}`,
        );
      }
      return value;
    }
  }
}

function replace(match: string, lookup: Lookup): string {
  const op = firstOperator(match);
  const close = firstClosingBrace(match);
  const rest = close < 0 ? "" : match.slice(close + 1);
  const sub = close < 0 ? match : match.slice(0, close + 1);
  const m = PATTERN.exec(sub);
  if (m?.[1] !== undefined) return "$";
  const named = m?.[2];
  const braced = m?.[3];
  if (named === undefined && braced === undefined) throw new ComposeError("invalid interpolation format");
  if (braced !== undefined) {
    const applied = applyOperator(op, braced, lookup);
    if (applied !== undefined) return applied + substitute(rest, lookup);
  }
  return lookup(named ?? braced ?? "") ?? "";
}

/** Substitutes every variable of `template`; throws {@link ComposeError} like compose-go (first error wins). */
export function substitute(template: string, lookup: Lookup): string {
  let error: unknown;
  const out = template.replace(PATTERN_ALL, (match) => {
    try {
      return replace(match, lookup);
    } catch (e) {
      error ??= e;
      return "";
    }
  });
  if (error !== undefined) {
    if (error instanceof ComposeError && error.message === "invalid interpolation format")
      throw new ComposeError(
        `invalid interpolation format: ${JSON.stringify(template)} (escape a literal $ as $$)`,
      );
    throw error;
  }
  return out;
}

type Cast = (v: string) => unknown;

/** compose-go `toBoolean`: YAML 1.1 words are accepted (with a warning there), anything else is an error. */
export function toBoolean(v: string): boolean {
  const s = v.toLowerCase();
  if (s === "true" || s === "y" || s === "yes" || s === "on") return true;
  if (s === "false" || s === "n" || s === "no" || s === "off") return false;
  throw new Error(`invalid boolean: ${v}`);
}

function toInt(v: string): number {
  if (!/^[+-]?\d+$/.test(v)) throw new Error(`invalid integer: ${v}`);
  return Number(v);
}

function toFloat(v: string): number {
  const s = v.trim() === v ? v : "";
  if (!/^[+-]?(?:\d+\.?\d*(?:e[+-]?\d+)?|\.\d+(?:e[+-]?\d+)?|inf(?:inity)?|nan)$/i.test(s))
    throw new Error(`invalid number: ${v}`);
  return Number(s.replace(/^([+-]?)inf(inity)?$/i, "$1Infinity"));
}

const CONTAINER = ["services.*", "jobs.*", "services.*.pre_start.*"];
const WORKLOAD = ["services.*", "jobs.*"];

/** Paths whose strings compose-go casts after interpolation (loader/interpolate.go), with `*` and `[]`. */
const CASTS: readonly [string, Cast][] = [
  ...["external", "internal", "attachable", "enable_ipv4", "enable_ipv6"].map((k): [string, Cast] => [
    `networks.*.${k}`,
    toBoolean,
  ]),
  ["volumes.*.external", toBoolean],
  ["secrets.*.external", toBoolean],
  ["configs.*.external", toBoolean],
  ...CONTAINER.flatMap((p): [string, Cast][] => [
    [`${p}.cpu_count`, toInt],
    [`${p}.cpu_percent`, toFloat],
    [`${p}.cpu_period`, toInt],
    [`${p}.cpu_quota`, toInt],
    [`${p}.cpu_rt_period`, toInt],
    [`${p}.cpu_rt_runtime`, toInt],
    [`${p}.cpus`, toFloat],
    [`${p}.cpu_shares`, toInt],
    [`${p}.init`, toBoolean],
    [`${p}.oom_kill_disable`, toBoolean],
    [`${p}.oom_score_adj`, toInt],
    [`${p}.pids_limit`, toInt],
    [`${p}.privileged`, toBoolean],
    [`${p}.read_only`, toBoolean],
    [`${p}.volumes.[].read_only`, toBoolean],
    [`${p}.volumes.[].volume.nocopy`, toBoolean],
  ]),
  ...WORKLOAD.flatMap((p): [string, Cast][] => [
    [`${p}.ports.[].target`, toInt],
    [`${p}.stdin_open`, toBoolean],
    [`${p}.tty`, toBoolean],
    [`${p}.scale`, toInt],
    [`${p}.deploy.replicas`, toInt],
  ]),
];

function matches(path: readonly string[], pattern: string): boolean {
  const parts = pattern.split(".");
  if (parts.length !== path.length) return false;
  return parts.every((p, i) => p === "*" || p === path[i]);
}

function castFor(path: readonly string[]): Cast | undefined {
  return CASTS.find(([p]) => matches(path, p))?.[1];
}

/** Interpolates every string value of a file's model (keys are never interpolated), then casts typed paths. */
export function interpolateModel(value: unknown, lookup: Lookup, path: readonly string[] = []): unknown {
  if (typeof value === "string") {
    let s: string;
    try {
      s = substitute(value, lookup);
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      throw new ComposeError(`error while interpolating ${path.join(".")}: ${msg}`);
    }
    const cast = castFor(path);
    if (cast === undefined) return s;
    try {
      return cast(s);
    } catch (e) {
      throw new ComposeError(
        `error while interpolating ${path.join(".")}: failed to cast to expected type: ${(e as Error).message}`,
      );
    }
  }
  if (Array.isArray(value)) return value.map((v) => interpolateModel(v, lookup, [...path, "[]"]));
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = interpolateModel(v, lookup, [...path, k]);
    return out;
  }
  return value;
}
