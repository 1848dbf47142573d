/**
 * Argo Workflows' parameter values in a rebuilt pod (the templating of templating.ts): a workflow's arguments, a
 * callable template's defaults and the values its `enum` allows, and what a template's callers pass.
 */
import { field, isObj, items, str } from "../lenient";
import { hasPlaceholder, single, substitute, substituteAll } from "./templating";

/**
 * `workflow.parameters.<n>` from a workflow spec's arguments (a parameter with `valueFrom` has no value here). In a
 * callable spec (a WorkflowTemplate's) the value is only a default: `argo submit --from … -p n=v` and a referring
 * Workflow's arguments replace it (argo-workflows workflow/util overrideParameters, the spec join), bounded only by
 * the parameter's `enum` (workflow/validate validateArgumentsValues); so it is known only when the enum allows one
 * value (several: {@link argoEnumChoices}).
 */
export function argoWorkflowValues(wf: unknown, callable = false): Map<string, string> {
  const out = new Map<string, string>();
  for (const p of items(field(field(wf, "arguments"), "parameters"))) {
    const name = str(field(p, "name"));
    const allowed = items(field(p, "enum"));
    const value = callable
      ? allowed.length > 0
        ? single(allowed, "argo")
        : undefined
      : single([field(p, "value")], "argo");
    if (typeof name === "string" && value !== undefined && field(p, "valueFrom") === undefined)
      out.set(`workflow.parameters.${name}`, value);
  }
  return out;
}

/** The most combinations of enum values a callable template is judged for; beyond, they stay unknown (fail closed). */
export const MAX_ENUM_COMBINATIONS = 64;

/** One combination of a callable spec's enum parameters: their values, and a label naming them. */
export interface EnumChoice {
  readonly values: ReadonlyMap<string, string>;
  readonly label: string;
}

/**
 * Every combination of values Argo accepts for a callable spec's parameters of several `enum` values that `used`
 * names (`{{workflow.parameters.<n>}}`): a submitted value must be one of them (workflow/validate
 * validateArgumentsValues), so judging the template once per combination judges every run. A parameter with an enum
 * value that is not plain text, and every such parameter when the combinations pass {@link MAX_ENUM_COMBINATIONS},
 * stay unknown. One empty choice when there are none.
 */
export function argoEnumChoices(wf: unknown, callable: boolean, used: string): EnumChoice[] {
  if (!callable) return [{ values: new Map(), label: "" }];
  const params: { key: string; values: string[] }[] = [];
  for (const p of items(field(field(wf, "arguments"), "parameters"))) {
    const name = str(field(p, "name"));
    const allowed = items(field(p, "enum")).map((x) => str(x));
    if (typeof name !== "string" || field(p, "valueFrom") !== undefined || allowed.length < 2) continue;
    const key = `workflow.parameters.${name}`;
    if (!used.includes(key)) continue;
    const values = [...new Set(allowed)];
    if (values.some((v) => typeof v !== "string" || hasPlaceholder(v, "argo"))) continue;
    params.push({ key, values: values as string[] });
  }
  const count = params.reduce((n, p) => n * p.values.length, 1);
  if (params.length === 0 || count > MAX_ENUM_COMBINATIONS) return [{ values: new Map(), label: "" }];
  let choices: [string, string][][] = [[]];
  for (const p of params)
    choices = choices.flatMap((c) => p.values.map((v) => [...c, [p.key, v] as [string, string]]));
  return choices.map((c) => ({
    values: new Map(c),
    label: c.map(([k, v]) => `${k.slice("workflow.parameters.".length)}=${JSON.stringify(v)}`).join(", "),
  }));
}

/**
 * Every string in `v` with `values` substituted, but under a key `keep` names (`resources`) only `fixed`: there a
 * placeholder of a parameter that takes several values stays one (a figure not known), so that no one combination
 * stands for the others' sizes.
 */
export function substituteOutside(
  v: unknown,
  values: ReadonlyMap<string, string>,
  fixed: ReadonlyMap<string, string>,
  keep: ReadonlySet<string>,
): unknown {
  if (typeof v === "string") return substitute(v, "argo", values);
  if (Array.isArray(v)) return v.map((x) => substituteOutside(x, values, fixed, keep));
  if (!isObj(v)) return v;
  return Object.fromEntries(
    Object.entries(v).map(([k, x]) => [
      substitute(k, "argo", values),
      keep.has(k) ? substituteAll(x, "argo", fixed) : substituteOutside(x, values, fixed, keep),
    ]),
  );
}

/**
 * The steps, DAG tasks and lifecycle hooks (the workflow's, a step's, a task's) of a workflow spec that may call the
 * template named `name`: by name, or by a `templateRef` naming a template of that name (references.ts adds the
 * referenced object's templates to the caller's, so either may be the one called; more callers only make a value
 * less likely to be single).
 */
function argoCallers(wf: unknown, name: unknown): unknown[] {
  const out: unknown[] = [];
  const calls = (c: unknown): boolean =>
    field(c, "template") === name || field(field(c, "templateRef"), "template") === name;
  const withHooks = (c: unknown): void => {
    if (calls(c)) out.push(c);
    const hooks = field(c, "hooks");
    if (isObj(hooks)) for (const h of Object.values(hooks)) if (calls(h)) out.push(h);
  };
  const hooks = field(wf, "hooks");
  if (isObj(hooks)) for (const h of Object.values(hooks)) if (calls(h)) out.push(h);
  for (const t of items(field(wf, "templates"))) {
    for (const group of items(field(t, "steps"))) for (const step of items(group)) withHooks(step);
    for (const task of items(field(field(t, "dag"), "tasks"))) withHooks(task);
  }
  return out;
}

/**
 * The values Argo gives a template's placeholders: the workflow's parameters, and each input parameter whose value
 * is the same whoever calls it. `callable` says others may call the template (a WorkflowTemplate, by `templateRef`
 * from any workflow, with any arguments: an argument replaces even an input's declared `value`, workflow/common
 * ProcessArgs): then no input parameter is known, and a workflow parameter only as argoWorkflowValues says.
 */
export function argoTemplateValues(wf: unknown, tpl: unknown, callable: boolean): Map<string, string> {
  const out = argoWorkflowValues(wf, callable);
  if (callable) return out;
  const name = field(tpl, "name");
  const callers = argoCallers(wf, name);
  const entry = name !== undefined && field(wf, "entrypoint") === name;
  for (const p of items(field(field(tpl, "inputs"), "parameters"))) {
    const pname = str(field(p, "name"));
    if (typeof pname !== "string" || field(p, "valueFrom") !== undefined) continue;
    const own = field(p, "value") ?? field(p, "default");
    const candidates: unknown[] = [];
    let someOmit = callers.length === 0 && !entry;
    const passed = (args: unknown): void => {
      const a = items(field(args, "parameters")).find((x) => field(x, "name") === pname);
      if (a === undefined) someOmit = true;
      else candidates.push(field(a, "valueFrom") !== undefined ? undefined : field(a, "value"));
    };
    for (const c of callers) passed(field(c, "arguments"));
    if (entry) passed(field(wf, "arguments"));
    if (someOmit) candidates.push(own);
    const resolved = candidates.map((c) =>
      typeof c === "string" ? substitute(c, "argo", argoWorkflowValues(wf)) : c,
    );
    const v = single(resolved, "argo");
    if (v !== undefined) out.set(`inputs.parameters.${pname}`, v);
  }
  return out;
}
