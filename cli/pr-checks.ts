/**
 * A team's pull-request checks, as the GitHub Action in this repository's action.yml runs them from the installed
 * package (`node <package>/dist/cli/pr-checks.js`), and as a person can run them from a project:
 *
 *   1. preview  `pulumi preview --stack <s> --policy-pack <the package's pack> --json` of each stack named, on the
 *               project's own backend (nothing is created: a stack that does not exist fails its step)
 *   2. scan     the pack's rules over those previews and the paths given, to SARIF (for code scanning) and JSON
 *   3. summary  Markdown for the pull request comment and the job summary
 *
 * usage: pr-checks [--stacks "<stack> ..."] [--config <file>] [--out <dir>] [--require-preview] [--category <id>]
 *                  [path...]
 * environment: PULUMI (the Pulumi CLI; default `pulumi` on PATH), GITHUB_STEP_SUMMARY and GITHUB_OUTPUT (when set:
 * the summary is appended to the first; `sarif`, `json`, `summary` and `result` are written to the second).
 * Writes in --out (default .sandbox/pr-checks): preview-<stack>.json and .log, scan.sarif, scan.json, summary.md.
 * Exit codes: 0 every step passed; 1 a step failed (a preview, or a mandatory rule); 2 bad input; 3 --require-preview
 * and no Pulumi CLI.
 */
import { spawnSync } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";
import { type CheckStep, formatMarkdown } from "../policy/report/markdown";
import type { ScanReport } from "../policy/report/model";
import { runScan } from "./scan";

interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
}

interface Options {
  stacks: string[];
  config?: string;
  out: string;
  requirePreview: boolean;
  category?: string;
  paths: string[];
}

export const PR_CHECKS_USAGE =
  'usage: pr-checks [--stacks "<stack> ..."] [--config <file>] [--out <dir>] [--require-preview] [--category <id>] [path...]';

function parseArgs(argv: readonly string[]): Options | string {
  const o: Options = { stacks: [], out: ".sandbox/pr-checks", requirePreview: false, paths: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? "";
    const value = (): string | undefined => argv[++i];
    switch (a) {
      case "--stacks":
        o.stacks = (value() ?? "").split(/\s+/).filter((s) => s !== "");
        break;
      case "--config":
      case "--out":
      case "--category": {
        const v = value();
        if (v === undefined || v === "") return `${a} needs a value`;
        if (a === "--config") o.config = v;
        else if (a === "--out") o.out = v;
        else o.category = v;
        break;
      }
      case "--require-preview":
        o.requirePreview = true;
        break;
      default:
        if (a.startsWith("--")) return `unknown option ${a}`;
        o.paths.push(a);
    }
  }
  return o;
}

/** The first executable called `name` on `path`, or undefined. */
function onPath(name: string, path: string): string | undefined {
  return path
    .split(delimiter)
    .filter((d) => d !== "")
    .map((d) => join(d, name))
    .find((p) => existsSync(p));
}

/**
 * The pack to attach: the package's policy-pack folder when the CLI can run a Node pack itself (its Node language
 * host or policy analyzer is installed beside it or on PATH), else the folder's run-pack launcher.
 */
export function packFor(pulumi: string, env: NodeJS.ProcessEnv): string {
  // Compiled into the package this file is dist/cli/pr-checks.js; in a checkout, cli/pr-checks.ts.
  const folder =
    [resolve(__dirname, "..", "..", "policy-pack"), resolve(__dirname, "..", "policy-pack")].find((d) =>
      existsSync(join(d, "PulumiPolicy.yaml")),
    ) ?? resolve(__dirname, "..", "..", "policy-pack");
  const nodeHost = ["pulumi-language-nodejs", "pulumi-analyzer-policy"].some(
    (name) => existsSync(join(dirname(pulumi), name)) || onPath(name, env.PATH ?? "") !== undefined,
  );
  return nodeHost ? folder : join(folder, "run-pack");
}

/** Runs the checks; returns the exit code. Never throws for bad input or a failing step. */
export async function runPrChecks(
  argv: readonly string[],
  io: Io,
  cwd: string = process.cwd(),
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const opts = parseArgs(argv);
  if (typeof opts === "string") {
    io.err(`${PR_CHECKS_USAGE}\n\n${opts}\n`);
    return 2;
  }
  if (opts.stacks.length === 0 && opts.paths.length === 0) {
    io.err(`${PR_CHECKS_USAGE}\n\nname stacks to preview (--stacks) or paths to scan, or both\n`);
    return 2;
  }
  const out = resolve(cwd, opts.out);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const steps: CheckStep[] = [];
  const step = (name: string, status: CheckStep["status"], detail?: string) => {
    steps.push({ name, status, ...(detail === undefined ? {} : { detail }) });
    io.err(`pr-checks: ${name}: ${status}${detail === undefined ? "" : ` (${detail})`}\n`);
  };

  // 1. preview every stack named, with the pack
  const previews: string[] = [];
  const pulumi = env.PULUMI || onPath("pulumi", env.PATH ?? "");
  if (opts.stacks.length === 0) step("preview", "skipped", "no stacks named");
  else if (pulumi === undefined) {
    if (opts.requirePreview) {
      step("preview", "failed", "no Pulumi CLI ($PULUMI or PATH)");
      return 3;
    }
    step("preview", "skipped", "no Pulumi CLI on this machine");
  } else {
    const pack = packFor(pulumi, env);
    for (const s of opts.stacks) {
      const json = join(out, `preview-${s}.json`);
      const args = ["preview", "--stack", s, "--policy-pack", pack, "--json", "--non-interactive"];
      if (opts.config !== undefined) args.push("--policy-pack-config", resolve(cwd, opts.config));
      const r = spawnSync(pulumi, args, { cwd, env, encoding: "utf8", maxBuffer: 1 << 28 });
      writeFileSync(json, r.stdout ?? "");
      writeFileSync(join(out, `preview-${s}.log`), `${r.stderr ?? ""}${r.error ? String(r.error) : ""}`);
      try {
        if (Array.isArray((JSON.parse(r.stdout) as { steps?: unknown }).steps)) previews.push(json);
      } catch {
        // not a preview document: the step's log says why
      }
      if (r.status === 0) step(`preview ${s}`, "passed", "pulumi preview --policy-pack");
      else step(`preview ${s}`, "failed", `pulumi preview exited ${r.status}; see preview-${s}.log`);
    }
  }

  // 2. scan the previews and the paths given
  const targets = [...previews, ...opts.paths];
  const common = [
    ...(opts.config === undefined ? [] : ["--config", opts.config]),
    ...(opts.category === undefined ? [] : ["--category", opts.category]),
    "--ci",
  ];
  const sarif = join(out, "scan.sarif");
  const jsonReport = join(out, "scan.json");
  let scanCode = 0;
  if (targets.length === 0) step("scan", "skipped", "no preview produced a plan to scan");
  else {
    // Each run prints its verdict on stderr (the report goes to the file): the SARIF run's is the step's detail.
    const verdict: string[] = [];
    const quiet = (err: (t: string) => void): Io => ({ out: () => undefined, err });
    scanCode = await runScan(
      ["--format", "sarif", "--output", sarif, ...common, "--", ...targets],
      quiet((t) => void verdict.push(t)),
      { cwd, env },
    );
    await runScan(
      ["--format", "json", "--output", jsonReport, ...common, "--", ...targets],
      quiet(() => undefined),
      { cwd, env },
    );
    const last = verdict.join("").trim().split("\n").at(-1) ?? "";
    if (scanCode === 0) step("scan", "passed", last);
    else if (scanCode === 1) step("scan", "failed", last);
    else step("scan", "failed", `bad input: ${last}`);
  }

  // 3. summary
  const report = existsSync(jsonReport)
    ? (JSON.parse(readFileSync(jsonReport, "utf8")) as ScanReport)
    : undefined;
  const summary = join(out, "summary.md");
  writeFileSync(summary, report === undefined ? stepsOnly(steps) : formatMarkdown(report, steps));
  if (env.GITHUB_STEP_SUMMARY) appendFileSync(env.GITHUB_STEP_SUMMARY, readFileSync(summary, "utf8"));
  const failed = steps.some((s) => s.status === "failed");
  if (env.GITHUB_OUTPUT) {
    const lines = [
      ...(existsSync(sarif) ? [`sarif=${sarif}`, `json=${jsonReport}`] : []),
      `summary=${summary}`,
      `result=${failed ? "failed" : "passed"}`,
    ];
    appendFileSync(env.GITHUB_OUTPUT, `${lines.join("\n")}\n`);
  }
  io.err(`pr-checks: wrote ${out}\n`);
  if (scanCode >= 2) return 2;
  return failed ? 1 : 0;
}

/** The summary when nothing was scanned: the steps alone, under the same marker the comment is found by. */
function stepsOnly(steps: readonly CheckStep[]): string {
  const empty: ScanReport = {
    tool: { name: "sandbox-projects-scan", version: "", pack: "sandbox-projects" },
    inputs: [],
    rules: [],
    resources: [],
    findings: [],
    skipped: [],
    errors: [],
    assumptions: [],
    exemptions: [],
    summary: { resources: 0, mandatory: 0, advisory: 0, exempted: 0, unchecked: 0, skipped: 0, errors: 0 },
    exitCode: 0,
  };
  return formatMarkdown(empty, steps);
}

if (require.main === module) {
  runPrChecks(process.argv.slice(2), {
    out: (t) => process.stdout.write(t),
    err: (t) => process.stderr.write(t),
  }).then((code) => {
    process.exitCode = code;
  });
}
