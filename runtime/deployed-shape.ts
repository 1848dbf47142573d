/**
 * What the last successful `up` deployed, as far as cost goes, kept in the project's ledger (its `meta` table): at the
 * cap, an `up` is refused unless it only lowers what the project may spend or run (a smaller cap, fewer or smaller
 * slots, fewer templates or agents, smaller agent caps), which deploys like the hard stop does.
 */
import { DatabaseSync } from "node:sqlite";
import { budgetFacts, type ResolvedProject } from "../components/model";

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

/** Records what an `up` of `project` deployed in the ledger at `file` (opened and migrated before). */
export function recordDeployed(file: string, project: ResolvedProject): void {
  const db = new DatabaseSync(file, { timeout: 5000 });
  try {
    db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)").run(
      key(project.spec.name),
      JSON.stringify(projectShape(project)),
    );
  } finally {
    db.close();
  }
}

/** What the last successful `up` of the project deployed, or undefined when none was recorded. */
export function deployedShape(file: string, project: string): ProjectShape | undefined {
  const db = new DatabaseSync(file, { timeout: 5000 });
  try {
    const row = db.prepare("SELECT value FROM meta WHERE key = ?").get(key(project)) as
      | { value?: string }
      | undefined;
    return row?.value === undefined ? undefined : (JSON.parse(row.value) as ProjectShape);
  } catch {
    return undefined;
  } finally {
    db.close();
  }
}
