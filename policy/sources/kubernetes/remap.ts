/**
 * A workload view of a rebuilt pod (crd-pods.ts) with every path put back where the resource writes it, so that
 * findings point at the custom resource's own lines and fixes edit its own fields.
 */
import type { WorkloadView } from "../../workload";
import type { PathMap } from "./sites";

/** Keys whose string values are resource paths (or a source that may start with one). */
const PATH_KEYS = new Set(["path", "podPath", "seccompSource", "appArmorSource"]);
/** Keys whose values are label maps: user text, whatever their keys are called. */
const LABEL_KEYS = new Set(["labels", "podLabels"]);

function walk(v: unknown, map: PathMap, key: string | undefined): unknown {
  if (typeof v === "string") return key !== undefined && PATH_KEYS.has(key) ? map(v) : v;
  if (Array.isArray(v)) return v.map((x) => walk(x, map, key === "unknownParts" ? "path" : undefined));
  // Only plain records are views; class instances (an Unreadable value) and symbols stay as they are.
  if (typeof v !== "object" || v === null || Object.getPrototypeOf(v) !== Object.prototype) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = LABEL_KEYS.has(k) ? x : walk(x, map, k);
  return out;
}

export function remapView(view: WorkloadView, map: PathMap): WorkloadView {
  return walk(view, map, undefined) as WorkloadView;
}
