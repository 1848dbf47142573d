/** Crosswalk ids as tags: the CrossGuard pack's policy tags and the reports' rule tags are this one list. */
import type { Crosswalk } from "../rules/types";

/** `cis-docker:5.4`, `psa:capabilities_restricted`, `kyverno:require-drop-all`, ... plus `mission` for the four walls. */
export function crosswalkTags(crosswalk: Crosswalk, mission: boolean): string[] {
  const tags: string[] = mission ? ["mission"] : [];
  const prefixes: [keyof Crosswalk, string][] = [
    ["cis", "cis-docker"],
    ["psa", "psa"],
    ["kyverno", "kyverno"],
    ["checkov", "checkov"],
    ["kubeLinter", "kube-linter"],
    ["kubesec", "kubesec"],
    ["cwe", "cwe"],
  ];
  for (const [k, p] of prefixes) for (const id of crosswalk[k] ?? []) tags.push(`${p}:${id}`);
  return tags;
}
