/** The report for a person: findings grouped by resource, then what was exempted, skipped or broken, then a total. */
import { blocks, type ReportFinding, type ScanReport, showLocation } from "./model";

function mark(f: ReportFinding): string {
  if (f.unchecked) return "note     ";
  if (f.exemption !== undefined) return "exempted ";
  if (blocks(f)) return "FAIL     ";
  if (f.level === "advisory") return "warn     ";
  return "note     ";
}

function lineOf(f: ReportFinding): string {
  const at =
    f.location.line !== undefined && f.location.line !== f.resource.location.line
      ? ` (line ${f.location.line})`
      : "";
  const exempt = f.exemption === undefined ? "" : `\n      exempted: ${f.exemption.reason}`;
  const live =
    f.live === true ? "\n      in the object the API server returned (its outputs), not in its inputs" : "";
  return `  ${mark(f)}${f.ruleId} [${f.level}]: ${f.message}${at}${live}${exempt}`;
}

export function formatText(report: ScanReport): string {
  const out: string[] = [];
  const byResource = new Map<string, ReportFinding[]>();
  const key = (r: ReportFinding["resource"]) => `${r.location.file}\0${r.id}`;
  for (const f of report.findings) {
    const list = byResource.get(key(f.resource)) ?? [];
    list.push(f);
    byResource.set(key(f.resource), list);
  }
  for (const r of report.resources) {
    const fs = byResource.get(key(r));
    if (fs === undefined) continue;
    byResource.delete(key(r));
    out.push(`${showLocation(r.location)}  ${r.kind}/${r.name}`);
    for (const f of fs) out.push(lineOf(f));
  }
  // Stack findings about resources no resource rule judged (a SandboxProject's budget).
  for (const fs of byResource.values()) {
    const r = fs[0]?.resource;
    if (r === undefined) continue;
    out.push(`${showLocation(r.location)}  ${r.kind}/${r.name}`);
    for (const f of fs) out.push(lineOf(f));
  }
  if (report.skipped.length > 0) {
    out.push("skipped (no rule judges these):");
    for (const s of report.skipped)
      out.push(
        `  ${showLocation(s.location)}  ${s.kind}${s.name === undefined ? "" : `/${s.name}`}: ${s.reason}`,
      );
  }
  if (report.assumptions.length > 0) {
    out.push("assumed (the verdict holds for these values):");
    for (const a of report.assumptions) out.push(`  ${a.file}: ${a.statement}`);
  }
  if (report.errors.length > 0) {
    out.push("errors:");
    for (const e of report.errors) out.push(`  ${showLocation(e.location)}: ${e.message}`);
  }
  const s = report.summary;
  const verdict =
    report.exitCode === 2
      ? "bad input"
      : report.exitCode === 1
        ? "FAILED: a mandatory rule fails"
        : "passed: no mandatory rule fails";
  out.push(
    `${s.resources} resource(s) judged in ${report.inputs.length} input(s): ${s.mandatory} mandatory, ${s.advisory} advisory, ` +
      `${s.exempted} exempted, ${s.unchecked} not checkable, ${s.skipped} skipped, ${s.errors} error(s): ${verdict}`,
  );
  return `${out.join("\n")}\n`;
}
