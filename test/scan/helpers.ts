// Runs `scan` in-process the way the CLI does, and reads its JSON report.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterAll, expect } from "vitest";
import { runScan } from "../../cli/scan";
import type { ReportFinding, ScanReport } from "../../policy/report/model";
import { ALL_RULES } from "../../policy/rules/registry";

export const ROOT = resolve(__dirname, "..", "..");
export const FIXTURES = join("test", "scan", "fixtures");

export interface ScanRun {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/** `scan <args>` from the repository root (relative paths are reported as given). */
export async function scan(args: readonly string[], stdin?: string, cwd = ROOT): Promise<ScanRun> {
  let out = "";
  let err = "";
  const code = await runScan(
    args,
    {
      out: (t) => {
        out += t;
      },
      err: (t) => {
        err += t;
      },
    },
    { cwd, readStdin: () => stdin ?? "" },
  );
  return { code, out, err };
}

/** `scan --format json <args>`: the exit code and the report. */
export async function scanJson(
  args: readonly string[],
  stdin?: string,
  cwd = ROOT,
): Promise<{ code: number; report: ScanReport; err: string }> {
  const r = await scan(["--format", "json", ...args], stdin, cwd);
  return { code: r.code, report: JSON.parse(r.out) as ScanReport, err: r.err };
}

/** `rule: message` of the violations (not notes, not exempted) on one resource, sorted. */
export function violationsOf(report: ScanReport, name: string, file?: string): string[] {
  return report.findings
    .filter(
      (f: ReportFinding) =>
        f.resource.name === name && !f.unchecked && (file === undefined || f.resource.location.file === file),
    )
    .map((f) => `${f.ruleId}: ${f.message}`)
    .sort();
}

export function rulesOf(report: ScanReport, name: string): string[] {
  return [...new Set(violationsOf(report, name).map((v) => v.slice(0, v.indexOf(":"))))].sort();
}

/** The folders tempFiles made for the test file that imports this module, removed after its tests. */
const made: string[] = [];
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A temporary folder with the given files (removed after the test file's tests). */
export function tempFiles(files: Readonly<Record<string, string>>): string {
  const dir = mkdtempSync(join(tmpdir(), "sandbox-scan-"));
  made.push(dir);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

/**
 * A pack config that declares the job root the fixtures' job folders live under (`/var/lib/sandbox-projects`), as an
 * operator declares it (`scan --config`): with none declared a writable host mount fails.
 */
export const DECLARED_CONFIG = join(ROOT, "test", "scan", "config", "job-roots.json");
export const DECLARED_ARGS: readonly string[] = ["--config", DECLARED_CONFIG];

const MANDATORY = new Set(ALL_RULES.filter((r) => r.enforcementLevel !== "advisory").map((r) => r.id));

/** The mandatory findings among `lines`, as `rule: message`, once each, sorted: a verdict to compare. */
export function mandatoryVerdict(lines: readonly { rule: string; message: string }[]): string[] {
  return [
    ...new Set(lines.filter((l) => MANDATORY.has(l.rule)).map((l) => `${l.rule}: ${l.message}`)),
  ].sort();
}

/**
 * `scan` of one file's text, alone in a folder: its mandatory findings that were checked, on what the input asked
 * for (not what a stack export's outputs add, which the pack cannot see), as {@link mandatoryVerdict}.
 */
export async function scanMandatory(
  file: string,
  text: string,
  args: readonly string[] = DECLARED_ARGS,
): Promise<string[]> {
  const dir = tempFiles({ [file]: text });
  const { report } = await scanJson([file, ...args], undefined, dir);
  expect(report.errors).toEqual([]);
  return mandatoryVerdict(
    report.findings
      .filter((f) => !f.unchecked && f.live !== true)
      .map((f) => ({ rule: f.ruleId, message: f.message })),
  );
}
