/**
 * One resource's views, read once for all the pack's rules. CrossGuard calls every policy with its own freshly
 * deserialized copy of the resource's props, so without this each rule would read the same resource into views
 * again (most of the pack's cost per resource). `scan` and the launcher's preflight already judge one view with all
 * the rules; this gives the pack the same.
 *
 * A cached reading is reused only for the same resource (URN, type, name), the same secret paths and props equal to
 * the ones it was read from, compared value by value (`Object.is`: NaN, -0 and every string exactly). Props holding
 * anything but plain data (an instance, a function, an unreadable marker) are never cached: they are read afresh.
 */
import { UNKNOWN } from "../workload";

/** How many resources' readings are kept: one Analyze call reads one resource; the stack check reads them all. */
const KEEP = 1024;

/** Deeper than any props the pack reads (props.ts stops at 512 levels): compared no further, so never cached. */
const MAX_DEPTH = 600;

function isPlainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** True when `a` and `b` are the same plain data (and only plain data), value by value. */
export function samePlainData(a: unknown, b: unknown, depth = 0): boolean {
  if (depth > MAX_DEPTH) return false;
  if (typeof a !== "object" || a === null) {
    if (typeof a === "function" || (typeof a === "symbol" && a !== UNKNOWN)) return false;
    return Object.is(a, b);
  }
  if (typeof b !== "object" || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) {
      if (!(i in a) || !(i in b) || !samePlainData(a[i], b[i], depth + 1)) return false;
    }
    return true;
  }
  if (Array.isArray(b) || !isPlainObject(a) || !isPlainObject(b)) return false;
  const ka = Reflect.ownKeys(a);
  const kb = Reflect.ownKeys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (typeof k !== "string" || !Object.hasOwn(b, k)) return false;
    if (!samePlainData((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], depth + 1))
      return false;
  }
  return true;
}

interface Reading<T> {
  readonly key: string;
  readonly value: unknown;
  readonly views: T;
}

/** Readings of resources by URN, the most recent {@link KEEP}. */
export class ViewCache<T> {
  private readonly readings = new Map<string, Reading<T>>();

  /**
   * The views of resource `urn` read from `value`: the cached ones when `key` (its type, name and secret paths)
   * and `value` are what they were read from, else `read()`, kept for the next rule.
   */
  get(urn: string | undefined, key: readonly unknown[], value: unknown, read: () => T): T {
    if (urn === undefined) return read();
    const k = JSON.stringify(key);
    const cached = this.readings.get(urn);
    if (cached !== undefined && cached.key === k && samePlainData(value, cached.value)) return cached.views;
    const views = read();
    this.readings.delete(urn);
    // Only plain data is compared, so only plain data is kept.
    if (samePlainData(value, value)) {
      this.readings.set(urn, { key: k, value, views });
      if (this.readings.size > KEEP) this.readings.delete(this.readings.keys().next().value as string);
    }
    return views;
  }

  /** Forgets every reading (the start of another engine run). */
  clear(): void {
    this.readings.clear();
  }
}
