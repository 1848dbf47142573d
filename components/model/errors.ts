import { z } from "zod";
import { closestKey } from "./near";

/** One thing wrong with a spec: where (a dotted key), what was given, and what is allowed. */
export interface SpecProblem {
  /** Dotted path of the offending key, e.g. `templates.default.resources.memoryMb`. */
  readonly key: string;
  /** The value as given, rendered for a human; `undefined` when the value must not be printed (a secret). */
  readonly value: string | undefined;
  /** What is wrong and what is allowed. */
  readonly message: string;
}

/**
 * The one error a bad spec produces. Its message lists every problem, each naming the key, the value and what is
 * allowed; a value that may be a secret is never printed.
 */
export class SpecError extends Error {
  readonly problems: readonly SpecProblem[];

  constructor(problems: readonly SpecProblem[], heading = "invalid sandbox project") {
    super(`${heading}:\n${problems.map((p) => `  - ${renderProblem(p)}`).join("\n")}`);
    this.name = "SpecError";
    this.problems = problems;
  }
}

/** `key = value: message`, or `key: message` when there is no printable value. */
export function renderProblem(p: SpecProblem): string {
  return p.value === undefined ? `${p.key}: ${p.message}` : `${p.key} = ${p.value}: ${p.message}`;
}

/** Renders a given value for an error message: strings quoted, objects as compact JSON, long values cut. */
export function renderValue(value: unknown): string {
  let s: string;
  if (value === undefined) s = "(missing)";
  else if (typeof value === "string") s = JSON.stringify(value);
  else if (typeof value === "number" || typeof value === "boolean" || value === null) s = String(value);
  else s = JSON.stringify(value) ?? String(value);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

/**
 * Joins a key prefix and a dotted key: `joinKey("templates", "a.b")` is `templates.a.b`; a prefix ending in `:`
 * is a Pulumi config namespace, so `joinKey("sandbox:", "budget.monthlyCapUsd")` is `sandbox:budget.monthlyCapUsd`.
 */
export function joinKey(prefix: string, key: string): string {
  if (prefix === "") return key === "" ? "(root)" : key;
  if (key === "") return prefix.endsWith(":") ? prefix.slice(0, -1) : prefix;
  if (prefix.endsWith(":") || key.startsWith("[")) return prefix + key;
  return `${prefix}.${key}`;
}

function dotted(prefix: string, path: readonly PropertyKey[]): string {
  const parts = path.map((p) => (typeof p === "number" ? `[${p}]` : String(p)));
  const joined = parts.reduce((acc, p) => (p.startsWith("[") || acc === "" ? acc + p : `${acc}.${p}`), "");
  return joinKey(prefix, joined);
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = root;
  for (const p of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[p];
  }
  return cur;
}

/** Marks a custom zod issue whose value must never be printed. */
export const REDACT = { redact: true } as const;

/** Turns zod issues into problems with dotted keys under `prefix`, reading each value from the raw input. */
export function problemsFromZod(error: z.ZodError, input: unknown, prefix = ""): SpecProblem[] {
  const problems: SpecProblem[] = [];
  for (const issue of error.issues) {
    if (issue.code === "unrecognized_keys") {
      // The allowed keys are in the message (strictObject): the nearest one is suggested, at every level.
      const allowed = /allowed keys: (.*)$/.exec(issue.message)?.[1]?.split(", ") ?? [];
      for (const k of issue.keys) {
        const near = closestKey(k, allowed);
        problems.push({
          key: dotted(prefix, [...issue.path, k]),
          value: undefined,
          message:
            near === undefined
              ? issue.message
              : issue.message.replace("unknown key;", `unknown key (did you mean "${near}"?);`),
        });
      }
      continue;
    }
    if (issue.code === "invalid_key") {
      problems.push({
        key: dotted(prefix, issue.path),
        value: renderValue(issue.path[issue.path.length - 1]),
        message: issue.issues[0]?.message ?? issue.message,
      });
      continue;
    }
    const redact =
      issue.code === "custom" && (issue.params as { redact?: boolean } | undefined)?.redact === true;
    const value = valueAt(input, issue.path);
    problems.push({
      key: dotted(prefix, issue.path),
      value: redact ? undefined : renderValue(value),
      message: issue.message,
    });
  }
  return problems;
}

/**
 * A strict object schema whose unknown keys are refused with the list of keys that are allowed, so a typo such as
 * `memoryMB` is caught instead of silently ignored.
 */
export function strictObject<T extends z.ZodRawShape>(shape: T) {
  const allowed = Object.keys(shape).join(", ");
  return z.strictObject(shape, {
    error: (iss) => {
      if (iss.code === "unrecognized_keys") return `unknown key; allowed keys: ${allowed}`;
      if (iss.code === "invalid_type") return `expected a mapping with the keys ${allowed}`;
      return undefined;
    },
  });
}

/** Parses `input` with `schema`, or throws one SpecError listing every problem under `prefix`. */
export function parseOrThrow<S extends z.ZodType>(
  schema: S,
  input: unknown,
  prefix = "",
  heading?: string,
): z.output<S> {
  // Without zod's compiled fast path: a config is checked once a process, and compiling that path (`new Function`,
  // which no code cache keeps) costs more than it saves.
  const result = schema.safeParse(input, { jitless: true });
  if (result.success) return result.data;
  throw new SpecError(problemsFromZod(result.error, input, prefix), heading);
}
