/**
 * The acceptance harness for the adversarial cases: each case is files in a fresh folder, scanned as `scan --format
 * json .` the way a user would, and an expected verdict. Written against the report's public shape only (exit code,
 * findings, errors), never against the scanner's internals, so it judges whatever implementation is in place.
 */
import { rmSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { ReportFinding, ScanReport } from "../../policy/report/model";
import { scanJson, tempFiles } from "../scan/helpers";

export type Files = Readonly<Record<string, string>>;

export interface Blocked {
  readonly verdict: "blocked";
  /** The object that must carry the finding (its name; a carrier's sub-pod `name/spec.x` counts too). */
  readonly object?: string;
  /** A rule id from policy/README.md that must fire on it; any blocking rule when omitted. */
  readonly rule?: string;
  /** Input the engine itself refuses: exit 2 is also a correct refusal. */
  readonly engineRefuses?: boolean;
  /** Words one of the blocking findings' messages must hold (why the rule fired). */
  readonly says?: string;
}

export interface Passes {
  readonly verdict: "passes";
}

export type Expect = Blocked | Passes;

export interface ScanResult {
  readonly code: number;
  readonly report: ScanReport;
}

/** Scans the files as `scan --format json .` in their folder, with extra arguments before the path. */
export async function scanFiles(
  files: Files,
  args: readonly string[] = [],
  paths: readonly string[] = ["."],
): Promise<ScanResult> {
  const dir = tempFiles(files);
  try {
    const { code, report } = await scanJson([...args, ...paths], undefined, dir);
    return { code, report };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A finding that blocks: a violation of a mandatory or remediate rule that no exemption covers. */
export function blocking(f: ReportFinding): boolean {
  return !f.unchecked && f.exemption === undefined && (f.level === "mandatory" || f.level === "remediate");
}

function onObject(f: ReportFinding, object: string | undefined): boolean {
  if (object === undefined) return true;
  const n = f.resource.name;
  return n === object || n.startsWith(`${object}/`) || f.resource.id.endsWith(`/${object}`);
}

/** One line describing what the scan said, for failure messages. */
export function describeResult(r: ScanResult): string {
  const found = r.report.findings
    .filter(blocking)
    .map((f) => `${f.resource.kind}/${f.resource.name}:${f.ruleId}`)
    .sort();
  const errors = r.report.errors.map((e) => e.message.slice(0, 160));
  const skipped = r.report.skipped.map((s) => `${s.kind}/${s.name ?? ""}:${s.reason.slice(0, 80)}`);
  return JSON.stringify({ code: r.code, blocking: found, errors, skipped });
}

/** Asserts the verdict; the message names the exit code and the blocking findings on failure. */
export function assertVerdict(r: ScanResult, want: Expect): void {
  const seen = describeResult(r);
  if (want.verdict === "passes") {
    expect(
      r.report.findings.filter(blocking).map((f) => `${f.resource.name}:${f.ruleId}`),
      seen,
    ).toEqual([]);
    expect(r.code, seen).toBe(0);
    return;
  }
  if (want.engineRefuses === true && r.code === 2) return;
  expect(r.code, seen).toBe(1);
  const hits = r.report.findings.filter((f) => blocking(f) && onObject(f, want.object));
  expect(hits.length, `no blocking finding on ${want.object ?? "any object"}: ${seen}`).toBeGreaterThan(0);
  if (want.rule !== undefined) {
    expect(
      hits.map((f) => f.ruleId),
      `rule ${want.rule} on ${want.object ?? "any object"}: ${seen}`,
    ).toContain(want.rule);
  }
  if (want.says !== undefined) {
    const says = want.says;
    expect(
      hits.filter((f) => want.rule === undefined || f.ruleId === want.rule).map((f) => f.message),
      `a finding saying "${says}": ${seen}`,
    ).toContainEqual(expect.stringContaining(says));
  }
}

/** Scans and asserts in one step. */
export async function verdict(
  files: Files,
  want: Expect,
  args: readonly string[] = [],
  paths: readonly string[] = ["."],
): Promise<ScanResult> {
  const r = await scanFiles(files, args, paths);
  assertVerdict(r, want);
  return r;
}

export const blocked = (rule?: string, object?: string): Blocked => ({
  verdict: "blocked",
  ...(rule === undefined ? {} : { rule }),
  ...(object === undefined ? {} : { object }),
});
export const passes: Passes = { verdict: "passes" };

export interface Case {
  /** The spelling, as the test name shows it. */
  readonly name: string;
  readonly files: Files;
  readonly want: Expect;
  /** The same object in its plain, obvious spelling (blocked cases): it must get the same verdict. */
  readonly plain?: Files;
  readonly args?: readonly string[];
  /** Arguments for the plain counterpart (default: `args`). */
  readonly plainArgs?: readonly string[];
  /** What to scan, relative to the folder (default `.`). */
  readonly paths?: readonly string[];
}

/** One test per case, and one per plain counterpart, so a failure says which of the two slipped. */
export function cases(title: string, list: readonly Case[]): void {
  describe(title, () => {
    for (const c of list) {
      const plain = c.plain;
      if (plain !== undefined) {
        it(`${c.name} [plain spelling]`, async () => {
          await verdict(plain, c.want, c.plainArgs ?? c.args, c.paths);
        });
      }
      it(c.name, async () => {
        await verdict(c.files, c.want, c.args, c.paths);
      });
    }
  });
}
