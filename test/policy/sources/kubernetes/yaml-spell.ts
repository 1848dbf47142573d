// Writes a JSON value as YAML in one of many spellings, chosen by a list of random numbers: booleans and integers in
// every YAML 1.1 form go-yaml v2 reads, quoting styles, flow and block collections, tags, anchors and aliases, merge
// keys before and after explicit keys, overwritten duplicates, comments and document markers.
//
// `same` spellings are ones the engine reads as exactly the value written (the differential test checks that claim
// against the engine too); `any` adds spellings that change the value's type (quoted booleans, `!foo` tags...), for
// the differential test only.
import fc from "fast-check";

export type Tree = string | number | boolean | null | readonly Tree[] | { readonly [k: string]: Tree };
export type Mode = "same" | "any";

const TRUE = [
  "true",
  "True",
  "TRUE",
  "yes",
  "Yes",
  "YES",
  "y",
  "Y",
  "on",
  "On",
  "ON",
  "!!bool true",
  '!!bool "yes"',
  "!<tag:yaml.org,2002:bool> on",
];
const FALSE = [
  "false",
  "False",
  "FALSE",
  "no",
  "No",
  "NO",
  "n",
  "N",
  "off",
  "Off",
  "OFF",
  "!!bool false",
  "!!bool 'off'",
];
const ANY_BOOL = ['"true"', "'yes'", "!!str true", "! true", "!foo true", "!!binary dHJ1ZQ==", "|-\n{i}true"];

function intSpellings(n: number): string[] {
  const a = Math.abs(n);
  const sign = n < 0 ? "-" : "";
  const out = [
    `${n}`,
    `${sign}0x${a.toString(16)}`,
    `${sign}0X${a.toString(16).toUpperCase()}`,
    `${sign}0o${a.toString(8)}`,
    `${sign}0${a.toString(8)}`,
    `${sign}0b${a.toString(2)}`,
    `!!int ${n}`,
    `${n}.0`,
    `!!float ${n}`,
  ];
  if (n >= 0) out.push(`+${n}`, `0b${a.toString(2)}`.replace(/^0b/, "0b_"));
  if (a >= 10) out.push(`${sign}${String(a).slice(0, 1)}_${String(a).slice(1)}`);
  if (n === 0) out.push("-0", "0.0e5", "-0x0");
  if (a !== 0 && a % 1000 === 0) out.push(`${n / 1000}e3`);
  return out;
}

const ANY_INT = (n: number): string[] => [`"${n}"`, `'${n}'`, `!!str ${n}`, `!x ${n}`, `${n}:00`];

/** Plain text is safe in flow and block context and resolves to itself (no YAML 1.1 bool, null or number). */
function plainSafe(s: string): boolean {
  return /^[A-Za-z/][A-Za-z0-9_/.-]*$/.test(s) && !/^(y|n|yes|no|on|off|true|false|null)$/i.test(s);
}

function stringSpellings(s: string, mode: Mode): string[] {
  const out = [JSON.stringify(s), `'${s.replace(/'/g, "''")}'`, `!!str ${JSON.stringify(s)}`];
  if (plainSafe(s)) out.push(s, `!!str ${s}`, `! ${s}`, `!custom ${s}`);
  if (/^[\x20-\x7e]*$/.test(s) && !/^\s|\s$/.test(s) && s !== "") out.push(`|-\n{i}${s}`, `>-\n{i}${s}`);
  if (/^[\x20-\x7e]*$/.test(s))
    out.push(`"${[...s].map((c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`).join("")}"`);
  if (mode === "any" && /^[A-Za-z]+$/.test(s)) out.push(s.toUpperCase(), s.toLowerCase());
  return out;
}

/** Consumes the random choices in order, wrapping around. */
class Chooser {
  private i = 0;
  constructor(private readonly choices: readonly number[]) {}
  next(n: number): number {
    const c = this.choices[this.i++ % Math.max(1, this.choices.length)] ?? 0;
    return n <= 0 ? 0 : c % n;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.next(xs.length)] as T;
  }
}

interface Ctx {
  readonly c: Chooser;
  readonly mode: Mode;
  readonly anchors: string[];
  flow: boolean;
  anchorId: number;
}

function scalar(v: Tree, ctx: Ctx, indent: string): string {
  let options: string[];
  if (v === null) options = ["null", "~", "Null", "NULL", "!!null null", ""];
  else if (typeof v === "boolean") options = [...(v ? TRUE : FALSE), ...(ctx.mode === "any" ? ANY_BOOL : [])];
  else if (typeof v === "number") options = [...intSpellings(v), ...(ctx.mode === "any" ? ANY_INT(v) : [])];
  else options = stringSpellings(v as string, ctx.mode);
  // Block scalars and empty nulls only where the context allows them.
  if (ctx.flow) options = options.filter((o) => !o.includes("\n") && o !== "");
  const chosen = ctx.c.pick(options.length > 0 ? options : [JSON.stringify(v)]);
  return chosen.replace("{i}", `${indent}  `);
}

function anchored(text: string, ctx: Ctx): string {
  if (ctx.c.next(6) !== 0 || text.includes("\n") || text === "" || text.startsWith("!")) return text;
  const name = `a${ctx.anchorId++}`;
  ctx.anchors.push(name);
  return `&${name} ${text}`;
}

function flowValue(v: Tree, ctx: Ctx): string {
  if (Array.isArray(v)) return `[${v.map((x) => flowValue(x, ctx)).join(", ")}]`;
  if (v !== null && typeof v === "object") {
    const entries = Object.entries(v).map(([k, x]) => `${flowKey(k, ctx)}: ${flowValue(x, ctx)}`);
    return `{${entries.join(", ")}}`;
  }
  return anchored(scalar(v, ctx, ""), ctx);
}

function flowKey(k: string, ctx: Ctx): string {
  return plainSafe(k) ? ctx.c.pick([k, JSON.stringify(k), `'${k}'`]) : JSON.stringify(k);
}

/** A block map's entries with duplicates overwritten, merges before/after and comments. */
function blockMap(o: { readonly [k: string]: Tree }, ctx: Ctx, indent: string): string[] {
  const lines: string[] = [];
  for (const [k, v] of Object.entries(o)) {
    const key = flowKey(k, ctx);
    const trick = ctx.c.next(8);
    const decoy = decoyOf(v);
    if (trick === 0 && decoy !== undefined) {
      // An overwritten duplicate before the real key.
      lines.push(`${indent}${key}: ${flowValue(decoy, { ...ctx, flow: true })}`);
    } else if (trick === 1 && decoy !== undefined) {
      // A merge before the explicit key: the explicit key, written after, wins.
      lines.push(`${indent}<<: {${key}: ${flowValue(decoy, { ...ctx, flow: true })}}`);
    } else if (trick === 2) {
      // The value only through a merge (of a map or a list of maps), possibly after an explicit decoy it overwrites.
      if (decoy !== undefined && ctx.c.next(2) === 0)
        lines.push(`${indent}${key}: ${flowValue(decoy, { ...ctx, flow: true })}`);
      const merged = `{${key}: ${flowValue(v, { ...ctx, flow: true })}}`;
      lines.push(`${indent}<<: ${ctx.c.next(2) === 0 ? merged : `[${merged}]`}`);
      continue;
    }
    if (ctx.c.next(5) === 0) lines.push(`${indent}# about ${k}`);
    lines.push(...entry(key, v, ctx, indent));
  }
  return lines;
}

/** A different value of the same shape, to be overwritten. */
function decoyOf(v: Tree): Tree | undefined {
  if (typeof v === "boolean") return !v;
  if (typeof v === "number") return v === 0 ? 1000 : 0;
  if (typeof v === "string") return `${v}x`;
  return undefined;
}

function entry(key: string, v: Tree, ctx: Ctx, indent: string): string[] {
  const inner = `${indent}  `;
  if (Array.isArray(v) || (v !== null && typeof v === "object")) {
    const empty = Array.isArray(v) ? v.length === 0 : Object.keys(v).length === 0;
    if (empty || ctx.c.next(4) === 0) return [`${indent}${key}: ${flowValue(v, { ...ctx, flow: true })}`];
    return [`${indent}${key}:`, ...block(v, ctx, inner)];
  }
  const text = anchored(scalar(v, { ...ctx, flow: false }, indent), ctx);
  const comment = ctx.c.next(6) === 0 && !text.includes("\n") && text !== "" ? "  # note" : "";
  return [`${indent}${key}: ${text}${comment}`];
}

function block(v: Tree, ctx: Ctx, indent: string): string[] {
  if (Array.isArray(v)) {
    const lines: string[] = [];
    for (const item of v) {
      if (item !== null && typeof item === "object" && !Array.isArray(item) && Object.keys(item).length > 0) {
        const body = blockMap(item, ctx, `${indent}  `);
        const first = (body[0] ?? "").trimStart();
        lines.push(`${indent}- ${first}`, ...body.slice(1));
      } else lines.push(`${indent}- ${flowValue(item, { ...ctx, flow: true })}`);
    }
    return lines;
  }
  return blockMap(v as { readonly [k: string]: Tree }, ctx, indent);
}

/** The YAML text of `value` (a map) in the spelling the choices pick. */
export function spell(value: { readonly [k: string]: Tree }, choices: readonly number[], mode: Mode): string {
  const ctx: Ctx = { c: new Chooser(choices), mode, anchors: [], flow: false, anchorId: 0 };
  const whole = ctx.c.next(6) === 0;
  let body = whole ? flowValue(value, { ...ctx, flow: true }) : block(value, ctx, "").join("\n");
  // Reuse one anchored scalar through an alias in an extra top-level key the API server ignores.
  if (!whole && ctx.anchors.length > 0) body += `\nx-reuse: *${ctx.c.pick(ctx.anchors)}`;
  const start = ctx.c.pick(["", "---\n", "--- # manifest\n", "# a manifest\n"]);
  const end = ctx.c.pick(["\n", "\n...\n", "\n# end\n"]);
  return `${start}${body}${end}`;
}

/** Random choices for {@link spell}. */
export const choicesArb = fc.array(fc.nat({ max: 1 << 20 }), { minLength: 32, maxLength: 160 });
