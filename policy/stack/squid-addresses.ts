/**
 * The addresses a Squid `dst` ACL matches, read as Squid 5-7 read them (`src/acl/Ip.cc` acl_ip_data::FactoryParse
 * and ACLIP::parse, `src/ip/Address.cc` applyMask and cidr). Squid holds every address as 128 bits, an IPv4 address
 * as the IPv4-mapped one (`::ffff:a.b.c.d`), so an IPv4 mask of n bits is one of 96 + n. A value is `all` (or a
 * spelling Squid reads as it: `0/0`, `0.0.0.0/0`, ...), an address, `address/mask`, a range `first-last` or
 * `first-last/mask`; the mask is a number of bits (at most 32 for IPv4, 128 for IPv6) or a dotted IPv4 netmask (its
 * leading ones); a mask of 0 is Squid's "no mask", the address alone. The address is masked before it is compared.
 * Squid keeps an entry only when no entry already in the ACL overlaps it (its splay tree drops the later one of two
 * overlapping entries), so only an entry that no earlier value of the ACL may overlap surely counts. A value read
 * here in any other spelling (a host name Squid resolves at start-up, `ipv4`, `ipv6`, an IPv4 address with leading
 * zeros or fewer than four parts) covers nothing, and as it may overlap what follows, neither do the values after it.
 */

/** A closed range of 128-bit addresses. */
export interface AddressSpan {
  readonly lo: bigint;
  readonly hi: bigint;
}

const ALL = (1n << 128n) - 1n;
const V4_MAPPED = 0xffffn << 32n;
const OCTET = "(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)";
const DOTTED = new RegExp(`^${OCTET}(?:\\.${OCTET}){3}$`);
/** The spellings Squid replaces by `all` (with an error that says so). */
const ALL_SPELLINGS = [
  "all",
  "0/0",
  "0.0.0.0/0",
  "0.0.0.0/0.0.0.0",
  "0.0.0.0-255.255.255.255",
  "0.0.0.0-0.0.0.0/0",
];

/** A dotted IPv4 address as 32 bits, or undefined. */
function v4(text: string): bigint | undefined {
  if (!DOTTED.test(text)) return undefined;
  return text.split(".").reduce((n, o) => (n << 8n) | BigInt(Number(o)), 0n);
}

/** An IPv6 address of hexadecimal groups (at most one `::`, no embedded IPv4) as 128 bits, or undefined. */
function v6(text: string): bigint | undefined {
  if (!/^[0-9A-Fa-f:]+$/.test(text)) return undefined;
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const groups = halves.map((h) => (h === "" ? [] : h.split(":")));
  if (groups.flat().some((g) => !/^[0-9A-Fa-f]{1,4}$/.test(g))) return undefined;
  const count = groups.flat().length;
  if (halves.length === 1 ? count !== 8 : count > 7) return undefined;
  const [head = [], tail = []] = groups;
  const all = [...head, ...Array<string>(8 - count).fill("0"), ...tail];
  return all.reduce((n, g) => (n << 16n) | BigInt(Number.parseInt(g, 16)), 0n);
}

/** A mask of the given leading ones (of 128 bits); 0 is Squid's "no mask" (every bit). */
function leadingOnes(bits: number): bigint {
  return bits === 0 ? ALL : (ALL << BigInt(128 - bits)) & ALL;
}

/** The 128-bit mask a mask word stands for in an IPv4 or IPv6 value, or undefined where Squid refuses it. */
function maskOf(word: string | undefined, family: 4 | 6): bigint | undefined {
  if (word === undefined) return ALL;
  if (/^\d{1,3}$/.test(word)) {
    const bits = Number(word);
    if (bits > (family === 4 ? 32 : 128)) return undefined;
    return leadingOnes(bits === 0 ? 0 : family === 4 ? 96 + bits : bits);
  }
  const dotted = family === 4 ? v4(word) : undefined;
  if (dotted === undefined) return undefined;
  // Squid counts the netmask's leading ones (Address::cidr) and applies that many bits.
  let ones = 0;
  while (ones < 32 && (dotted >> BigInt(31 - ones)) & 1n) ones++;
  return leadingOnes(ones === 0 ? 0 : 96 + ones);
}

/** The addresses one value of a `dst` ACL matches, or undefined when it is not read here. */
export function dstSpan(value: string): AddressSpan | undefined {
  if (ALL_SPELLINGS.includes(value)) return { lo: 0n, hi: ALL };
  const v4form = /^([0-9.]+)(?:-([0-9.]+))?(?:\/([0-9.]+))?$/.exec(value);
  const v6form = v4form === null ? /^([0-9A-Fa-f:]+)(?:-([0-9A-Fa-f:]+))?(?:\/(\d+))?$/.exec(value) : null;
  const form = v4form ?? v6form;
  if (form === null) return undefined;
  const family = v4form === null ? 6 : 4;
  const read = (t: string | undefined): bigint | undefined => {
    if (t === undefined) return undefined;
    const n = family === 4 ? v4(t) : v6(t);
    return n === undefined ? undefined : family === 4 ? V4_MAPPED | n : n;
  };
  const first = read(form[1]);
  const last = form[2] === undefined ? undefined : read(form[2]);
  const mask = maskOf(form[3], family);
  if (first === undefined || mask === undefined || (form[2] !== undefined && last === undefined))
    return undefined;
  const lo = first & mask;
  // A range whose masked end is the unspecified address `::` is compared as a single address, as Squid does.
  const end = last === undefined ? lo : last & mask;
  const hi = (end === 0n ? lo : end) | (~mask & ALL);
  return lo <= hi ? { lo, hi } : undefined;
}

/** The spans of an ACL's values (in the order Squid reads them) that surely count, as the file comment says. */
export function keptSpans(values: readonly string[]): AddressSpan[] {
  const kept: AddressSpan[] = [];
  const seen: AddressSpan[] = [];
  for (const value of values) {
    const span = dstSpan(value);
    if (span === undefined) break;
    if (!seen.some((s) => s.lo <= span.hi && span.lo <= s.hi)) kept.push(span);
    seen.push(span);
  }
  return kept;
}

/** The first of `ranges` (dst ACL values) that the spans do not cover whole, or undefined when they cover all. */
export function uncovered(spans: readonly AddressSpan[], ranges: readonly string[]): string | undefined {
  const sorted = [...spans].sort((a, b) => (a.lo < b.lo ? -1 : a.lo > b.lo ? 1 : 0));
  const merged: { lo: bigint; hi: bigint }[] = [];
  for (const s of sorted) {
    const top = merged.at(-1);
    if (top === undefined || s.lo > top.hi + 1n) merged.push({ lo: s.lo, hi: s.hi });
    else if (s.hi > top.hi) top.hi = s.hi;
  }
  return ranges.find((r) => {
    const want = dstSpan(r);
    return want === undefined || !merged.some((m) => m.lo <= want.lo && want.hi <= m.hi);
  });
}
