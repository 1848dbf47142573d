/**
 * Lenient readers over plain resource properties. Real manifests write numbers as strings, booleans as "true",
 * fields as `null` and lists as a single value; each reader accepts those spellings and keeps preview unknowns as
 * {@link UNKNOWN} so rules can tell "absent" from "not known yet".
 */
import { UNKNOWN, type Val } from "../workload";

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

/** Marker left in place of a Pulumi secret by the remediation (see policy/pulumi/props.ts). */
export const REDACTED_SECRET = "[pulumi secret redacted by the sandbox policy pack]";

export function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** `o[key]`, unknown when `o` is unknown, undefined when `o` is not an object or the field is null. */
export function field(o: unknown, key: string): unknown {
  if (o === UNKNOWN) return UNKNOWN;
  if (!isObj(o)) return undefined;
  const v = o[key];
  return v === null ? undefined : v;
}

/** Follows a dotted key path such as `spec.template.spec`. */
export function at(o: unknown, path: string): unknown {
  let cur = o;
  for (const k of path.split(".")) {
    if (k === "") continue;
    cur = field(cur, k);
  }
  return cur;
}

export function bool(v: unknown): Val<boolean> {
  if (v === UNKNOWN) return UNKNOWN;
  if (typeof v === "boolean") return v;
  if (typeof v === "string") {
    const s = v.trim().toLowerCase();
    if (s === "true" || s === "yes" || s === "on") return true;
    if (s === "false" || s === "no" || s === "off" || s === "") return false;
  }
  if (typeof v === "number") return v !== 0;
  return undefined;
}

export function num(v: unknown): Val<number> {
  if (v === UNKNOWN) return UNKNOWN;
  if (typeof v === "number" && Number.isFinite(v)) return v;
  if (typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v.trim()))) return Number(v.trim());
  return undefined;
}

export function str(v: unknown): Val<string> {
  if (v === UNKNOWN) return UNKNOWN;
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return undefined;
}

/** A list, or a single value as a one-element list; undefined when absent. */
export function list(v: unknown): Val<readonly unknown[]> {
  if (v === UNKNOWN) return UNKNOWN;
  if (v === undefined || v === null) return undefined;
  if (Array.isArray(v)) return v;
  return [v];
}

/** Like {@link list} but absent is the empty list. */
export function items(v: unknown): readonly unknown[] {
  const l = list(v);
  return l === undefined || l === UNKNOWN ? [] : l;
}

/** A list of strings (each element may be unknown). */
export function strList(v: unknown): Val<readonly Val<string>[]> {
  const l = list(v);
  if (l === undefined || l === UNKNOWN) return l;
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

/** Lower-cased string, or the unknown/absent marker. */
export function lower(v: Val<string>): Val<string> {
  return typeof v === "string" ? v.trim().toLowerCase() : v;
}
