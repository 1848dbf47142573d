/**
 * Objects a controller creates from what another object holds: each is judged like an object of the input, by every
 * reader, and what cannot be read is refused (an unjudged workload).
 * - Argo Workflows `resource` templates (argo-workflows pkg/apis/workflow/v1alpha1 ResourceTemplate: `action`,
 *   `manifest`, `manifestFrom.artifact`): the executor runs `kubectl <action> -f` on the manifest text after the
 *   controller substituted its `{{...}}` parameters (workflow/executor/resource.go), so the text is read as a YAML
 *   stream as kubectl reads it; `get` and `delete` create nothing; `patch` changes a live object the scan cannot see;
 *   a manifest fetched from an artifact cannot be read.
 * - Argo Events Sensor triggers (argo-events pkg/apis/events/v1alpha1 sensor_types.go TriggerTemplate): a `k8s`
 *   trigger (operation create, update; patch changes a live object) and an `argoWorkflow` trigger (operation submit)
 *   create the object of their `source` (ArtifactLocation): `resource` (the object) and `inline` (its text) are read;
 *   `s3`, `file`, `url`, `configmap` and `git` are fetched when the event comes. Trigger `parameters` write event
 *   data into the object at `dest`: only into its name, labels and annotations can they not weaken a wall.
 * - Tekton Triggers TriggerTemplate (tektoncd/triggers pkg/apis/triggers/v1beta1 TriggerTemplateSpec:
 *   `resourcetemplates[]`): each object is created with `$(tt.params.<n>)` replaced by the event's values.
 */
import { isUnknown } from "../../workload";
import { field, isObj, items, join, str } from "../lenient";
import { kubeYamlDocuments } from "./go-json";
import type { KubeType } from "./sites";
import { hasPlaceholder, type Syntax, substitute } from "./templating";
import { argoTemplateValues } from "./templating-argo";

/** One object a controller will create, typed as the input's objects are. */
export interface EmbeddedObject {
  readonly type: string;
  readonly props: unknown;
  /** Where it is written in the carrier. */
  readonly path: string;
}

/** What the controller creates that no reader can read, and why. */
export interface EmbeddedRefusal {
  readonly path: string;
  readonly reason: string;
}

export interface Embedded {
  readonly objects: EmbeddedObject[];
  readonly refused: EmbeddedRefusal[];
}

/** The type token of an object by its apiVersion and kind (as file.ts types the input's own objects). */
function typeOf(o: unknown): string | undefined {
  const api = str(field(o, "apiVersion"));
  const kind = str(field(o, "kind"));
  if (typeof api !== "string" || typeof kind !== "string" || !/^[A-Za-z0-9]+$/.test(kind)) return undefined;
  const i = api.indexOf("/");
  const group = i < 0 ? "core" : api.slice(0, i);
  const version = i < 0 ? api : api.slice(i + 1);
  if (version.includes("/")) return undefined;
  return `kubernetes:${group === "" ? "core" : group}/${version === "" ? "v1" : version}:${kind}`;
}

/** Keys whose placeholder text cannot weaken a wall in any object: names, labels, images, command text. */
const TEXT_KEYS = new Set([
  "name",
  "generateName",
  "namespace",
  "image",
  "args",
  "command",
  "value",
  "claimName",
]);

/** The first path in `o` where a placeholder of `syntax` stands in a field that may weaken a wall. */
function placeholderAt(o: unknown, syntax: Syntax, path = "", key = ""): string | undefined {
  if (typeof o === "string") return hasPlaceholder(o, syntax) && !TEXT_KEYS.has(key) ? path : undefined;
  if (Array.isArray(o)) {
    for (let i = 0; i < o.length; i++) {
      const found = placeholderAt(o[i], syntax, join(path, i), key);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (!isObj(o)) return undefined;
  for (const [k, v] of Object.entries(o)) {
    if (key === "labels" || key === "annotations") {
      if (/seccomp|apparmor/i.test(k) && typeof v === "string" && hasPlaceholder(v, syntax))
        return join(path, k);
      continue;
    }
    if (hasPlaceholder(k, syntax)) return join(path, k);
    const found = placeholderAt(v, syntax, join(path, k), k);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Adds one object (a `List` item by item), or the reason it cannot be read. */
function add(out: Embedded, o: unknown, path: string, syntax: Syntax | undefined, who: string): void {
  if (isUnknown(o)) return;
  if (isObj(o) && o.kind === "List" && Array.isArray(o.items)) {
    o.items.forEach((x, i) => {
      add(out, x, join(join(path, "items"), i), syntax, who);
    });
    return;
  }
  const type = typeOf(o);
  if (type === undefined) {
    out.refused.push({ path, reason: `${who} creates an object with no readable apiVersion and kind` });
    return;
  }
  const hole = syntax === undefined ? undefined : placeholderAt(o, syntax);
  if (hole !== undefined) {
    out.refused.push({
      path,
      reason: `${who} creates an object whose ${hole} is a placeholder filled only when it runs, in a field that can weaken a wall`,
    });
    return;
  }
  out.objects.push({ type, props: o, path });
}

/** Adds every object of a manifest text (a YAML stream or JSON, as kubectl reads it). */
function addText(out: Embedded, text: string, path: string, syntax: Syntax, who: string): void {
  let docs: unknown[];
  // A placeholder left is read as a plain word (it may stand unquoted where a number goes), then put back.
  const holes: string[] = [];
  const pattern = syntax === "argo" ? /\{\{[^{}]*\}\}/g : /\$\([^()]*\)/g;
  const back = (x: unknown): unknown => {
    if (typeof x === "string") return x.replace(/zzholeph(\d+)zz/g, (_, i: string) => holes[Number(i)] ?? "");
    if (Array.isArray(x)) return x.map(back);
    if (!isObj(x)) return x;
    return Object.fromEntries(Object.entries(x).map(([k, y]) => [back(k) as string, back(y)]));
  };
  try {
    docs = kubeYamlDocuments(text.replace(pattern, (h) => `zzholeph${holes.push(h) - 1}zz`)).map(back);
  } catch (e) {
    out.refused.push({
      path,
      reason: `${who} applies a manifest that does not parse (${e instanceof Error ? e.message : String(e)})`,
    });
    return;
  }
  docs.forEach((d, i) => {
    add(out, d, docs.length > 1 ? `${path}#${i + 1}` : path, syntax, who);
  });
}

function argoResources(out: Embedded, props: unknown, wfPath: string, callable: boolean): void {
  const spec = wfPath === "spec" ? field(props, "spec") : field(field(props, "spec"), "workflowSpec");
  items(field(spec, "templates")).forEach((tpl, i) => {
    const r = field(tpl, "resource");
    if (r === undefined || isUnknown(r)) return;
    const path = `${wfPath}.templates[${i}].resource`;
    const action = str(field(r, "action"));
    if (action === "get" || action === "delete") return;
    const who = `the resource template's ${typeof action === "string" ? action : "action"}`;
    if (action === "patch") {
      out.refused.push({ path, reason: `${who} changes a live object the scan cannot see whole` });
      return;
    }
    if (field(r, "manifestFrom") !== undefined) {
      out.refused.push({
        path: join(path, "manifestFrom"),
        reason: `${who} applies a manifest fetched from an artifact when the workflow runs, which the scan cannot read`,
      });
      return;
    }
    const manifest = field(r, "manifest");
    if (typeof manifest !== "string") {
      if (manifest !== undefined)
        out.refused.push({ path: join(path, "manifest"), reason: `${who} has a manifest that is not text` });
      return;
    }
    const text = substitute(manifest, "argo", argoTemplateValues(spec, tpl, callable));
    addText(out, text, join(path, "manifest"), "argo", who);
  });
}

/** Where an Argo Events trigger's object comes from. */
function sensorSource(out: Embedded, source: unknown, path: string, who: string): void {
  if (isUnknown(source) || source === undefined) return;
  const inline = field(source, "inline");
  const resource = field(source, "resource");
  if (resource !== undefined) add(out, resource, join(path, "resource"), undefined, who);
  else if (typeof inline === "string") addText(out, inline, join(path, "inline"), "argo", who);
  else {
    const from =
      ["s3", "file", "url", "configmap", "git"].find((k) => field(source, k) !== undefined) ?? "elsewhere";
    out.refused.push({
      path,
      reason: `${who} creates an object fetched from ${from} when the event comes, which the scan cannot read`,
    });
  }
}

/** Trigger parameters that write event data into the object somewhere other than its name, labels or annotations. */
function unsafeParameters(trigger: unknown): string | undefined {
  for (const p of items(field(trigger, "parameters"))) {
    const dest = str(field(p, "dest"));
    if (
      typeof dest !== "string" ||
      !/^metadata\.(name|generateName|labels\..+|annotations\.(?!.*(seccomp|apparmor)).+)$/i.test(dest)
    )
      return typeof dest === "string" ? dest : "an unreadable place";
  }
  return undefined;
}

function sensorTriggers(out: Embedded, props: unknown): void {
  items(field(field(props, "spec"), "triggers")).forEach((t, i) => {
    const tpl = field(t, "template");
    const base = `spec.triggers[${i}].template`;
    for (const kind of ["k8s", "argoWorkflow"]) {
      const trig = field(tpl, kind);
      if (trig === undefined || isUnknown(trig)) continue;
      const path = join(base, kind);
      const op = str(field(trig, "operation"));
      const who = `the Sensor's ${kind} trigger`;
      const creates =
        kind === "k8s"
          ? op === undefined || op === "create" || op === "update"
          : op === undefined || op === "submit";
      if (kind === "k8s" && op === "patch") {
        out.refused.push({ path, reason: `${who} patches a live object the scan cannot see whole` });
        continue;
      }
      if (!creates) continue;
      const dest = unsafeParameters(trig);
      if (dest !== undefined) {
        out.refused.push({
          path: join(path, "parameters"),
          reason: `${who} writes event data into the object at ${dest}, known only when the event comes`,
        });
        continue;
      }
      sensorSource(out, field(trig, "source"), join(path, "source"), who);
    }
  });
}

/** The objects a controller creates from this object, or undefined when it is no such object. */
export function embeddedObjects(t: KubeType, props: unknown): Embedded | undefined {
  const out: Embedded = { objects: [], refused: [] };
  if (t.group === "argoproj.io") {
    if (t.kind === "Workflow") argoResources(out, props, "spec", false);
    else if (t.kind === "WorkflowTemplate" || t.kind === "ClusterWorkflowTemplate")
      argoResources(out, props, "spec", true);
    else if (t.kind === "CronWorkflow") argoResources(out, props, "spec.workflowSpec", false);
    else if (t.kind === "Sensor") sensorTriggers(out, props);
    else return undefined;
  } else if (t.group === "triggers.tekton.dev" && t.kind === "TriggerTemplate") {
    items(field(field(props, "spec"), "resourcetemplates")).forEach((o, i) => {
      add(out, o, `spec.resourcetemplates[${i}]`, "tekton", "the TriggerTemplate");
    });
  } else return undefined;
  return out.objects.length + out.refused.length > 0 ? out : undefined;
}
