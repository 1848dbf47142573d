/**
 * Argo Workflows pods, as the workflow controller builds them (argo-workflows pkg/apis/workflow/v1alpha1
 * WorkflowSpec, Template; workflow/controller/workflowpod.go, operator.go `mergedTemplateDefaultsInto`;
 * workflow/util/util.go `ApplyPodSpecPatch`):
 * - one pod per template with `container`, `script` or `containerSet`, after `spec.templateDefaults` is merged under
 *   it (strategic merge; the defaults' `container`/`script`/... only into a template of that type); a `resource` or
 *   `data` template's pod runs the controller's executor as `main`, and has the template's other containers and
 *   pod settings;
 * - the main container is `main`; a script's `source` is what it runs, judged as its command line;
 *   `initContainers` and `sidecars` join it; `securityContext` and `automountServiceAccountToken` come from the
 *   template, else the workflow; `hostNetwork` and `volumes` from the workflow, template `volumes` added;
 *   `podMetadata` under the template's `metadata`;
 * - `{{...}}` parameters are substituted with the values declared in the object (./templating.ts), and what stays
 *   one is judged by the field it is in;
 * - `podSpecPatch` (the workflow's, then the template's) is text: parameters substituted first, then read as the
 *   controller reads it (./go-json.ts: YAML 1.1 or JSON, then Go's case-insensitive decoding) and strategic-merged
 *   over the pod.
 */
import { isUnknown } from "../../workload";
import { at, field, isObj, items, join } from "../lenient";
import { controllerText, goDecode } from "./go-json";
import {
  listPaths,
  type Part,
  PathMapper,
  partsOf,
  putField,
  putList,
  rebuilt,
  strategicMerge,
  unknownSite,
} from "./rebuild";
import type { PodSite } from "./sites";
import { sealPlaceholders, substitute } from "./templating";
import { argoEnumChoices, argoTemplateValues, substituteOutside } from "./templating-argo";

type Obj = Record<string, unknown>;
type Problems = { path: string; reason: string }[];

/** The template types (pkg/apis/workflow/v1alpha1 TemplateType): a default of one type applies to that type only. */
const TYPES = [
  "container",
  "containerSet",
  "steps",
  "script",
  "resource",
  "dag",
  "suspend",
  "data",
  "http",
  "plugin",
];

/** A template with the workflow's `templateDefaults` merged under it. */
export function withTemplateDefaults(tpl: unknown, defaults: unknown): unknown {
  if (!isObj(defaults) || !isObj(tpl)) return tpl;
  const own = TYPES.find((t) => tpl[t] !== undefined);
  const applicable = Object.fromEntries(
    Object.entries(defaults).filter(([k]) => !TYPES.includes(k) || k === own),
  );
  return strategicMerge(applicable, tpl);
}

const HOLE = /\{\{[^{}]*\}\}/g;
const SENTINEL = /zzargoph(\d+)zz/g;

/** A podSpecPatch's value, with the controller's reading of its text; or why it cannot be read. */
export function readPodSpecPatch(
  raw: unknown,
  values: ReadonlyMap<string, string>,
): { value: Obj } | { reason: string } | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== "string")
    return isObj(raw) ? { value: { ...raw } } : { reason: "a podSpecPatch that is not a string" };
  const holes: string[] = [];
  // A parameter left is replaced by a plain word so the text parses; it is put back, and judged, afterwards.
  const text = substitute(raw, "argo", values).replace(HOLE, (h) => `zzargoph${holes.push(h) - 1}zz`);
  let v: unknown;
  try {
    v = controllerText(text);
  } catch {
    try {
      v = controllerText(text.replace(/(^|[^"\w])(zzargoph\d+zz)(?=[^"\w]|$)/g, '$1"$2"'));
    } catch (e) {
      return { reason: `a podSpecPatch that does not parse (${e instanceof Error ? e.message : String(e)})` };
    }
  }
  const back = (x: unknown): unknown => {
    if (typeof x === "string") return x.replace(SENTINEL, (_, i: string) => holes[Number(i)] ?? "");
    if (Array.isArray(x)) return x.map(back);
    if (!isObj(x)) return x;
    return Object.fromEntries(Object.entries(x).map(([k, y]) => [back(k) as string, back(y)]));
  };
  v = back(v);
  if (v === null || v === undefined) return undefined;
  if (!isObj(v))
    return {
      reason:
        typeof v === "string" && holes.length > 0
          ? `a podSpecPatch that is a workflow parameter (${v}) with no declared value: the patch is whatever the submitter passes`
          : "a podSpecPatch that is not an object",
    };
  const directives = (x: unknown): boolean =>
    Array.isArray(x)
      ? x.some(directives)
      : isObj(x) && Object.entries(x).some(([k, y]) => k.startsWith("$") || directives(y));
  if (directives(v)) return { reason: "a podSpecPatch with patch directives ($patch, $retainKeys...)" };
  return { value: v };
}

/** The pod after the workflow's and the template's patches, decoded as the controller decodes it. */
function applyPatches(
  spec: Obj,
  patches: readonly Part[],
  values: ReadonlyMap<string, string>,
  mapper: PathMapper,
  problems: Problems,
): Obj {
  let merged: Obj = spec;
  const touched: [string, string][] = [];
  for (const p of patches) {
    if (isUnknown(p.value)) {
      problems.push({ path: p.path, reason: "a podSpecPatch not known yet" });
      mapper.add(p.path, p.path);
      continue;
    }
    const parsed = readPodSpecPatch(p.value, values);
    if (parsed === undefined) continue;
    if ("reason" in parsed) {
      problems.push({ path: p.path, reason: parsed.reason });
      mapper.add(p.path, p.path); // a real path already: the map keeps it
      continue;
    }
    // As the controller's StrategicMergePatch: a null deletes the key as written, and is not in the pod.
    merged = strategicMerge(merged, parsed.value, undefined, true) as Obj;
    for (const k of Object.keys(goDecode(parsed.value) as Obj)) touched.push([k, p.path]);
  }
  if (touched.length === 0) return merged;
  const decoded = goDecode(merged) as Obj;
  for (const [key, patchPath] of touched) {
    if (key === "containers" || key === "initContainers" || key === "volumes") {
      const before = items(spec[key]).map((v, i) => ({
        name: isObj(v) ? v.name : undefined,
        path: mapper.map()(`spec.${key}[${i}]`),
      }));
      listPaths(decoded[key], before, patchPath).forEach((path, i) => {
        mapper.add(`spec.${key}[${i}]`, path);
      });
    } else mapper.add(`spec.${key}`, patchPath);
  }
  return decoded;
}

/**
 * Mounts of a volume the pod does not declare: the controller adds volumes of its own to every pod
 * (workflowpod.go: the executor's service account token `exec-sa-token`, the artifact repository's Secrets, named
 * after them, `createSecretVolumesAndMounts`). It refuses a template's mount of a volume the spec does not declare
 * (`addVolumeReferences`), but a podSpecPatch is applied after, and its mount of one of those is created.
 */
function undeclaredMounts(pod: Obj, problems: Problems): void {
  const declared = new Set(items(pod.volumes).map((v) => field(v, "name")));
  for (const key of ["containers", "initContainers"])
    items(pod[key]).forEach((c, i) => {
      items(field(c, "volumeMounts")).forEach((m, j) => {
        const name = field(m, "name");
        if (typeof name === "string" && !declared.has(name))
          problems.push({
            path: `spec.${key}[${i}].volumeMounts[${j}]`, // the site's map puts it where it is written
            reason: `a mount of volume ${JSON.stringify(name)}, which the workflow does not declare: the controller adds volumes of its own to the pod (the executor's token, exec-sa-token; the artifact repository's Secrets, named after them), so the mount is of one no rule judged`,
          });
      });
    });
}

/** A container with its name, and a script's source appended to its command line (mapped to `source`). */
export function withSource(
  c: unknown,
  name: string | undefined,
  part: string,
  sourceKey: string,
  at: { index: number; path: string }[],
): unknown {
  if (!isObj(c)) return c;
  const { [sourceKey]: source, ...rest } = c;
  const out: Obj = name === undefined ? rest : { name, ...rest };
  if (typeof source === "string") {
    const args = Array.isArray(rest.args) ? rest.args : rest.args === undefined ? [] : [rest.args];
    out.args = [...args, source];
    at.push({ index: args.length, path: join(part, sourceKey) });
  }
  return out;
}

/**
 * Every pod of a workflow spec at `wfPath`; `callable` says its templates may be called from outside the object
 * (a WorkflowTemplate), so only the values they declare are substituted.
 */
export function argoSites(props: unknown, wfPath: string, callable: boolean): PodSite[] {
  const wf = at(props, wfPath);
  if (isUnknown(wf)) return unknownSite(props, wfPath);
  const templatesPath = join(wfPath, "templates");
  const templates = field(wf, "templates");
  if (isUnknown(templates)) return unknownSite(props, templatesPath);
  const out: PodSite[] = [];
  items(templates).forEach((raw, i) => {
    const fixed = argoTemplateValues(wf, raw, callable);
    const withDefaults = withTemplateDefaults(raw, field(wf, "templateDefaults"));
    const { arguments: _, ...rest } = isObj(wf) ? wf : {};
    const choices = argoEnumChoices(wf, callable, JSON.stringify([withDefaults, rest]));
    const where = join(templatesPath, i);
    const sites = choices.flatMap((choice) => {
      const site = argoSite(wf, wfPath, withDefaults, where, new Map([...fixed, ...choice.values]), fixed);
      if (site === undefined) return [];
      return [choices.length > 1 ? { ...site, where: `${where} with ${choice.label}` } : site];
    });
    out.push(...sameSize(sites, join(wfPath, "arguments.parameters")));
  });
  return out;
}

/** What the budget reads of a pod: how many containers, their resources, and the pod's own resources. */
function sizeOf(site: PodSite): string {
  const spec = field(site.props, "spec");
  const list = (k: string) => items(field(spec, k)).map((c) => field(c, "resources"));
  return JSON.stringify([list("containers"), list("initContainers"), field(spec, "resources")]);
}

/**
 * The pods of one template's enum combinations, each judged by the rules; the budget prices the first. Where their
 * sizes differ (a pod spec patch from an enum parameter adds a container or changes its resources), no one of them
 * stands for the others, and each fails closed.
 */
function sameSize(sites: PodSite[], path: string): PodSite[] {
  const first = sites[0];
  if (first === undefined || sites.every((s) => sizeOf(s) === sizeOf(first))) return sites;
  const reason =
    "the enum values of the workflow parameters give this template pods of different sizes (containers or resources), which the budget cannot price as one: give each size its own template";
  return sites.map((s) => ({ ...s, unreadable: [...(s.unreadable ?? []), { path, reason }] }));
}

/** Where only the values every run gives are substituted (templating.ts substituteOutside). */
const FIXED_ONLY: ReadonlySet<string> = new Set(["resources"]);

/**
 * The pod of one template with `values` substituted: `fixed` (the values every run gives) only in resource figures,
 * whose sizes one combination of enum values does not stand for (they stay figures not known).
 */
function argoSite(
  wf: unknown,
  wfPath: string,
  withDefaults: unknown,
  tPath: string,
  values: ReadonlyMap<string, string>,
  fixed: ReadonlyMap<string, string>,
): PodSite | undefined {
  const tpl = substituteOutside(withDefaults, values, fixed, FIXED_ONLY);
  const wfv = substituteOutside(wf, values, fixed, FIXED_ONLY);
  const main: Part[] = [];
  const sources: { index: number; path: string }[][] = [];
  const container = field(tpl, "container");
  const script = field(tpl, "script");
  if (container !== undefined)
    main.push({
      value: isObj(container) ? { ...container, name: "main" } : container,
      path: join(tPath, "container"),
    });
  else if (script !== undefined) {
    const s: { index: number; path: string }[] = [];
    main.push({
      value: withSource(script, "main", join(tPath, "script"), "source", s),
      path: join(tPath, "script"),
    });
    sources[0] = s;
  } else main.push(...partsOf(at(tpl, "containerSet.containers"), join(tPath, "containerSet.containers")));
  // A resource or data template runs the executor as its main container (operator.go `executeResource`,
  // `executeData`: the controller's own image and settings), in a pod that gets the template's other containers,
  // volumes, settings and patch; steps, dag, suspend: no pod; http and plugin: the controller's agent pod.
  const executor = field(tpl, "resource") !== undefined || field(tpl, "data") !== undefined;
  if (main.length === 0 && !executor) return undefined;
  const mapper = new PathMapper(wfPath);
  const spec: Obj = { restartPolicy: "Never" }; // the executor never restarts a step's pod
  putList(spec, "containers", [...main, ...partsOf(field(tpl, "sidecars"), join(tPath, "sidecars"))], mapper);
  for (const s of sources[0] ?? []) mapper.add(`spec.containers[0].args[${s.index}]`, s.path);
  putList(
    spec,
    "initContainers",
    partsOf(field(tpl, "initContainers"), join(tPath, "initContainers")),
    mapper,
  );
  for (const key of ["securityContext", "automountServiceAccountToken"])
    putField(
      spec,
      key,
      [
        { value: field(tpl, key), path: join(tPath, key) },
        { value: field(wfv, key), path: join(wfPath, key) },
      ],
      mapper,
    );
  putField(
    spec,
    "hostNetwork",
    [{ value: field(wfv, "hostNetwork"), path: join(wfPath, "hostNetwork") }],
    mapper,
  );
  putList(
    spec,
    "volumes",
    [
      ...partsOf(field(wfv, "volumes"), join(wfPath, "volumes")),
      ...partsOf(field(tpl, "volumes"), join(tPath, "volumes")),
    ],
    mapper,
  );
  const problems: Problems = [];
  const patched = applyPatches(
    spec,
    [
      { value: field(wf, "podSpecPatch"), path: join(wfPath, "podSpecPatch") },
      { value: field(tpl, "podSpecPatch"), path: join(tPath, "podSpecPatch") },
    ],
    values,
    mapper,
    problems,
  );
  undeclaredMounts(patched, problems);
  const metadata = strategicMerge(field(wfv, "podMetadata") ?? {}, field(tpl, "metadata") ?? {}) as Obj;
  const pod = sealPlaceholders({ spec: patched, metadata }, "argo", "workflow");
  return rebuilt(pod, tPath, mapper, problems.length > 0 ? { unreadable: problems } : {});
}
