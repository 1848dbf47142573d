import { closestKey, editDistance, type SpecProblem } from "../components/model";

export { closestKey, editDistance } from "../components/model";

/**
 * Config keys that were meant for the sandbox project but sit outside its namespace. The program only reads
 * `sandbox:*`, so `sandbx:enabled: false` would be ignored without a word, and with it the hard stop. Every key
 * whose namespace resembles `sandbox` (same letters in another case, or within two edits) or that names a project
 * key without the namespace (`enabled`, `sandbox.enabled`) is refused with the key it most likely meant.
 */

/** True for a namespace that is `sandbox` in another case or a near misspelling of it. */
function resemblesNamespace(ns: string, namespace: string): boolean {
  return editDistance(ns.toLowerCase(), namespace) <= 2;
}

/**
 * The problems of keys outside `<namespace>:` that resemble it. `known` are the project's top-level keys; the
 * suggestion keeps the rest of the key (`sandbx:budget.monthlyCapUsd` → `sandbox:budget.monthlyCapUsd`) and
 * corrects its first segment when it is near a known key.
 */
export function nearNamespaceProblems(
  keys: readonly string[],
  namespace: string,
  known: readonly string[],
): SpecProblem[] {
  const problems: SpecProblem[] = [];
  for (const full of keys) {
    if (full.startsWith(`${namespace}:`)) continue;
    const suggestion = suggestionFor(full, namespace, known);
    if (suggestion === undefined) continue;
    problems.push({
      key: full,
      value: undefined,
      message:
        `a key outside the ${namespace}: namespace is ignored by the project, so this setting would be silently ` +
        `dropped; did you mean "${suggestion}"?`,
    });
  }
  return problems.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

function suggestionFor(full: string, namespace: string, known: readonly string[]): string | undefined {
  const fix = (rest: string): string => {
    const [first = "", ...more] = rest.split(".");
    const k = closestKey(first, known) ?? first;
    return `${namespace}:${[k, ...more].join(".")}`;
  };
  const colon = full.indexOf(":");
  if (colon !== -1) {
    const ns = full.slice(0, colon);
    const rest = full.slice(colon + 1);
    if (resemblesNamespace(ns, namespace)) return fix(rest);
    // `sandbox.enabled:x` and the like are not config keys the engine reads either.
    return undefined;
  }
  // No namespace: `sandbox.enabled`, `sandbox_enabled`, `sandbx/enabled`, or a bare project key (`enabled`).
  const m = /^([^./_-]+)[./_-](.+)$/.exec(full);
  if (m?.[1] !== undefined && m[2] !== undefined && resemblesNamespace(m[1], namespace)) return fix(m[2]);
  const [first = ""] = full.split(".");
  if (closestKey(first, known) !== undefined && first.length >= 4) return fix(full);
  return undefined;
}
