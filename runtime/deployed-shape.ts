/**
 * What the last successful `up` deployed, as far as cost goes, kept in the project's ledger (its `meta` table): at the
 * cap, an `up` is refused unless it only lowers what the project may spend or run (a smaller cap, fewer or smaller
 * slots, fewer templates or agents, smaller agent caps), which deploys like the hard stop does.
 */
import {
  budgetFacts,
  type LaunchSpec,
  launchSpec,
  projectNetworkName,
  type ResolvedProject,
} from "../components/model";
import type { Ledger } from "./ledger";

/** The cost-relevant facts of a project. */
export interface ProjectShape {
  readonly capUsd: number;
  readonly rates: readonly number[];
  readonly concurrency: number;
  readonly slot: { readonly vcpu: number; readonly memoryMb: number };
  readonly fixed: { readonly vcpu: number; readonly memoryMb: number };
  readonly worstCaseUsd: number;
  readonly templates: readonly string[];
  /** Per agent: its cap (Infinity without one), concurrency (Infinity without one) and templates (all: undefined). */
  readonly agents: Readonly<
    Record<string, { capUsd: number | null; concurrency: number | null; templates: readonly string[] | null }>
  >;
}

/** The shape of a resolved project. */
export function projectShape(p: ResolvedProject): ProjectShape {
  const facts = budgetFacts(p);
  const b = p.spec.budget;
  return {
    capUsd: b.monthlyCapUsd,
    rates: [b.usdPerVcpuHour, b.usdPerGbHour, b.hoursPerMonth],
    concurrency: p.budget.concurrency,
    slot: facts.slot,
    fixed: facts.fixed?.size ?? { vcpu: 0, memoryMb: 0 },
    worstCaseUsd: facts.worstCaseUsd,
    templates: Object.keys(p.spec.templates).sort(),
    agents: Object.fromEntries(
      Object.entries(p.spec.agents).map(([n, a]) => [
        n,
        {
          capUsd: a.monthlyCapUsd ?? null,
          concurrency: a.maxConcurrentTasks ?? null,
          templates: a.templates === undefined ? null : [...a.templates].sort(),
        },
      ]),
    ),
  };
}

/**
 * True when `next` may spend and run nothing that `prev` could not, and less of something: every figure at most the
 * one before (an agent without its own cap or concurrency is as high as the project's), the templates and agents a
 * subset, the rates unchanged, and at least one of them lower.
 */
export function lowersOnly(next: ProjectShape, prev: ProjectShape): boolean {
  const inf = (v: number | null) => v ?? Number.POSITIVE_INFINITY;
  const subset = (a: readonly string[], b: readonly string[]) => a.every((x) => b.includes(x));
  if (next.rates.join() !== prev.rates.join()) return false;
  const pairs: [number, number][] = [
    [next.capUsd, prev.capUsd],
    [next.concurrency, prev.concurrency],
    [next.slot.vcpu, prev.slot.vcpu],
    [next.slot.memoryMb, prev.slot.memoryMb],
    [next.fixed.vcpu, prev.fixed.vcpu],
    [next.fixed.memoryMb, prev.fixed.memoryMb],
    [next.worstCaseUsd, prev.worstCaseUsd],
  ];
  if (pairs.some(([n, p]) => n > p + 1e-9)) return false;
  if (!subset(next.templates, prev.templates)) return false;
  let lower = pairs.some(([n, p]) => n < p - 1e-9) || next.templates.length < prev.templates.length;
  for (const [name, a] of Object.entries(next.agents)) {
    const b = prev.agents[name];
    if (b === undefined) return false;
    if (inf(a.capUsd) > inf(b.capUsd) || inf(a.concurrency) > inf(b.concurrency)) return false;
    const mine = a.templates ?? next.templates;
    if (!subset(mine, b.templates ?? prev.templates)) return false;
    if (inf(a.capUsd) < inf(b.capUsd) || inf(a.concurrency) < inf(b.concurrency)) lower = true;
    if (mine.length < (b.templates ?? prev.templates).length) lower = true;
  }
  if (Object.keys(next.agents).length < Object.keys(prev.agents).length) lower = true;
  return lower;
}

const key = (project: string) => `deployed:${project}`;
const specsKey = (project: string) => `deployed-specs:${project}`;

/** Each template's launch spec as the project deploys it (what `run` must match). */
export function projectSpecs(p: ResolvedProject): Record<string, LaunchSpec> {
  const network = projectNetworkName(p.spec.name);
  return Object.fromEntries(Object.keys(p.spec.templates).map((t) => [t, launchSpec(p, t, network)]));
}

/** Records what an `up` of `project` deployed, in its ledger. */
export async function recordDeployed(ledger: Ledger, project: ResolvedProject): Promise<void> {
  const put =
    "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value";
  await ledger.store.write(async (q) => {
    await q.run(put, [key(project.spec.name), JSON.stringify(projectShape(project))]);
    await q.run(put, [specsKey(project.spec.name), JSON.stringify(projectSpecs(project))]);
  });
}

/** A recorded value of the ledger's `meta`, parsed, or undefined when none (or not JSON). */
async function recorded<T>(ledger: Ledger, name: string): Promise<T | undefined> {
  const row = await ledger.store.get("SELECT value FROM meta WHERE key = ?", [name]);
  if (typeof row?.value !== "string") return undefined;
  try {
    return JSON.parse(row.value) as T;
  } catch {
    return undefined;
  }
}

/** What the last successful `up` of the project deployed, or undefined when none was recorded. */
export function deployedShape(ledger: Ledger, project: string): Promise<ProjectShape | undefined> {
  return recorded<ProjectShape>(ledger, key(project));
}

/** The launch specs the last successful `up` of the project deployed, or undefined when none were recorded. */
export function deployedSpecs(
  ledger: Ledger,
  project: string,
): Promise<Record<string, LaunchSpec> | undefined> {
  return recorded<Record<string, LaunchSpec>>(ledger, specsKey(project));
}

/** What differs between a deployed launch spec and the one the config gives now: `key: before → now`, per key. */
export function specDifference(deployed: LaunchSpec, now: LaunchSpec): string[] {
  const short = (v: unknown) => {
    const t = JSON.stringify(v) ?? "(none)";
    return t.length > 80 ? `${t.slice(0, 77)}...` : t;
  };
  const out: string[] = [];
  const walk = (a: unknown, b: unknown, path: string) => {
    if (JSON.stringify(a) === JSON.stringify(b)) return;
    const objects = a !== null && b !== null && typeof a === "object" && typeof b === "object";
    if (objects && !Array.isArray(a) && !Array.isArray(b)) {
      const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
      for (const k of keys)
        walk((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], path ? `${path}.${k}` : k);
      return;
    }
    out.push(`${path}: ${short(a)} → ${short(b)}`);
  };
  // The hash and the wrapped command follow from the rest.
  const { specHash: _a, commandWithDeadline: _c, ...was } = deployed;
  const { specHash: _b, commandWithDeadline: _d, ...is } = now;
  walk(was, is, "");
  return out.length > 0 || deployed.specHash === now.specHash ? out : ["the template's spec (its hash)"];
}
