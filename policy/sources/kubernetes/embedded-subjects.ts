/**
 * The views of the objects a controller creates from another object (./embedded.ts): each judged by every reader as
 * an object of the input, its findings pointing where the carrier writes it, and what cannot be read refused.
 */
import type { Subject } from "../../workload";
import type { TaintCheck } from "../lenient";
import { embeddedObjects } from "./embedded";
import { remapView } from "./remap";
import { parseKubeType } from "./sites";

type Adapt = (type: string, props: unknown, name: string, tainted: TaintCheck) => Subject[];

/** How deep objects may hold objects (a Sensor's Workflow's resource template...) before the rest is refused. */
const MAX_NESTING = 8;
let nesting = 0;

export function embeddedSubjects(
  type: string,
  props: unknown,
  name: string,
  tainted: TaintCheck,
  adapt: Adapt,
): Subject[] {
  const t = parseKubeType(type);
  const found = t === undefined ? undefined : embeddedObjects(t, props);
  if (t === undefined || found === undefined) return [];
  const out: Subject[] = [];
  const origin = { backend: "kubernetes" as const, type, kind: t.kind, name };
  for (const r of found.refused)
    out.push({ subject: "unjudged", origin: { ...origin, name: `${name}/${r.path}` }, reason: r.reason });
  if (nesting >= MAX_NESTING) {
    if (found.objects.length > 0)
      out.push({ subject: "unjudged", origin, reason: `objects nested more than ${MAX_NESTING} deep` });
    return out;
  }
  nesting++;
  try {
    for (const o of found.objects) {
      // The object's text has no lines of its own: every finding points at where the carrier writes it.
      const at = o.path.replace(/#\d+$/, "");
      for (const v of adapt(
        o.type,
        o.props,
        `${name}/${o.path}`,
        (p) => tainted(`${at}.${p}`) || tainted(at),
      ))
        out.push(v.subject === "workload" ? remapView(v, () => at) : withPaths(v, at));
    }
  } finally {
    nesting--;
  }
  return out;
}

/** A view other than a workload, with its paths put where the carrier writes the object. */
function withPaths(v: Subject, at: string): Subject {
  const walk = (x: unknown, key?: string): unknown => {
    if (typeof x === "string") return key === "path" ? at : x;
    if (Array.isArray(x)) return x.map((y) => walk(y));
    if (typeof x !== "object" || x === null || Object.getPrototypeOf(x) !== Object.prototype) return x;
    return Object.fromEntries(Object.entries(x).map(([k, y]) => [k, walk(y, k)]));
  };
  return walk(v) as Subject;
}
