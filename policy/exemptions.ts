/**
 * Exemptions as `scan` and the CrossGuard pack both apply them: `{ resource, reason }` per rule. `resource` is a URN,
 * `<file>:<Kind>/<name>` (`<file>:<Kind>/<namespace>/<name>`), or a pattern (`*` matches any run of characters); a
 * pattern without a `:` matches the `<Kind>/<name>` part, which for a Pulumi resource is its type's last segment and
 * its Pulumi name (`Container/probe` for `urn:...::docker:index/container:Container::probe`). An exemption without a
 * reason exempts nothing: the config readers refuse it, and a reader that meets one anyway fails closed.
 */
import type { Exemption } from "./report/model";

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
 * The `<Kind>/<name>` part of a resource id: after the file for a file's resources; from the URN's type (its last
 * `$`-separated type, then that type's last `:` segment) and name for a Pulumi resource.
 */
export function localPart(resourceId: string): string {
  if (!resourceId.startsWith("urn:")) return resourceId.slice(resourceId.lastIndexOf(":") + 1);
  const nameAt = resourceId.lastIndexOf("::");
  const typeAt = resourceId.lastIndexOf("::", nameAt - 1);
  if (nameAt < 0 || typeAt < 0) return resourceId;
  const types = resourceId.slice(typeAt + 2, nameAt);
  const type = types.slice(types.lastIndexOf("$") + 1);
  return `${type.slice(type.lastIndexOf(":") + 1)}/${resourceId.slice(nameAt + 2)}`;
}

/** The exemption covering a rule's finding on a resource, or undefined. */
export function findExemption(
  exemptions: readonly Exemption[],
  rule: string,
  resourceId: string,
): Exemption | undefined {
  const local = localPart(resourceId);
  return exemptions.find(
    (e) =>
      e.rule === rule &&
      e.reason.trim() !== "" &&
      (globMatch(e.resource, resourceId) || (!e.resource.includes(":") && globMatch(e.resource, local))),
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
