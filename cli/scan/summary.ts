/**
 * The pull request summary (Markdown) from a scan's JSON report and the checks' step results, for
 * toolchain/pr-checks.sh. Steps come as lines `name<TAB>passed|failed|skipped<TAB>detail`.
 *
 *   tsx cli/scan/summary.ts <steps.tsv> <scan.json> > summary.md
 */
import { readFileSync } from "node:fs";
import { type CheckStep, formatMarkdown } from "../../policy/report/markdown";
import type { ScanReport } from "../../policy/report/model";

export function readSteps(tsv: string): CheckStep[] {
  return tsv
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => {
      const [name = "", status = "", detail] = l.split("\t");
      const st = status === "passed" || status === "failed" || status === "skipped" ? status : "failed";
      return { name, status: st, ...(detail === undefined || detail === "" ? {} : { detail }) };
    });
}

if (require.main === module) {
  const [steps, report] = process.argv.slice(2);
  if (steps === undefined || report === undefined) {
    process.stderr.write("usage: summary.ts <steps.tsv> <scan.json>\n");
    process.exitCode = 2;
  } else {
    const parsed = JSON.parse(readFileSync(report, "utf8")) as ScanReport;
    process.stdout.write(formatMarkdown(parsed, readSteps(readFileSync(steps, "utf8"))));
  }
}
