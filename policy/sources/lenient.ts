/**
 * Lenient readers over plain resource properties. Real manifests write numbers as strings, booleans as "true",
 * fields as `null` and lists as a single value; each reader accepts those spellings and keeps preview unknowns as
 * {@link UNKNOWN} so rules can tell "absent" from "not known yet".
 */
import { isUnreadable, UNKNOWN, Unreadable, type Val } from "../workload";

/** A plain object (not an array), or nothing. */
export type Obj = Readonly<Record<string, unknown>>;

/** Says whether a property at a path carries a Pulumi secret. */
export type TaintCheck = (path: string) => boolean;

/** No taint information (plain manifests, launch specs). */
export const noTaint: TaintCheck = () => false;

/** The taint check of a resource whose secrets sit at `secretPaths`: a path that is, contains or lies inside one. */
export function taintCheck(secretPaths: readonly string[]): TaintCheck {
  if (secretPaths.length === 0) return noTaint;
  return (path) =>
    secretPaths.some(
      (s) =>
        s === "" ||
        s === path ||
        path.startsWith(`${s}.`) ||
        path.startsWith(`${s}[`) ||
        s.startsWith(`${path}.`) ||
        s.startsWith(`${path}[`),
    );
}

/** Marker left in place of a Pulumi secret by the secret-env remediation (policy/rules/disallow-secret-env.ts). */
export const REDACTED_SECRET = "[pulumi secret redacted by the sandbox policy pack]";

export function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !isUnreadable(v) && !isBinary(v);
}

function isBinary(v: unknown): boolean {
  return v instanceof Uint8Array || v instanceof ArrayBuffer;
}

/** The reason given when a Pulumi secret stands where a rule needs the value. */
export const SECRET_REASON = "it is a Pulumi secret, whose value the policy cannot see";

/** What a value is, for "cannot be read" messages; never prints a value that could be a secret. */
export function describeValue(v: unknown): string {
  if (isBinary(v)) return "a binary value";
  if (Array.isArray(v)) return "a list";
  if (typeof v === "object" && v !== null) return "an object";
  if (typeof v === "number") return `the number ${String(v)}`;
  if (typeof v === "string") return v.length <= 24 ? `the text ${JSON.stringify(v)}` : "a text";
  return `a ${typeof v} value`;
}

/** A present value of the wrong shape: carried as {@link Unreadable} so rules fail closed on it. */
export function unreadable(v: unknown, wanted: string): Unreadable {
  if (isUnreadable(v)) return v;
  if (typeof v === "string" && v.includes(REDACTED_SECRET)) return new Unreadable(SECRET_REASON);
  return new Unreadable(`${describeValue(v)} stands where ${wanted} belongs`);
}

/**
 * `o[key]`: unknown when `o` is unknown; undefined when `o` is absent or the field is null; unreadable when `o` is
 * present but not an object (a text or a list where an object belongs).
 */
export function field(o: unknown, key: string): unknown {
  if (o === UNKNOWN || isUnreadable(o)) return o;
  if (o === undefined || o === null) return undefined;
  if (!isObj(o)) return unreadable(o, "an object");
  const v = o[key];
  return v === null ? undefined : v;
}

/** A display path's steps: a key, or a list index. */
type Step = { readonly key: string } | { readonly index: number };

/** The steps of each display path met, parsed once: the readers follow the same few paths in every resource. */
const parsedPaths = new Map<string, readonly Step[]>();

function steps(path: string): readonly Step[] {
  let out = parsedPaths.get(path);
  if (out !== undefined) return out;
  const parsed: Step[] = [];
  for (const part of path.split(".")) {
    const m = /^([^[]*)((?:\[\d+\])*)$/.exec(part);
    const key = m === null ? part : (m[1] ?? "");
    if (key !== "") parsed.push({ key });
    for (const idx of m === null ? [] : (m[2] ?? "").matchAll(/\[(\d+)\]/g))
      parsed.push({ index: Number(idx[1]) });
  }
  out = parsed;
  if (parsedPaths.size < 4096) parsedPaths.set(path, out);
  return out;
}

/** Follows a display path such as `spec.template.spec` or `spec.tasks[0].taskSpec` (list indexes included). */
export function at(o: unknown, path: string): unknown {
  let cur = o;
  for (const step of steps(path)) cur = "key" in step ? field(cur, step.key) : index(cur, step.index);
  return cur;
}

/** `l[i]`: unknown or unreadable as `l` is, undefined when absent or out of range, unreadable when not a list. */
function index(l: unknown, i: number): unknown {
  if (l === UNKNOWN || isUnreadable(l)) return l;
  if (l === undefined || l === null) return undefined;
  if (!Array.isArray(l)) return unreadable(l, "a list");
  const v = l[i];
  return v === null ? undefined : v;
}

/** A flag: booleans, and the texts every engine's loose readers take (`true`, `yes`, `on`, `1`...). */
export function bool(v: unknown): Val<boolean> {
  if (v === UNKNOWN || isUnreadable(v)) return v;
  if (v === undefined || v === null) return undefined;
  if (typeof v === "boolean") return v;
  if (typeof v === "string") {
    const s = v.trim().toLowerCase();
    if (s === "true" || s === "yes" || s === "on" || s === "y" || s === "1") return true;
    if (s === "false" || s === "no" || s === "off" || s === "n" || s === "0" || s === "") return false;
  }
  if (typeof v === "number" && Number.isFinite(v)) return v !== 0;
  return unreadable(v, "true or false");
}

export function num(v: unknown): Val<number> {
  if (v === UNKNOWN || isUnreadable(v)) return v;
  if (v === undefined || v === null) return undefined;
  if (typeof v === "number" && Number.isFinite(v)) return v;
  if (typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v.trim()))) return Number(v.trim());
  return unreadable(v, "a number");
}

export function str(v: unknown): Val<string> {
  if (v === UNKNOWN || isUnreadable(v)) return v;
  if (v === undefined || v === null) return undefined;
  if (typeof v === "string") return v === REDACTED_SECRET ? new Unreadable(SECRET_REASON) : v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return unreadable(v, "a text");
}

/** A list, or a single value as a one-element list; undefined when absent. */
export function list(v: unknown): Val<readonly unknown[]> {
  if (v === UNKNOWN || isUnreadable(v)) return v;
  if (v === undefined || v === null) return undefined;
  if (Array.isArray(v)) return v;
  if (isBinary(v) || (typeof v === "string" && v.includes(REDACTED_SECRET))) return unreadable(v, "a list");
  return [v];
}

/** Like {@link list} but absent is the empty list. */
export function items(v: unknown): readonly unknown[] {
  const l = list(v);
  return l === undefined || l === UNKNOWN || isUnreadable(l) ? [] : l;
}

/** A list of strings (each element may be unknown). */
export function strList(v: unknown): Val<readonly Val<string>[]> {
  const l = list(v);
  if (l === undefined || l === UNKNOWN || isUnreadable(l)) return l;
  return l.map(str);
}

/** Object entries with string keys; absent gives none. */
export function entries(v: unknown): readonly (readonly [string, unknown])[] {
  return isObj(v) ? Object.entries(v) : [];
}

/** Joins display paths: `spec.containers` + `[0]`, `spec` + `containers`. */
export function join(base: string, key: string | number): string {
  if (typeof key === "number") return `${base}[${key}]`;
  return base === "" ? key : `${base}.${key}`;
}

/** Lower-cased string, or the unknown/absent/unreadable marker. */
export function lower(v: Val<string>): Val<string> {
  return typeof v === "string" ? v.trim().toLowerCase() : v;
}

/** True when a value is, or holds, a Pulumi secret the input does not show (the pack's marker or its reading). */
export function carriesSecret(v: unknown): boolean {
  if (typeof v === "string") return v.includes(REDACTED_SECRET);
  return isUnreadable(v) && v.reason === SECRET_REASON;
}
