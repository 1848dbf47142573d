/**
 * Scalar resolution exactly as go.yaml.in/yaml/v2 (v2.4.3, the version k8s.io/kubernetes v1.36.3 builds with) does
 * it when sigs.k8s.io/yaml decodes into `interface{}`: YAML 1.1 booleans and nulls, Go's `strconv` number syntax,
 * explicit tags with their errors, and `!!binary` decoded to the bytes Go's JSON encoder then writes.
 *
 * Read from go.yaml.in/yaml/v2 resolve.go (`resolve`, `parseTimestamp`) and decode.go (`scalar`), and from Go's
 * strconv (`ParseInt`/`ParseUint` with base 0, `ParseFloat`, `underscoreOK`), time.Parse and encoding/json.
 */

/** A decoded scalar as Go holds it in an `interface{}`; ints stay exact until the JSON value is made. */
export type GoScalar =
  | { readonly t: "null" }
  | { readonly t: "str"; readonly v: string }
  | { readonly t: "int"; readonly v: bigint }
  | { readonly t: "uint"; readonly v: bigint }
  | { readonly t: "float"; readonly v: number }
  | { readonly t: "bool"; readonly v: boolean };

const TAG = "tag:yaml.org,2002:";
export const STR_TAG = `${TAG}str`;
export const MERGE_TAG = `${TAG}merge`;
const BOOL_TAG = `${TAG}bool`;
const INT_TAG = `${TAG}int`;
const FLOAT_TAG = `${TAG}float`;
const NULL_TAG = `${TAG}null`;
const TIMESTAMP_TAG = `${TAG}timestamp`;
const BINARY_TAG = `${TAG}binary`;

const NULL: GoScalar = { t: "null" };
const str = (v: string): GoScalar => ({ t: "str", v });

/** The plain scalars go-yaml v2 looks up before trying numbers (resolve.go `resolveMapList`). */
const RESOLVE_MAP = new Map<string, [GoScalar, string]>();
function table(value: GoScalar, tag: string, spellings: string): void {
  for (const s of spellings.split(" ")) RESOLVE_MAP.set(s === "''" ? "" : s, [value, tag]);
}
table({ t: "bool", v: true }, BOOL_TAG, "y Y yes Yes YES true True TRUE on On ON");
table({ t: "bool", v: false }, BOOL_TAG, "n N no No NO false False FALSE off Off OFF");
table(NULL, NULL_TAG, "'' ~ null Null NULL");
table({ t: "float", v: Number.NaN }, FLOAT_TAG, ".nan .NaN .NAN");
table({ t: "float", v: Number.POSITIVE_INFINITY }, FLOAT_TAG, ".inf .Inf .INF +.inf +.Inf +.INF");
table({ t: "float", v: Number.NEGATIVE_INFINITY }, FLOAT_TAG, "-.inf -.Inf -.INF");
RESOLVE_MAP.set("<<", [str("<<"), MERGE_TAG]);

/** resolve.go `resolveTable`: the first character decides what a plain scalar may be. */
function hint(s: string): string | undefined {
  if (s === "") return "N";
  const c = s[0] as string;
  if (c === "+" || c === "-") return "S";
  if (c >= "0" && c <= "9") return "D";
  if ("yYnNtTfFoO~".includes(c)) return "M";
  if (c === ".") return ".";
  return undefined;
}

const INT64_MAX = (1n << 63n) - 1n;
const UINT64_MAX = (1n << 64n) - 1n;

/** strconv.ParseUint(s, base, 64) for the inputs go-yaml gives it (no underscores reach it). */
function parseUint(s: string, base0: number): bigint | undefined {
  if (s === "") return undefined;
  let base = base0;
  let digits = s;
  if (base === 0) {
    base = 10;
    if (s[0] === "0") {
      const p = (s[1] ?? "").toLowerCase();
      if (s.length >= 3 && p === "b") [base, digits] = [2, s.slice(2)];
      else if (s.length >= 3 && p === "o") [base, digits] = [8, s.slice(2)];
      else if (s.length >= 3 && p === "x") [base, digits] = [16, s.slice(2)];
      else [base, digits] = [8, s.slice(1)];
    }
  }
  let n = 0n;
  const b = BigInt(base);
  for (const ch of digits) {
    const c = ch.toLowerCase();
    let d: number;
    if (c >= "0" && c <= "9") d = c.charCodeAt(0) - 48;
    else if (c >= "a" && c <= "z") d = c.charCodeAt(0) - 87;
    else return undefined;
    if (d >= base) return undefined;
    n = n * b + BigInt(d);
    if (n > UINT64_MAX) return undefined;
  }
  return n;
}

/** strconv.ParseInt(s, base, 64). */
function parseInt64(s: string, base: number): bigint | undefined {
  if (s === "") return undefined;
  const neg = s[0] === "-";
  const body = s[0] === "+" || s[0] === "-" ? s.slice(1) : s;
  const u = parseUint(body, base);
  if (u === undefined) return undefined;
  if (!neg && u > INT64_MAX) return undefined;
  if (neg && u > INT64_MAX + 1n) return undefined;
  return neg ? -u : u;
}

/** strconv's `underscoreOK`: underscores only between digits (or after a base prefix). */
function underscoreOK(s0: string): boolean {
  let saw = "^";
  let i = 0;
  const s = s0[0] === "+" || s0[0] === "-" ? s0.slice(1) : s0;
  let hex = false;
  if (s.length >= 2 && s[0] === "0" && "box".includes((s[1] ?? "").toLowerCase())) {
    i = 2;
    saw = "0";
    hex = (s[1] ?? "").toLowerCase() === "x";
  }
  for (; i < s.length; i++) {
    const c = s[i] as string;
    const lc = c.toLowerCase();
    if ((c >= "0" && c <= "9") || (hex && lc >= "a" && lc <= "f")) {
      saw = "0";
      continue;
    }
    if (c === "_") {
      if (saw !== "0") return false;
      saw = "_";
      continue;
    }
    if (saw === "_") return false;
    saw = "!";
  }
  return saw !== "_";
}

/**
 * strconv.ParseFloat(s, 64) for decimal input (go-yaml only hands it text starting with `.` or matching its float
 * pattern): undefined on a syntax error or when the value overflows (Go's ErrRange); underflow is 0, not an error.
 */
function parseDecimalFloat(s: string): number | undefined {
  if (!/^[-+]?[0-9_]*(\.[0-9_]*)?([eE][-+]?[0-9][0-9_]*)?$/.test(s)) return undefined;
  const mantissa = s.replace(/[eE].*$/, "");
  if (!/[0-9]/.test(mantissa)) return undefined;
  if (s.includes("_") && !underscoreOK(s)) return undefined;
  const v = Number(s.replace(/_/g, ""));
  return Number.isFinite(v) ? v : undefined;
}

const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;

function daysIn(month: number, year: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * resolve.go `parseTimestamp`: Go's time.Parse with `2006-1-2T15:4:5.999999999Z07:00` (also with `t`),
 * `2006-1-2 15:4:5.999999999` and `2006-1-2`. Only its yes/no matters: an untagged timestamp stays its text.
 */
export function isGoTimestamp(s: string): boolean {
  const m =
    /^(\d{4})-(\d{1,2})-(\d{1,2})(?:([Tt])(\d{1,2}):(\d{1,2}):(\d{1,2})(?:[.,]\d+)?(Z|[-+]\d\d:\d\d)|( )(\d{1,2}):(\d{1,2}):(\d{1,2})(?:[.,]\d+)?)?$/.exec(
      s,
    );
  if (m === null) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (month < 1 || month > 12 || day < 1 || day > daysIn(month, year)) return false;
  const [h, mi, se] = m[4] !== undefined ? [m[5], m[6], m[7]] : [m[10], m[11], m[12]];
  if (h !== undefined && (Number(h) > 23 || Number(mi) > 59 || Number(se) > 59)) return false;
  const zone = m[8];
  if (zone !== undefined && zone !== "Z" && (Number(zone.slice(1, 3)) > 24 || Number(zone.slice(4)) > 60))
    return false;
  return true;
}

function shortTag(tag: string): string {
  return tag.startsWith(TAG) ? `!!${tag.slice(TAG.length)}` : tag;
}

function intResult(v: bigint): GoScalar {
  return v > INT64_MAX ? { t: "uint", v } : { t: "int", v };
}

/** resolve.go `resolve(tag, in)` without its deferred check: the resolved tag and value. */
function resolveRaw(tag: string, s: string): [string, GoScalar] {
  const h = hint(s);
  if (h === undefined || tag === STR_TAG || tag === BINARY_TAG) return [STR_TAG, str(s)];
  const known = RESOLVE_MAP.get(s);
  if (known !== undefined) return [known[1], known[0]];
  if (h === ".") {
    const f = parseDecimalFloat(s);
    if (f !== undefined) return [FLOAT_TAG, { t: "float", v: f }];
  } else if (h === "D" || h === "S") {
    if ((tag === "" || tag === TIMESTAMP_TAG) && isGoTimestamp(s)) return [TIMESTAMP_TAG, str(s)];
    const plain = s.replace(/_/g, "");
    const i = parseInt64(plain, 0);
    if (i !== undefined) return [INT_TAG, intResult(i)];
    const u = parseUint(plain, 0);
    if (u !== undefined) return [INT_TAG, intResult(u)];
    if (YAML_STYLE_FLOAT.test(plain)) {
      const f = parseDecimalFloat(plain);
      if (f !== undefined) return [FLOAT_TAG, { t: "float", v: f }];
    }
    // go-yaml's own binary fallback: ParseInt(rest, 2) takes a sign after the prefix (`0b-1` is -1).
    if (plain.startsWith("0b")) {
      const b = parseInt64(plain.slice(2), 2) ?? parseUint(plain.slice(2), 2);
      if (b !== undefined) return [INT_TAG, intResult(b)];
    } else if (plain.startsWith("-0b")) {
      const b = parseInt64(`-${plain.slice(3)}`, 2);
      if (b !== undefined) return [INT_TAG, intResult(b)];
    }
  }
  return [STR_TAG, str(s)];
}

const RESOLVABLE = new Set(["", STR_TAG, BOOL_TAG, INT_TAG, FLOAT_TAG, NULL_TAG, TIMESTAMP_TAG]);

/**
 * A scalar as go-yaml v2 decodes it into `interface{}` (decode.go `scalar`). `tag` is the full tag (`""` when none,
 * `!` for the non-specific tag); `quoted` is true for quoted and block scalars, which are text unless tagged.
 * Throws the engine's error for a value its tag does not allow and for invalid `!!binary` data.
 */
export function goScalar(tag: string, quoted: boolean, s: string): GoScalar {
  if (tag === "" && quoted) return str(s);
  if (tag === BINARY_TAG) return str(goBinaryString(s));
  // An unknown tag (`!foo`, `!`, `!!map` on a scalar) keeps the text, whatever it looks like.
  if (!RESOLVABLE.has(tag)) return str(s);
  const [rtag, value] = resolveRaw(tag, s);
  if (tag === "" || tag === rtag || tag === STR_TAG) {
    // Into interface{}, a timestamp stays the text as written (decode.go keeps n.value for backward compatibility).
    return value;
  }
  if (tag === FLOAT_TAG && rtag === INT_TAG && value.t === "int") return { t: "float", v: Number(value.v) };
  throw new Error(`cannot decode ${shortTag(rtag)} \`${s}\` as a ${shortTag(tag)}`);
}

/**
 * `!!binary`: Go's base64.StdEncoding (padding required, `\r` and `\n` ignored, anything else an error), and the
 * bytes as the JSON string Go writes for them: each byte of an invalid UTF-8 sequence becomes U+FFFD.
 */
function goBinaryString(s: string): string {
  const b64 = s.replace(/[\r\n]/g, "");
  if (b64.length % 4 !== 0 || !/^[A-Za-z0-9+/]*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(b64))
    throw new Error("!!binary value contains invalid base64 data");
  return goUtf8(Buffer.from(b64, "base64"));
}

/** Go's utf8.DecodeRune over `bytes`, with U+FFFD for every byte that does not start a valid sequence. */
export function goUtf8(bytes: Uint8Array): string {
  let out = "";
  let i = 0;
  const at = (k: number): number => bytes[k] ?? -1;
  const cont = (k: number, lo = 0x80, hi = 0xbf): boolean => at(k) >= lo && at(k) <= hi;
  while (i < bytes.length) {
    const b = at(i);
    let size = 0;
    if (b < 0x80) size = 1;
    else if (b >= 0xc2 && b <= 0xdf && cont(i + 1)) size = 2;
    else if (b >= 0xe0 && b <= 0xef) {
      const [lo, hi] = b === 0xe0 ? [0xa0, 0xbf] : b === 0xed ? [0x80, 0x9f] : [0x80, 0xbf];
      if (cont(i + 1, lo, hi) && cont(i + 2)) size = 3;
    } else if (b >= 0xf0 && b <= 0xf4) {
      const [lo, hi] = b === 0xf0 ? [0x90, 0xbf] : b === 0xf4 ? [0x80, 0x8f] : [0x80, 0xbf];
      if (cont(i + 1, lo, hi) && cont(i + 2) && cont(i + 3)) size = 4;
    }
    if (size === 0) {
      out += "\ufffd";
      i++;
    } else {
      out += Buffer.from(bytes.subarray(i, i + size)).toString("utf8");
      i += size;
    }
  }
  return out;
}
