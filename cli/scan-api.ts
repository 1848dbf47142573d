/**
 * `scan` as a function: the same command `sandbox-scan` runs (the same readers, rules, config, exemptions and
 * verdict), returning the typed report instead of printing it.
 *
 *   const { exitCode, report } = await scan({ paths: ["k8s/", "compose.yaml"], preset: "baseline" });
 *   for (const f of report.findings) console.log(f.ruleId, f.resource.name, f.message);
 */
import type { Preset } from "../policy/presets";
import { formatMarkdown } from "../policy/report/markdown";
import type { ScanReport } from "../policy/report/model";
import { formatSarif } from "../policy/report/sarif";
import { formatText } from "../policy/report/text";
import { runScan, SCAN_USAGE } from "./scan";

export type { CheckStep } from "../policy/report/markdown";
export type { ReportFinding, ScanReport } from "../policy/report/model";
export { formatMarkdown, formatSarif, formatText };

/** What to scan and how; every field has the meaning of the `sandbox-scan` option of the same name. */
export interface ScanOptions {
  /** Files and folders to read (Kubernetes YAML, Compose files, Pulumi previews and state, launch specs). */
  readonly paths: readonly string[];
  /** Where relative paths are read from and reported against (default: the process's working folder). */
  readonly cwd?: string;
  /** A pack config file (levels, settings, exemptions), as `--config` takes it. */
  readonly config?: string;
  /** Start every rule's level from a preset; the config's own levels still win. */
  readonly preset?: Preset;
  /**
   * Whether an object that may create workloads the rules cannot read (a Helm release, a patch...) fails the scan.
   * Default: as the CLI, on when `CI=true` is in `env`.
   */
  readonly failOnUnjudged?: boolean;
  /**
   * As `--ci`: a mandatory rule's check that could not be made (a preview unknown in a field it reads) fails the
   * scan instead of being a note (the pack judges the value at `pulumi up`; a gate on a preview never does).
   */
  readonly ci?: boolean;
  /** The environment Compose files are interpolated from (default: this process's). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** The verdict and the report: `exitCode` 0 when no mandatory rule fails, 1 when one does, 2 for unreadable input. */
export interface ScanResult {
  readonly exitCode: 0 | 1 | 2;
  readonly report: ScanReport;
}

/** Input the scan refused before judging anything: a bad option, an unreadable config file, no paths. */
export class ScanUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ScanUsageError";
  }
}

/**
 * Scans files and folders with the policy pack's rules. Resolves with the report, also when a rule fails or an input
 * cannot be read (both are in the report); rejects with {@link ScanUsageError} when nothing could be scanned.
 */
export async function scan(options: ScanOptions): Promise<ScanResult> {
  if (options.paths.length === 0) throw new ScanUsageError("name at least one file or folder to scan");
  const argv = [
    "--format",
    "json",
    ...(options.config === undefined ? [] : ["--config", options.config]),
    ...(options.preset === undefined ? [] : ["--preset", options.preset]),
    ...(options.ci === true ? ["--ci"] : []),
    ...(options.failOnUnjudged === undefined
      ? []
      : [options.failOnUnjudged ? "--fail-on-unjudged" : "--no-fail-on-unjudged"]),
    "--",
    ...options.paths,
  ];
  const out: string[] = [];
  const err: string[] = [];
  const io = { out: (t: string) => void out.push(t), err: (t: string) => void err.push(t) };
  await runScan(argv, io, {
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    ...(options.env === undefined ? {} : { env: options.env }),
  });
  const text = out.join("");
  if (text.trim() === "")
    throw new ScanUsageError(err.join("").replace(SCAN_USAGE, "").trim() || "scan failed");
  const report = JSON.parse(text) as ScanReport;
  return { exitCode: report.exitCode, report };
}
