/**
 * Pulumi URNs read as the engine reads them (pulumi/pulumi sdk/go/common/resource/urn.go):
 * `urn:pulumi:<stack>::<project>::<qualified type>::<name>`, split at the first three `::` only (`strings.SplitN(...,
 * "::", 4)`), so the name is everything after the third `::` and may itself hold `::` (Pulumi allows any text in a
 * resource name). The type is the qualified type's last `$`-separated element.
 */

export const URN_PREFIX = "urn:pulumi:";

/** A URN's parts. */
export interface UrnParts {
  readonly stack: string;
  readonly project: string;
  /** The type with its parents' types (`parent$child`). */
  readonly qualifiedType: string;
  /** The resource's own type token (`kubernetes:core/v1:Pod`). */
  readonly type: string;
  readonly name: string;
}

/** Go's `strings.SplitN(s, sep, n)` for n > 0: at most `n` parts, the last one the unsplit rest. */
export function splitN(s: string, sep: string, n: number): string[] {
  const out: string[] = [];
  let from = 0;
  while (out.length < n - 1) {
    const at = s.indexOf(sep, from);
    if (at < 0) break;
    out.push(s.slice(from, at));
    from = at + sep.length;
  }
  out.push(s.slice(from));
  return out;
}

/** The parts of a URN, or undefined when it is not one (no `urn:pulumi:` prefix, fewer than four parts). */
export function parseUrn(urn: string): UrnParts | undefined {
  if (!urn.startsWith(URN_PREFIX)) return undefined;
  const parts = splitN(urn.slice(URN_PREFIX.length), "::", 4);
  if (parts.length !== 4) return undefined;
  const [stack, project, qualifiedType, name] = parts as [string, string, string, string];
  const types = qualifiedType.split("$");
  return { stack, project, qualifiedType, type: types[types.length - 1] ?? qualifiedType, name };
}
