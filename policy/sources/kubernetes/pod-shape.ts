/**
 * Pods found by shape, for objects no table knows: any nested object whose `spec.containers` is a list (a pod
 * template), or any object with a `containers` list of objects that name an `image` (a bare pod spec). Each one
 * found is judged; a found pod is not searched further (its containers are not pods of their own).
 */

import { entries, isObj, join } from "../lenient";
import type { PodSite } from "./sites";

/** Deep enough for every carrier in the table (JobSet: spec.replicatedJobs[].template.spec.template.spec). */
const MAX_DEPTH = 24;

function hasContainerList(spec: unknown, needImage: boolean): boolean {
  if (!isObj(spec) || !Array.isArray(spec.containers)) return false;
  if (!needImage) return true;
  return spec.containers.some((c) => isObj(c) && typeof c.image === "string");
}

/** The pods an unknown object carries, by shape. `status` is what controllers write, never what will run. */
export function shapeSites(props: unknown): PodSite[] {
  const out: PodSite[] = [];
  const visit = (v: unknown, path: string, parent: unknown, depth: number): void => {
    if (depth > MAX_DEPTH) return;
    if (Array.isArray(v)) {
      v.forEach((x, i) => {
        visit(x, join(path, i), v, depth + 1);
      });
      return;
    }
    if (!isObj(v)) return;
    if (hasContainerList(v.spec, false)) {
      out.push({
        props,
        specPath: join(path, "spec"),
        metaPath: join(path, "metadata"),
        // A copy count next to the template (`replicas`) is the usual spelling of every workload API.
        ...(isObj(parent) && parent.replicas !== undefined
          ? { replicasPath: join(path.slice(0, Math.max(0, path.lastIndexOf("."))), "replicas") }
          : {}),
        controller: true,
        defaultAlways: false,
        where: path,
      });
      return;
    }
    if (hasContainerList(v, true)) {
      out.push({ props, specPath: path, controller: true, defaultAlways: false, where: path });
      return;
    }
    for (const [k, x] of entries(v)) {
      if (depth === 0 && k === "status") continue;
      visit(x, join(path, k), v, depth + 1);
    }
  };
  visit(props, "", undefined, 0);
  return out;
}
