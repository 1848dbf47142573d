/**
 * Controller templating in a rebuilt pod: the values a controller substitutes before it creates the pod, and what
 * stays a placeholder. Argo Workflows replaces `{{ name }}` in a template's text (argo-workflows
 * util/template/simple_template.go: the tag trimmed of spaces; `{{=expr}}` is an expression) with
 * `workflow.parameters.<n>` (`spec.arguments.parameters[].value`) and `inputs.parameters.<n>` (what the caller
 * passes, else the input's `value`, else its `default`: pkg/apis/workflow/v1alpha1 Inputs, Parameter). Tekton
 * replaces `$(params.<n>)`, `$(params["<n>"])`, `$(params['<n>'])` and the old `$(inputs.params.<n>)` with the
 * run's value, else the param's `default` (tektoncd/pipeline pkg/reconciler/taskrun/resources/apply.go); an array
 * param's `$(params.<n>[*])` with its elements (here joined by spaces: Tekton's webhook allows it only as a whole
 * element of a command or args list, which it expands) and `$(params.<n>[i])` with one; an object param's
 * `$(params.<n>.<key>)` with that key's value.
 *
 * A placeholder that no declared value fills stays one when the pod is created: its value is whatever the submitter
 * passes. In a field that cannot weaken a wall (a name, an image, a command line's text, a resource figure) it is
 * left as text (a resource figure is read as not known); anywhere else it is unreadable, and the rules fail closed.
 */
import { secretNameReason } from "../../../components/model";
import { UNKNOWN, Unreadable } from "../../workload";
import { field, isObj, items, str } from "../lenient";

export type Syntax = "argo" | "tekton";

/** The placeholders of each syntax, with the name inside as group 1. */
const PATTERN: Readonly<Record<Syntax, RegExp>> = {
  argo: /\{\{\s*([^{}]*?)\s*\}\}/g,
  tekton: /\$\(\s*([^()]*?)\s*\)/g,
};

/** True when `s` holds a placeholder of `syntax`. */
export function hasPlaceholder(s: string, syntax: Syntax): boolean {
  PATTERN[syntax].lastIndex = 0;
  return PATTERN[syntax].test(s);
}

/**
 * The value a Tekton placeholder names (`params.x`, `params["x"]`, `inputs.params.x`; an array's `x[*]` or `x[0]`,
 * an object's `x.key`), as tektonValues keys it, or undefined.
 */
function tektonParam(tag: string): string | undefined {
  const m =
    /^(?:inputs\.)?params(?:\.([^.[\]"']+)|\[\s*["']([^"']+)["']\s*\])(?:\[\s*(\*|\d+)\s*\]|\.([^.[\]"'()]+))?$/.exec(
      tag,
    );
  if (m === null) return undefined;
  const name = m[1] ?? m[2];
  return m[3] !== undefined ? `${name}[${m[3]}]` : m[4] !== undefined ? `${name}.${m[4]}` : name;
}

/** Replaces every placeholder whose value is known; the others are left as written. */
export function substitute(s: string, syntax: Syntax, values: ReadonlyMap<string, string>): string {
  return s.replace(PATTERN[syntax], (whole, tag: string) => {
    const key = syntax === "tekton" ? tektonParam(tag) : tag;
    const v = key === undefined ? undefined : values.get(key);
    return v === undefined ? whole : v;
  });
}

/** Every string in `v` with its known placeholders replaced (keys too). */
export function substituteAll(v: unknown, syntax: Syntax, values: ReadonlyMap<string, string>): unknown {
  if (values.size === 0) return v;
  if (typeof v === "string") return substitute(v, syntax, values);
  if (Array.isArray(v)) return v.map((x) => substituteAll(x, syntax, values));
  if (!isObj(v)) return v;
  return Object.fromEntries(
    Object.entries(v).map(([k, x]) => [substitute(k, syntax, values), substituteAll(x, syntax, values)]),
  );
}

/** Every string in `v` with each `$(<tag>)` whose tag `paths` holds replaced, exactly as written (no spaces). */
function replaceTags(v: unknown, paths: ReadonlyMap<string, string>): unknown {
  if (typeof v === "string")
    return v.replace(/\$\(([^()]*)\)/g, (whole, tag: string) => paths.get(tag) ?? whole);
  if (Array.isArray(v)) return v.map((x) => replaceTags(x, paths));
  if (!isObj(v)) return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, replaceTags(x, paths)]));
}

/** The three spellings Tekton accepts for a result's path, each mapped to `path`. */
function resultSpellings(prefix: string, name: string, path: string, into: Map<string, string>): void {
  for (const tag of [
    `${prefix}.${name}.path`,
    `${prefix}[${JSON.stringify(name)}].path`,
    `${prefix}['${name}'].path`,
  ])
    into.set(tag, path);
}

/**
 * A task spec with its result paths in place, as the TaskRun reconciler puts them (tektoncd/pipeline v1.11.0
 * pkg/reconciler/taskrun/resources/apply.go ApplyResults): `$(results.<n>.path)` of a declared task result is the
 * file `/tekton/results/<n>`, and in a step `$(step.results.<n>.path)` of that step's declared result is
 * `/tekton/steps/<step>/results/<n>` (`<step>` is `step-<name>`, or `step-unnamed-<index>`: pkg/pod StepName). A
 * path is no value a run chooses. A result's value (`$(tasks.<t>.results.<n>)`, `$(steps.<s>.results.<n>)`) is
 * written by a step when the run runs: it stays a placeholder, judged where it stands.
 */
export function tektonResultPaths(task: unknown): unknown {
  if (!isObj(task)) return task;
  const own = new Map<string, string>();
  for (const r of items(field(task, "results"))) {
    const n = str(field(r, "name"));
    if (typeof n === "string" && n !== "") resultSpellings("results", n, `/tekton/results/${n}`, own);
  }
  let out: Record<string, unknown> = task;
  if (Array.isArray(task.steps))
    out = {
      ...task,
      steps: task.steps.map((step, i) => {
        const name = str(field(step, "name"));
        const dir = typeof name === "string" && name !== "" ? `step-${name}` : `step-unnamed-${i}`;
        const paths = new Map<string, string>();
        for (const r of items(field(step, "results"))) {
          const n = str(field(r, "name"));
          if (typeof n === "string" && n !== "")
            resultSpellings("step.results", n, `/tekton/steps/${dir}/results/${n}`, paths);
        }
        return paths.size === 0 ? step : replaceTags(step, paths);
      }),
    };
  return own.size === 0 ? out : replaceTags(out, own);
}

/** One value when every candidate agrees and holds no placeholder; otherwise none. */
export function single(candidates: readonly unknown[], syntax: Syntax): string | undefined {
  const texts = candidates.map((c) => str(c));
  const first = texts[0];
  if (typeof first !== "string" || hasPlaceholder(first, syntax)) return undefined;
  return texts.every((t) => t === first) ? first : undefined;
}

/**
 * A Tekton param value's entries as the placeholders name them: a string under its name; an array's elements under
 * `name[i]` and all of them under `name[*]`; an object's values under `name.key`. Undefined when any part is not a
 * plain string (a placeholder left in, a value of another kind): then none of it is known.
 */
function tektonEntries(
  name: string,
  raw: unknown,
  outer: ReadonlyMap<string, string> | undefined,
): [string, string][] | undefined {
  const one = (x: unknown): string | undefined =>
    single([typeof x === "string" && outer !== undefined ? substitute(x, "tekton", outer) : x], "tekton");
  // A pipeline's whole array or object param passed on (`value: $(params.list[*])`) keeps its elements and keys.
  const whole = typeof raw === "string" ? /^\$\(\s*([^()]*?)\s*\)$/.exec(raw) : null;
  const from = whole === null ? undefined : tektonParam(whole[1] ?? "");
  if (outer !== undefined && from?.endsWith("[*]") === true) {
    const base = from.slice(0, -3);
    const parts = [...outer].filter(([k]) => k.startsWith(`${base}[`) || k.startsWith(`${base}.`));
    if (parts.some(([k]) => k !== from))
      return parts.map(([k, v]): [string, string] => [`${name}${k.slice(base.length)}`, v]);
  }
  if (Array.isArray(raw)) {
    const all = raw.map(one);
    if (all.some((x) => x === undefined)) return undefined;
    const known = all as string[];
    return [[`${name}[*]`, known.join(" ")], ...known.map((x, i): [string, string] => [`${name}[${i}]`, x])];
  }
  if (isObj(raw)) {
    const entries = Object.entries(raw).map(([k, x]): [string, string | undefined] => [
      `${name}.${k}`,
      one(x),
    ]);
    if (entries.some(([, x]) => x === undefined)) return undefined;
    return entries as [string, string][];
  }
  const v = one(raw);
  return v === undefined ? undefined : [[name, v]];
}

/** Tekton param values: each declared default, over which `given` (a run's or pipeline task's `params`) is laid. */
export function tektonValues(
  declared: unknown,
  given: unknown,
  outer?: ReadonlyMap<string, string>,
): Map<string, string> {
  const out = new Map<string, string>();
  const drop = (name: string): void => {
    for (const k of [...out.keys()])
      if (k === name || k.startsWith(`${name}[`) || k.startsWith(`${name}.`)) out.delete(k);
  };
  const put = (name: string, raw: unknown, o?: ReadonlyMap<string, string>): void => {
    drop(name);
    for (const [k, v] of tektonEntries(name, raw, o) ?? []) out.set(k, v);
  };
  for (const p of items(declared)) {
    const name = str(field(p, "name"));
    if (typeof name === "string" && field(p, "default") !== undefined) put(name, field(p, "default"));
  }
  for (const p of items(given)) {
    const name = str(field(p, "name"));
    if (typeof name === "string") put(name, field(p, "value"), outer);
  }
  return out;
}

/**
 * Variables whose value a rule reads (a GPU hook's device list, the egress proxy, the toolkit's own settings, a JVM's
 * options): a placeholder there may be any value, so it stays unreadable, as it does in a variable whose name says
 * it holds a credential (the secret rule judges such a name by the value it gets); any other variable's value is
 * text.
 */
const READ_ENV =
  /^(?:NVIDIA_VISIBLE_DEVICES|AMD_VISIBLE_DEVICES|HTTPS?_PROXY|https?_proxy|NO_PROXY|no_proxy|ALL_PROXY|all_proxy|SANDBOX_.*|JAVA_TOOL_OPTIONS|JDK_JAVA_OPTIONS|_JAVA_OPTIONS|SPARK_SUBMIT_OPTS|SPARK_JAVA_OPT_.*)$/;

/**
 * Pod paths whose placeholders cannot weaken a wall: the text stays, the rules read it as text. `env` is the
 * container's variable at that path (`containers[i].env[j]`), whose name decides whether its value is read.
 */
function harmless(p: readonly (string | number)[], env?: unknown): "text" | "figure" | undefined {
  const [top, a, , f, g, h] = p.map(String);
  if (top === "metadata")
    return a === "labels" || (a === "annotations" && !/seccomp|apparmor/i.test(String(p[2])))
      ? "text"
      : undefined;
  if (top !== "spec") return undefined;
  if (a === "containers" || a === "initContainers" || a === "ephemeralContainers") {
    if (f === "resources") return "figure";
    if (CONTAINER_TEXT.has(f ?? "")) return "text";
    if (f === "env" && h === "value" && p.length === 6) {
      const name = field(env, "name");
      return typeof name === "string" &&
        !hasPlaceholder(name, "tekton") &&
        !hasPlaceholder(name, "argo") &&
        !READ_ENV.test(name) &&
        secretNameReason(name) === undefined
        ? "text"
        : undefined;
    }
    if (f === "ports" && (h === "name" || h === "containerPort" || h === "protocol")) return "text";
    return f === "volumeMounts" && g === "mountPath" ? "text" : undefined;
  }
  if (a === "resources") return "figure";
  if (a === "volumes")
    return p.length === 4 && f === "name" ? "text" : VOLUME_TEXT.has(`${f}.${g}`) ? "text" : undefined;
  return POD_TEXT.has(a ?? "") ? "text" : undefined;
}

/** A container's fields whose text is judged as text (command lines by the credential checks) or not at all. */
const CONTAINER_TEXT = new Set([
  "name",
  "image",
  "imagePullPolicy",
  "workingDir",
  "terminationMessagePath",
  "args",
  "command",
]);
/** Volume sources that name another object. */
const VOLUME_TEXT = new Set([
  "persistentVolumeClaim.claimName",
  "configMap.name",
  "secret.secretName",
  "emptyDir.sizeLimit",
]);
/** Pod fields about scheduling and naming. */
const POD_TEXT = new Set([
  "activeDeadlineSeconds",
  "nodeSelector",
  "tolerations",
  "affinity",
  "priorityClassName",
  "schedulerName",
  "serviceAccountName",
  "terminationGracePeriodSeconds",
  "imagePullSecrets",
]);

const where = (p: readonly (string | number)[]): string =>
  p.map((s, i) => (typeof s === "number" ? `[${s}]` : i === 0 ? s : `.${s}`)).join("");

/**
 * The pod with what stays a placeholder judged by where it is: kept as text where it cannot weaken a wall, a value
 * not known (a resource figure), or unreadable. `who` names the controller for the reason.
 */
export function sealPlaceholders<T>(pod: T, syntax: Syntax, who: string): T {
  // The variable a value belongs to, read from the pod as written.
  const entry = (p: readonly (string | number)[]): unknown =>
    p.slice(0, 5).reduce<unknown>((v, k) => (Array.isArray(v) ? v[Number(k)] : field(v, String(k))), pod);
  const walk = (v: unknown, p: (string | number)[]): unknown => {
    if (typeof v === "string") {
      if (!hasPlaceholder(v, syntax)) return v;
      const kind = harmless(p, p[3] === "env" && p.length === 6 ? entry(p) : undefined);
      if (kind === "text") return v;
      if (kind === "figure") return UNKNOWN;
      return new Unreadable(
        `${JSON.stringify(v.length > 80 ? `${v.slice(0, 77)}...` : v)} is a ${who} placeholder that no declared value fills, so it is whatever the submitter passes (only names, images, command text and resource figures may be left as parameters)`,
      );
    }
    if (Array.isArray(v)) return v.map((x, i) => walk(x, [...p, i]));
    if (!isObj(v)) return v;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      // A label or annotation key left to a parameter may become any key (an injector's, an AppArmor profile's).
      if (hasPlaceholder(k, syntax) && (p[0] === "metadata" || harmless([...p, k]) !== "text")) {
        out[k] = new Unreadable(`the key ${JSON.stringify(k)} at ${where(p)} is a ${who} placeholder`);
        continue;
      }
      out[k] = walk(x, [...p, k]);
    }
    return out;
  };
  return walk(pod, []) as T;
}
