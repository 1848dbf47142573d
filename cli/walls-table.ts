import { escapeControls } from "./output";

/** One wall of a probe's report: what the template declares and what the self-check saw. */
export interface WallRow {
  readonly wall: string;
  readonly declared: string;
  readonly observed: string;
  readonly ok: boolean | null;
}

export interface WallsReport {
  readonly passed: boolean;
  readonly walls: readonly WallRow[];
}

/**
 * The walls table `./sandbox probe` prints, line for line, for one template. `up` prints the same table from the
 * probe reports in the stack's outputs (the structured report stays there, for `--json` and `pulumi stack output`).
 */
export function wallsTable(template: string, report: WallsReport): string {
  const lines = [`template ${template}: ${report.passed ? "every wall held" : "A WALL FAILED"}`];
  for (const w of report.walls) {
    const mark = w.ok === true ? "ok  " : w.ok === false ? "FAIL" : "n/a ";
    // What was observed is read from the task's output: written out, never passed to the terminal as it is.
    lines.push(
      `  ${mark} ${w.wall.padEnd(13)} declared ${w.declared}; observed ${escapeControls(w.observed)}`,
    );
  }
  return `${lines.join("\n")}\n`;
}

function isReport(value: unknown): value is WallsReport {
  const r = value as WallsReport | undefined;
  return typeof r === "object" && r !== null && typeof r.passed === "boolean" && Array.isArray(r.walls);
}

/** The probe reports of a stack's `probes` output, by template name (templates without a probe are left out). */
export function probeReports(probes: unknown): Record<string, WallsReport> {
  const out: Record<string, WallsReport> = {};
  if (typeof probes !== "object" || probes === null) return out;
  for (const name of Object.keys(probes).sort()) {
    const r = (probes as Record<string, unknown>)[name];
    if (isReport(r)) out[name] = r;
  }
  return out;
}
