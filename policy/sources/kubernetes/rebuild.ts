/**
 * Tools for pods rebuilt from custom resources (crd-pods.ts, crd-spark-kubevirt.ts): the parts a rebuilt pod is made of, a path map from the rebuilt pod back to the
 * resource, and the strategic merge that Argo's `podSpecPatch`, Tekton's `stepTemplate` and Spark's pod
 * `template` use, for the keys a pod spec merges by name.
 */
import { isUnknown } from "../../workload";
import { entries, isObj, items, join } from "../lenient";
import type { PathMap, PodSite } from "./sites";

/** Builds a {@link PathMap}: the longest rebuilt prefix wins; paths under none map to `fallback`. */
export class PathMapper {
  private readonly pairs: [string, string][] = [];
  /** The first real path added for each rebuilt one (built on the first map() after an add). */
  private index: Map<string, string> | undefined;
  constructor(private readonly fallback: string) {}

  add(rebuilt: string, real: string): void {
    this.pairs.push([rebuilt, real]);
    this.index = undefined;
  }

  /**
   * The map from a rebuilt path to where it is written: by the longest rebuilt path added that is the path itself or
   * holds it (`s.x`, `s[0]`), with the rest kept; else the fallback inside the spec. One lookup per prefix of the path,
   * however many paths were added.
   */
  map(): PathMap {
    if (this.index === undefined) {
      this.index = new Map();
      for (const [s, r] of this.pairs) if (!this.index.has(s)) this.index.set(s, r);
    }
    const index = this.index;
    const fallback = this.fallback;
    return (p) => {
      for (let end = p.length; end > 0; ) {
        const s = end === p.length ? p : p.slice(0, end);
        const r = index.get(s);
        if (r !== undefined) return r + p.slice(end);
        end = Math.max(p.lastIndexOf(".", end - 1), p.lastIndexOf("[", end - 1));
      }
      if (p === "spec" || p.startsWith("spec.") || p.startsWith("spec[")) return fallback;
      return p;
    };
  }
}

/** List keys of a pod spec and a container that strategic merge merges by a key (k8s.io/api patchMergeKey). */
const MERGE_KEYS: Readonly<Record<string, string>> = {
  containers: "name",
  initContainers: "name",
  ephemeralContainers: "name",
  volumes: "name",
  env: "name",
  volumeMounts: "mountPath",
  ports: "containerPort",
  volumeDevices: "devicePath",
};

/**
 * Strategic merge of `patch` over `base` for the pod spec's merge keys; objects merge, anything else is replaced.
 * With `nulls`, a real strategic merge patch's: a null deletes its key.
 */
export function strategicMerge(base: unknown, patch: unknown, key?: string, nulls = false): unknown {
  if (patch === undefined) return base;
  if (isUnknown(patch) || isUnknown(base)) return patch;
  const mergeKey = key === undefined ? undefined : MERGE_KEYS[key];
  if (mergeKey !== undefined && Array.isArray(base) && Array.isArray(patch)) {
    const out = [...base];
    for (const p of patch) {
      const id = isObj(p) ? p[mergeKey] : undefined;
      const i = id === undefined ? -1 : out.findIndex((b) => isObj(b) && b[mergeKey] === id);
      if (i < 0) out.push(nulls ? withoutNulls(p) : p);
      else out[i] = strategicMerge(out[i], p, undefined, nulls);
    }
    return out;
  }
  if (isObj(base) && isObj(patch)) {
    const out: Record<string, unknown> = { ...base };
    for (const [k, v] of entries(patch))
      if (nulls && v === null) delete out[k];
      else out[k] = strategicMerge(base[k], v, k, nulls);
    return out;
  }
  return nulls ? withoutNulls(patch) : patch;
}

/**
 * A patch's value as it lands where nothing was: a null in a strategic merge patch deletes its key (exactly as
 * written) and is never itself in the result (apimachinery strategicpatch mergeMap, with unmatched nulls ignored).
 */
function withoutNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutNulls);
  if (!isObj(v)) return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([, x]) => x !== null)
      .map(([k, x]) => [k, withoutNulls(x)]),
  );
}

/** The containers of a merged list: where each one is written (its original path, or the patch's). */
export function listPaths(
  merged: unknown,
  original: readonly { readonly name: unknown; readonly path: string }[],
  patchPath: string,
): string[] {
  if (!Array.isArray(merged)) return [];
  return merged.map((m) => {
    const name = isObj(m) ? m.name : undefined;
    return original.find((o) => o.name !== undefined && o.name === name)?.path ?? patchPath;
  });
}

type Obj = Record<string, unknown>;

/** One named part of a rebuilt list and where it is written. */
export interface Part {
  readonly value: unknown;
  readonly path: string;
}

/** A site whose whole pod is not known yet (a preview unknown): reported as such, never as "no pod". */
export function unknownSite(props: unknown, path: string): PodSite[] {
  return [{ props, specPath: path, controller: true, defaultAlways: false, where: path }];
}

/** A rebuilt pod: its spec, metadata and where each part is written. */
export function rebuilt(
  pod: { spec: Obj; metadata?: Obj },
  where: string,
  mapper: PathMapper,
  extra: Partial<PodSite> = {},
): PodSite {
  return {
    props: { metadata: pod.metadata ?? {}, spec: pod.spec },
    specPath: "spec",
    metaPath: "metadata",
    controller: false,
    defaultAlways: false,
    where,
    remap: mapper.map(),
    ...extra,
  };
}

/** Adds a rebuilt list (`spec.containers`) to the pod and maps each element to where it is written. */
export function putList(spec: Obj, key: string, parts: readonly Part[], mapper: PathMapper): void {
  if (parts.length === 0) return;
  spec[key] = parts.map((p) => p.value);
  parts.forEach((p, i) => {
    mapper.add(`spec.${key}[${i}]`, p.path);
  });
}

/** The first of several sources that sets a pod field, mapped to where it is written. */
export function putField(spec: Obj, key: string, sources: readonly Part[], mapper: PathMapper): void {
  const s = sources.find((x) => x.value !== undefined);
  if (s === undefined) return;
  spec[key] = s.value;
  mapper.add(`spec.${key}`, s.path);
}

export function partsOf(list: unknown, path: string): Part[] {
  return items(list).map((value, i) => ({ value, path: join(path, i) }));
}
