/**
 * Argo Workflows' WorkflowEventBinding (argoproj.io/v1alpha1; argo-workflows v3.7.18 server/event/dispatch
 * operation.go `dispatch`): when an event sent to the Argo Server's event endpoint matches `spec.event.selector`, the
 * server creates a Workflow from the WorkflowTemplate (ClusterWorkflowTemplate with `clusterScope`) named by
 * `spec.submit.workflowTemplateRef`, in the binding's namespace (common.NewWorkflowFromWorkflowTemplate: a Workflow
 * whose spec is that `workflowTemplateRef`), with one argument for each of `spec.submit.arguments.parameters`: the
 * value of its `valueFrom.event` expression over the event (`payload`, `metadata`, `discriminator`, `namespace`),
 * JSON-marshalled and unquoted when a string. The event is whatever the sender posts, so such a value is not known:
 * it stays a `{{workflow.parameters.<name>}}` placeholder, judged where it stands (templating.ts). An expression that
 * is one literal (a quoted string, a number, a boolean) evaluates to itself and is substituted. The value is checked
 * against the joined template parameter's `enum` when the Workflow is validated (workflow/validate
 * validateArgumentsValues: a value outside it fails the workflow before any pod), so an `enum` of one value makes it
 * known. A parameter without `valueFrom` makes the server refuse to submit ("valueFrom is nil"): such a binding
 * creates nothing.
 */
import { at, field, isObj, items, join, str } from "../lenient";
import type { Resolver } from "./references";

type Obj = Record<string, unknown>;

/** The value of an event expression that is one literal, or undefined when it reads the event. */
function literal(expr: string): string | undefined {
  const s = expr.trim();
  const quoted = /^"((?:[^"\\]|\\.)*)"$/.exec(s) ?? /^'((?:[^'\\]|\\.)*)'$/.exec(s);
  if (quoted !== null) {
    const body = quoted[1] ?? "";
    return /\\/.test(body) ? undefined : body;
  }
  if (/^-?\d+(?:\.\d+)?$/.test(s) || s === "true" || s === "false") return s;
  return undefined;
}

/**
 * The Workflow a binding submits, for the resolver to join with its template; undefined when the binding submits
 * nothing (no `submit`, or a parameter the server refuses).
 */
export function eventBindingWorkflow(props: Obj): Obj | undefined {
  const submit = at(props, "spec.submit");
  if (!isObj(submit)) return undefined;
  const parameters: Obj[] = [];
  for (const p of items(at(submit, "arguments.parameters"))) {
    const name = str(field(p, "name"));
    const from = field(p, "valueFrom");
    if (from === undefined || from === null) return undefined;
    if (typeof name !== "string") continue;
    const expr = str(field(from, "event"));
    const known = typeof expr === "string" ? literal(expr) : undefined;
    parameters.push(
      known === undefined ? { name, valueFrom: { event: "the event's payload" } } : { name, value: known },
    );
  }
  const metadata = isObj(props.metadata) ? props.metadata : {};
  return {
    apiVersion: "argoproj.io/v1alpha1",
    kind: "Workflow",
    metadata: {
      name: metadata.name,
      ...(metadata.namespace === undefined ? {} : { namespace: metadata.namespace }),
    },
    spec: { workflowTemplateRef: submit.workflowTemplateRef ?? {}, arguments: { parameters } },
  };
}

/** The joined Workflow with each event-sourced argument that its template's `enum` allows one value of set to it. */
export function withEnums(wf: Obj): Obj {
  const params = at(wf, "spec.arguments.parameters");
  if (!Array.isArray(params)) return wf;
  const out = params.map((p) => {
    const enums = items(field(p, "enum"));
    if (!isObj(p) || field(field(p, "valueFrom"), "event") === undefined || enums.length !== 1) return p;
    const only = enums[0];
    if (typeof only !== "string" && typeof only !== "number" && typeof only !== "boolean") return p;
    const { valueFrom: _v, ...rest } = p;
    return { ...rest, value: String(only) };
  });
  const spec = wf.spec as Obj;
  return { ...wf, spec: { ...spec, arguments: { ...(spec.arguments as Obj), parameters: out } } };
}

/** Paths of the joined Workflow, written where the binding holds them. */
export function bindingPath(path: string): string {
  return path.startsWith("spec.workflowTemplateRef")
    ? join("spec.submit", path.slice("spec.".length))
    : path.startsWith("spec.arguments")
      ? join("spec.submit", path.slice("spec.".length))
      : path;
}

/** Moves what a sub-resolver recorded into `r`, with the binding's paths. */
export function recordInto(r: Resolver, sub: Resolver): void {
  for (const u of sub.used) r.used.push({ ...u, ref: bindingPath(u.ref) });
  for (const u of sub.unresolved) r.unresolved.push({ ...u, path: bindingPath(u.path) });
  for (const p of sub.unknown) r.unknown.push(bindingPath(p));
}
