/**
 * Exemptions as `scan` and the CrossGuard pack both apply them: `{ resource, reason }` per rule. `resource` is a URN,
 * `<file>:<Kind>/<name>` (`<file>:<Kind>/<namespace>/<name>`), or a pattern (`*` matches any run of characters); a
 * pattern without a `:` matches the `<Kind>/<name>` part, which for a Pulumi resource is its type's last segment and
 * its Pulumi name (`Container/probe` for `urn:...::docker:index/container:Container::probe`). An exemption without a
 * reason exempts nothing: the config readers refuse it, and a reader that meets one anyway fails closed.
 *
 * The identity a pattern matches is the one the engine uses, read the engine's way, so that no text an author puts
 * in a name can make it look like another resource: a URN is split as Pulumi splits it (policy/urn.ts: the name is
 * everything after the third `::`, and a URN pattern matches stack, project, type and name each in its place); in a
 * file's id every part taken from the input (kind, namespace, name) is written with {@link idPart}, so a `:` or `/`
 * inside a name can never stand for the separators around it.
 */
import type { Exemption } from "./report/model";
import { parseUrn, splitN, URN_PREFIX, type UrnParts } from "./urn";

/** `*` matches any run of characters; everything else literally. */
export function globMatch(pattern: string, value: string): boolean {
  const re = new RegExp(
    `^${pattern
      .split("*")
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*")}$`,
    "s",
  );
  return re.test(value);
}

/**
 * One part of a file resource's id (a kind, namespace, name or pod site) as taken from the input: `%`, `:` and `/`
 * percent-encoded, so the id's own separators stay the only ones. Names the engines accept (DNS names, Compose
 * service names) have none of them and read unchanged.
 */
export function idPart(text: string): string {
  return text.replace(/[%:/]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`);
}

/**
 * The `<Kind>/<name>` part of a resource id: after the file (the last `:`, as no part after it holds one) for a
 * file's resources; the URN's type (its last `$`-separated type, then that type's last `:` segment) and name, read
 * as Pulumi reads them, for a Pulumi resource.
 */
export function localPart(resourceId: string): string {
  const urn = parseUrn(resourceId);
  if (urn === undefined) return resourceId.slice(resourceId.lastIndexOf(":") + 1);
  return `${urn.type.slice(urn.type.lastIndexOf(":") + 1)}/${urn.name}`;
}

/**
 * A URN pattern against a URN, part by part: the pattern is split as the URN is (at its first three `::`), and each
 * of its parts matches the URN's part in the same place; a pattern of fewer parts matches the rest of the URN with
 * its last part (`urn:pulumi:dev::*` is every resource of stack `dev`). So `*` never moves the name's start: a
 * resource named `x::debug` is not named `debug`.
 */
function urnMatch(pattern: string, urn: UrnParts): boolean {
  const want = splitN(pattern.slice(URN_PREFIX.length), "::", 4);
  const have = [urn.stack, urn.project, urn.qualifiedType, urn.name];
  return want.every((p, i) =>
    globMatch(p, i === want.length - 1 ? have.slice(i).join("::") : (have[i] as string)),
  );
}

/**
 * Whether an exemption's `resource` names the resource. Three kinds of pattern, each matching one kind of identity:
 * - `urn:pulumi:...` matches a URN, part by part;
 * - another pattern with a `:` is `<file>:<Kind>/<name>` and matches a file's resource: the file part against the
 *   id's file, the rest against its `<Kind>/<name>` (split at the last `:` on both sides, as no part after the file
 *   holds one), never a URN;
 * - a pattern without a `:` matches any resource's `<Kind>/<name>` part, or a file resource's whole id
 *   (`k8s/debug/*`). A Pulumi name holding a `:` is exempted by its URN.
 */
export function exemptionMatches(pattern: string, resourceId: string): boolean {
  const urn = parseUrn(resourceId);
  if (pattern.startsWith(URN_PREFIX)) return urn !== undefined && urnMatch(pattern, urn);
  if (urn !== undefined) return !pattern.includes(":") && globMatch(pattern, localPart(resourceId));
  if (!pattern.includes(":"))
    return globMatch(pattern, resourceId) || globMatch(pattern, localPart(resourceId));
  const p = pattern.lastIndexOf(":");
  const r = resourceId.lastIndexOf(":");
  return (
    r >= 0 &&
    globMatch(pattern.slice(0, p), resourceId.slice(0, r)) &&
    globMatch(pattern.slice(p + 1), resourceId.slice(r + 1))
  );
}

/** The exemption covering a rule's finding on a resource, or undefined. */
export function findExemption(
  exemptions: readonly Exemption[],
  rule: string,
  resourceId: string,
): Exemption | undefined {
  return exemptions.find(
    (e) => e.rule === rule && e.reason.trim() !== "" && exemptionMatches(e.resource, resourceId),
  );
}

/** The JSON schema of a rule's `exemptions` setting, as the pack declares it so the Pulumi CLI validates it too. */
export const EXEMPTIONS_SCHEMA = {
  type: "array",
  description:
    "Resources this rule does not judge, each with the reason: { resource: URN, <Kind>/<name> or a pattern with *, reason }.",
  items: {
    type: "object",
    properties: {
      resource: { type: "string", minLength: 1, pattern: "\\S" },
      reason: { type: "string", minLength: 1, pattern: "\\S" },
    },
    required: ["resource", "reason"],
    additionalProperties: false,
  },
} as const;

/**
 * A rule's `exemptions` setting as the pack receives it. The CLI has validated it against {@link EXEMPTIONS_SCHEMA};
 * an entry that is not a `{ resource, reason }` with both set is dropped here, so it exempts nothing.
 */
export function exemptionsOf(rule: string, setting: unknown): Exemption[] {
  if (!Array.isArray(setting)) return [];
  const out: Exemption[] = [];
  for (const e of setting) {
    if (typeof e !== "object" || e === null) continue;
    const { resource, reason } = e as Record<string, unknown>;
    if (typeof resource !== "string" || resource.trim() === "") continue;
    if (typeof reason !== "string" || reason.trim() === "") continue;
    out.push({ rule, resource: resource.trim(), reason: reason.trim() });
  }
  return out;
}
