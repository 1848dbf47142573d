/**
 * The report as Markdown, for a pull request's summary comment and the job summary: the verdict, the counts, the
 * findings that block first, exemptions with their reasons, and what could not be read.
 */
import { blocks, type ReportFinding, type ScanReport, showLocation } from "./model";

/** One step of a pull request's checks (tests, a stack's preview, the scan), for the summary's first table. */
export interface CheckStep {
  readonly name: string;
  readonly status: "passed" | "failed" | "skipped";
  readonly detail?: string;
}

const ICON: Readonly<Record<CheckStep["status"], string>> = { passed: "✅", failed: "❌", skipped: "⏭️" };

/** Text for a table cell: no pipes or new lines. */
function cell(s: string): string {
  return s.replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
}

function row(f: ReportFinding): string {
  const level = f.exemption !== undefined ? "exempted" : f.unchecked ? "not checkable" : f.level;
  return `| ${cell(level)} | \`${f.ruleId}\` | ${cell(`${f.resource.kind}/${f.resource.name}`)} | ${cell(showLocation(f.location))} | ${cell(f.message)} |`;
}

export const MARKDOWN_MARKER = "<!-- sandbox-projects-pr-checks -->";

export function formatMarkdown(report: ScanReport, steps: readonly CheckStep[] = [], maxRows = 30): string {
  const s = report.summary;
  const failed = steps.some((x) => x.status === "failed") || report.exitCode !== 0;
  const out: string[] = [
    MARKDOWN_MARKER,
    `## Sandbox policy checks: ${failed ? "❌ failed" : "✅ passed"}`,
    "",
  ];
  if (steps.length > 0) {
    out.push("| step | result | detail |", "| --- | --- | --- |");
    for (const x of steps)
      out.push(`| ${cell(x.name)} | ${ICON[x.status]} ${x.status} | ${cell(x.detail ?? "")} |`);
    out.push("");
  }
  out.push(
    `**scan** (${report.tool.pack} rules): ${s.resources} resource(s) in ${report.inputs.length} input(s): ` +
      `**${s.mandatory} mandatory**, ${s.advisory} advisory, ${s.exempted} exempted, ${s.unchecked} not checkable, ` +
      `${s.skipped} skipped, ${s.errors} error(s).`,
    "",
  );
  const order = (f: ReportFinding) =>
    blocks(f)
      ? 0
      : f.exemption === undefined && !f.unchecked && f.level === "advisory"
        ? 1
        : f.exemption
          ? 2
          : 3;
  const findings = [...report.findings].sort((a, b) => order(a) - order(b));
  if (findings.length > 0) {
    out.push("| level | rule | resource | where | finding |", "| --- | --- | --- | --- | --- |");
    for (const f of findings.slice(0, maxRows)) out.push(row(f));
    if (findings.length > maxRows)
      out.push(
        "",
        `…and ${findings.length - maxRows} more: see the code scanning alerts or the SARIF artifact.`,
      );
    out.push("");
  }
  const exempted = report.findings.filter((f) => f.exemption !== undefined);
  if (exempted.length > 0) {
    out.push("**Exemptions**", "");
    for (const f of exempted)
      out.push(
        `- \`${f.ruleId}\` on ${cell(`${f.resource.kind}/${f.resource.name}`)}: ${cell(f.exemption?.reason ?? "")}`,
      );
    out.push("");
  }
  if (report.errors.length > 0) {
    out.push("**Inputs that could not be read**", "");
    for (const e of report.errors) out.push(`- ${cell(showLocation(e.location))}: ${cell(e.message)}`);
    out.push("");
  }
  return `${out.join("\n")}\n`;
}
