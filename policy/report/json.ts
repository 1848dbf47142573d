/** The report as JSON for machines: the report model as is, with a format marker. */
import type { ScanReport } from "./model";

export const JSON_REPORT_FORMAT = "sandbox-projects-scan/v1";

export function formatJson(report: ScanReport): string {
  return `${JSON.stringify({ format: JSON_REPORT_FORMAT, ...report }, null, 2)}\n`;
}
