/**
 * The bridge between CrossGuard's arguments and the plain values the adapters read.
 *
 * What @pulumi/policy 1.21 hands a policy (server.js, deserialize.js, secret.js, proxy.js):
 * - `validateResource` / `validateStack`: props deserialized with `proxySecrets = false`, so a Pulumi secret is
 *   plain text with no mark left, wrapped in `unknownCheckingProxy`, which throws on a preview unknown.
 * - `remediateResource`: props deserialized with `proxySecrets = true`: each secret is a `Secret` instance behind
 *   `secretsPreservingProxy`, inside `unknownCheckingProxy`. Reading through the proxies unwraps it; the raw object
 *   under `__getSpecialProxyTarget` still holds the `Secret` instances. That is the only place secretness is visible.
 *
 * So this module reads the raw target under both proxies (never tripping the unknown check), turns the engine's
 * unknown sentinels into UNKNOWN, and records where `Secret` instances were. The secret-env rule's remediation
 * (rules/disallow-secret-env.ts) uses that to replace secrets in a task's environment with the redaction marker;
 * validation, which runs next on the remediated props, sees the marker and reports it.
 */
import { Secret } from "@pulumi/policy";
import type { Edit } from "../rules/types";
import { UNKNOWN, Unreadable } from "../workload";

/** How deep the pack reads a resource's props; Kubernetes' deepest schemas are a few dozen levels. */
export const MAX_DEPTH = 512;

/**
 * The sentinels @pulumi/policy's proxy.js uses for unknown values (the string one is also the engine's
 * `UnknownStringValue` on the wire). Internal to the SDK, so they are listed here rather than imported.
 */
export const UNKNOWN_SENTINELS: ReadonlySet<string> = new Set([
  "1c4a061d-8072-4f0a-a4cb-0ff528b18fe7",
  "3eeb2bf0-c639-47a8-9e75-3b44932eb421",
  "04da6b54-80e4-46f7-96ec-b56ff0331ba9",
  "6a19a0b0-7e62-4c92-b797-7f8e31da9cc2",
  "030794c1-ac77-496b-92df-f27374a8bd58",
  "e48ece36-62e2-4504-bad9-02848725956a",
  "dd056dcd-154b-4c76-9bd3-c8f88648b5ff",
]);

const PROXY_FLAG = "__isSpecialProxy";
const PROXY_TARGET = "__getSpecialProxyTarget";

/** The object under @pulumi/policy's proxies (unknown-checking, secrets-preserving), or `v` itself. */
export function rawTarget(v: unknown): unknown {
  let cur = v;
  for (let i = 0; i < 4 && typeof cur === "object" && cur !== null; i++) {
    const rec = cur as Record<string, unknown>;
    if (rec[PROXY_FLAG] !== true) break;
    cur = rec[PROXY_TARGET];
  }
  return cur;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

export interface Unwrapped {
  /** Plain values: unknowns as UNKNOWN, secrets as their plain value. */
  readonly value: unknown;
  /** Display paths (`envs[2]`, `spec.containers[0].env[1].value`) where a Pulumi secret was. */
  readonly secretPaths: readonly string[];
}

function childPath(base: string, key: string | number): string {
  if (typeof key === "number") return `${base}[${key}]`;
  return base === "" ? key : `${base}.${key}`;
}

/** Reads args props into plain values; `secretOutputs` are top-level names the program marked secret. */
export function unwrapProps(props: unknown, secretOutputs: readonly string[] = []): Unwrapped {
  const secretPaths: string[] = [...secretOutputs];
  const walk = (v: unknown, path: string, depth: number): unknown => {
    const raw = rawTarget(v);
    // Deeper than any resource schema: unreadable (the rules fail closed), and no reader recurses further.
    if (depth > MAX_DEPTH) return new Unreadable(`it is nested more than ${MAX_DEPTH} levels deep`);
    if (raw instanceof Secret) {
      secretPaths.push(path);
      return walk(raw.value, path, depth + 1);
    }
    if (typeof raw === "string") return UNKNOWN_SENTINELS.has(raw) ? UNKNOWN : raw;
    if (Array.isArray(raw)) return raw.map((x, i) => walk(x, childPath(path, i), depth + 1));
    if (isPlainObject(raw)) {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(raw)) out[k] = walk(x, childPath(path, k), depth + 1);
      return out;
    }
    return raw;
  };
  return { value: walk(props, "", 0), secretPaths };
}

/** The taint check lives with the adapters (pure); the pack and `scan` share it. */
export { taintCheck } from "../sources/lenient";

/** A deep copy of raw props that keeps `Secret` wrappers (re-serialized as secrets) and unknown sentinels. */
export function cloneRaw(v: unknown, depth = 0): unknown {
  const raw = rawTarget(v);
  if (depth > MAX_DEPTH) return raw; // no edit reaches this deep: shared, not copied
  if (raw instanceof Secret) return new Secret(cloneRaw(raw.value, depth + 1));
  if (Array.isArray(raw)) return raw.map((x) => cloneRaw(x, depth + 1));
  if (isPlainObject(raw)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(raw)) out[k] = cloneRaw(x, depth + 1);
    return out;
  }
  return raw;
}

function unwrapSecret(v: unknown): unknown {
  return v instanceof Secret ? unwrapSecret(v.value) : v;
}

function isBlocked(v: unknown): boolean {
  return typeof v === "string" && UNKNOWN_SENTINELS.has(v);
}

/**
 * Applies edits to a raw clone in place. An edit whose path crosses an unknown value is skipped (nothing is
 * guessed); `Secret` wrappers on the way are entered and kept.
 */
export function applyEdits(root: unknown, edits: readonly Edit[]): number {
  let applied = 0;
  for (const e of edits) {
    if (e.path.length === 0) continue;
    let cur = unwrapSecret(root);
    let ok = true;
    for (let i = 0; i < e.path.length - 1 && ok; i++) {
      const key = e.path[i] as string | number;
      const next = e.path[i + 1];
      const container = cur as Record<string | number, unknown>;
      if (typeof cur !== "object" || cur === null) {
        ok = false;
        break;
      }
      let child = unwrapSecret(container[key]);
      if (child === undefined || child === null) {
        child = typeof next === "number" ? [] : {};
        container[key] = child;
      }
      if (isBlocked(child) || typeof child !== "object") ok = false;
      cur = child;
    }
    if (!ok || typeof cur !== "object" || cur === null) continue;
    const last = e.path[e.path.length - 1] as string | number;
    const target = cur as Record<string | number, unknown>;
    const existing = unwrapSecret(target[last]);
    if (isBlocked(existing)) continue;
    if (e.op === "set") target[last] = e.value;
    else if (e.op === "append") {
      if (existing === undefined || existing === null) target[last] = [e.value];
      else if (Array.isArray(existing) && !existing.some(isBlocked)) existing.push(e.value);
      else continue;
    } else {
      if (!Array.isArray(existing)) continue;
      const keep = existing.filter((x) => {
        const s = unwrapSecret(x);
        if (typeof s !== "string") return true;
        const k = s.trim().toUpperCase().replace(/^CAP_/, "");
        return k !== e.capability;
      });
      target[last] = keep;
    }
    applied++;
  }
  return applied;
}
