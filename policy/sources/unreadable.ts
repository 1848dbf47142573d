/**
 * Values in a resource that no rule can read: a Pulumi secret whose value the input does not show, a binary value.
 * Rules that read a field fail closed on it one by one; this walk is the backstop for the places a rule reads as a
 * whole (a list that is a secret, a map of sysctls that is binary), so nothing unreadable passes as "absent".
 */
import { isUnreadable } from "../workload";
import { join } from "./lenient";

export interface UnreadablePart {
  readonly path: string;
  readonly reason: string;
}

/** How deep the walk goes: deeper input is itself refused by the readers (scan caps nesting well below this). */
const MAX_DEPTH = 2000;

/**
 * Whether anything under `root` would be reported, skipped paths included: one walk that builds no path, since
 * nearly every resource holds nothing unreadable.
 */
function mayHoldUnreadable(root: unknown): boolean {
  const values: unknown[] = [root];
  const depths: number[] = [0];
  while (values.length > 0) {
    const v = values.pop();
    const depth = depths.pop() as number;
    if (depth >= MAX_DEPTH) return true;
    if (v === null || typeof v !== "object") continue;
    if (isUnreadable(v) || v instanceof Uint8Array || v instanceof ArrayBuffer) return true;
    for (const x of Array.isArray(v) ? v : Object.values(v)) {
      values.push(x);
      depths.push(depth + 1);
    }
  }
  return false;
}

/** Every unreadable value under `root` (iterative, so a deep value never overflows the stack). */
export function findUnreadable(
  root: unknown,
  base = "",
  skip: ReadonlySet<string> = new Set(),
): UnreadablePart[] {
  if (!mayHoldUnreadable(root)) return [];
  const out: UnreadablePart[] = [];
  const stack: [unknown, string, number][] = [[root, base, 0]];
  while (stack.length > 0) {
    const [v, path, depth] = stack.pop() as [unknown, string, number];
    if (isUnreadable(v)) out.push({ path, reason: v.reason });
    else if (v instanceof Uint8Array || v instanceof ArrayBuffer)
      out.push({ path, reason: "it is a binary value" });
    else if (depth >= MAX_DEPTH)
      out.push({ path, reason: `it is nested more than ${MAX_DEPTH} levels deep` });
    else if (Array.isArray(v))
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], join(path, i), depth + 1]);
    else if (typeof v === "object" && v !== null)
      for (const [k, x] of Object.entries(v).reverse()) {
        const p = join(path, k);
        if (!skip.has(p)) stack.push([x, p, depth + 1]);
      }
  }
  return out;
}
