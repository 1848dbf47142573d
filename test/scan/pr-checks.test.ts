// toolchain/pr-checks.sh, the pull request workflow's steps as one script, run here without its test step (the
// suite cannot run itself). A stand-in `pulumi` answers `stack select` and `preview --json` with a recorded preview,
// so the preview loop, the scan of its JSON and of every stack's launch specs, the SARIF and the summary are real.
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { MARKDOWN_MARKER } from "../../policy/report/markdown";
import { FIXTURES, ROOT, tempFiles } from "./helpers";

const SCRIPT = join(ROOT, "toolchain", "pr-checks.sh");
const STACKS = ["dev", "prod", "staging"];

function run(args: string[], env: NodeJS.ProcessEnv = {}): { status: number | null; stderr: string } {
  const r = spawnSync("bash", [SCRIPT, ...args], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, GITHUB_STEP_SUMMARY: "", ...env },
    timeout: 240_000,
  });
  return { status: r.status, stderr: r.stderr };
}

/** A `pulumi` that records its arguments and prints a recorded preview for `preview --json`. */
function fakePulumi(dir: string, previewExit: number): string {
  const bin = join(dir, "pulumi");
  writeFileSync(
    bin,
    [
      "#!/usr/bin/env bash",
      `echo "$*" >> "${join(dir, "calls.log")}"`,
      'case "$1" in',
      '  stack) echo "Created stack"; exit 0 ;;',
      `  preview) cat "${join(ROOT, FIXTURES, "pulumi", "preview.json")}"; echo "policy violations" >&2; exit ${previewExit} ;;`,
      "esac",
      "exit 0",
      "",
    ].join("\n"),
  );
  chmodSync(bin, 0o755);
  return bin;
}

describe("toolchain/pr-checks.sh", () => {
  it("previews every stack with the policy pack, scans the previews and launch specs to SARIF, and writes the summary", () => {
    const dir = tempFiles({});
    const out = join(dir, "out");
    const r = run(["--skip-tests", "--out", out], { PULUMI: fakePulumi(dir, 255), PR_CHECKS_STACKS: "" });
    expect(r.status, r.stderr).toBe(1);
    const calls = readFileSync(join(dir, "calls.log"), "utf8").trim().split("\n");
    for (const s of STACKS) {
      expect(calls).toContain(`stack select --create --non-interactive ${s}`);
      expect(calls.find((c) => c.startsWith(`preview --stack ${s} --policy-pack `))).toMatch(
        / --json --non-interactive$/,
      );
    }
    const steps = readFileSync(join(out, "steps.tsv"), "utf8");
    expect(steps).toMatch(/^tests\tskipped\t--skip-tests$/m);
    for (const s of STACKS)
      expect(steps).toMatch(new RegExp(`^preview ${s}\\tfailed\\tpulumi preview exited 255`, "m"));
    expect(steps).toMatch(/^scan\tfailed\t.*FAILED: a mandatory rule fails$/m);

    const sarif = JSON.parse(readFileSync(join(out, "scan.sarif"), "utf8"));
    expect(sarif.version).toBe("2.1.0");
    const results = sarif.runs[0].results as {
      locations: { logicalLocations: { fullyQualifiedName: string }[] }[];
    }[];
    const urns = new Set(results.map((x) => x.locations[0]?.logicalLocations[0]?.fullyQualifiedName));
    expect(urns).toContain("urn:pulumi:dev::sandbox::docker:index/container:Container::loose");
    const report = JSON.parse(readFileSync(join(out, "scan.json"), "utf8"));
    // Every template of every stack, as the launcher would start it, plus the three recorded previews.
    const launch = report.resources.filter((x: { format: string }) => x.format === "launch-spec");
    expect(launch.length).toBeGreaterThanOrEqual(STACKS.length);
    expect(
      report.findings.filter((f: { resource: { format: string } }) => f.resource.format === "launch-spec"),
    ).toEqual([]);
    expect(report.inputs.filter((i: string) => i.endsWith(".json") && i.includes("preview-"))).toHaveLength(
      3,
    );

    const summary = readFileSync(join(out, "summary.md"), "utf8");
    expect(summary).toContain("<!-- sandbox-projects-pr-checks -->");
    expect(summary).toContain("## Sandbox policy checks: ❌ failed");
    expect(summary).toContain("| preview dev | ❌ failed |");
    expect(summary).toContain("`sandbox-disallow-host-namespaces`");
  }, 240_000);

  it("passes when every step passes, scanning the paths it is given, and appends the summary to the job summary", () => {
    const dir = tempFiles({});
    const out = join(dir, "out");
    const jobSummary = join(dir, "step-summary.md");
    const r = run(["--skip-tests", "--out", out, `${FIXTURES}/kubernetes/task-job.yaml`], {
      PULUMI: fakePulumi(dir, 0),
      PR_CHECKS_STACKS: "dev",
      GITHUB_STEP_SUMMARY: jobSummary,
    });
    // The recorded preview still holds violations: the scan of it fails though the stand-in preview "passed".
    expect(r.status, r.stderr).toBe(1);
    expect(readFileSync(join(out, "steps.tsv"), "utf8")).toMatch(/^preview dev\tpassed/m);
    const clean = run(
      ["--skip-tests", "--skip-preview", "--out", out, `${FIXTURES}/kubernetes/task-job.yaml`],
      {
        PR_CHECKS_STACKS: "dev",
        GITHUB_STEP_SUMMARY: jobSummary,
      },
    );
    expect(clean.status, clean.stderr).toBe(0);
    const summary = readFileSync(join(out, "summary.md"), "utf8");
    expect(summary).toContain("## Sandbox policy checks: ✅ passed");
    expect(summary).toContain("| preview | ⏭️ skipped | --skip-preview |");
    expect(readFileSync(jobSummary, "utf8")).toContain(summary);
  }, 240_000);

  it("fails with exit 3 when the previews are required and no Pulumi CLI is there, and 2 on unreadable input", () => {
    const dir = tempFiles({ "broken.yaml": "a: [\n" });
    const noCli = run(["--skip-tests", "--require-preview", "--out", join(dir, "a")], {
      PULUMI: join(dir, "no-such-pulumi"),
    });
    expect(noCli.status).toBe(3);
    expect(noCli.stderr).toContain("preview: failed (no Pulumi CLI");
    const bad = run(["--skip-tests", "--skip-preview", "--out", join(dir, "b"), join(dir, "broken.yaml")], {
      PR_CHECKS_STACKS: "dev",
    });
    expect(bad.status).toBe(2);
    expect(existsSync(join(dir, "b", "summary.md"))).toBe(true);
  }, 240_000);
});

describe(".github/workflows/pr-checks.yml", () => {
  interface Step {
    name?: string;
    uses?: string;
    run?: string;
    if?: string;
    with?: Record<string, string>;
  }
  const workflow = parse(readFileSync(join(ROOT, ".github", "workflows", "pr-checks.yml"), "utf8")) as {
    on: Record<string, unknown>;
    permissions: Record<string, string>;
    env: Record<string, string>;
    jobs: { checks: { steps: Step[] } };
  };
  const steps = workflow.jobs.checks.steps;
  const out = workflow.env.PR_CHECKS_OUT ?? "";

  it("runs on pull requests with the permissions code scanning and the comment need", () => {
    expect(Object.keys(workflow.on)).toContain("pull_request");
    expect(workflow.permissions).toMatchObject({ "security-events": "write", "pull-requests": "write" });
  });

  it("installs, installs the official Pulumi CLI, then runs the project script with previews required", () => {
    const at = (p: (s: Step) => boolean) => steps.findIndex(p);
    const install = at((s) => s.run === "npm ci --no-audit --no-fund");
    const pulumi = at((s) => s.uses?.startsWith("pulumi/actions@") === true);
    const checks = at((s) => s.run?.includes("bash toolchain/pr-checks.sh --require-preview") === true);
    expect(install).toBeGreaterThan(-1);
    expect(pulumi).toBeGreaterThan(install);
    expect(checks).toBeGreaterThan(pulumi);
    // The manifest's version (test/cli/toolchain-manifest.test.ts checks the workflow loads it).
    expect(steps[pulumi]?.with?.["pulumi-version"]).toContain("env.PULUMI_VERSION");
    expect(steps[checks]?.run).toContain('--out "$PR_CHECKS_OUT"');
  });

  it("uploads the SARIF the script writes and comments with the summary it writes", () => {
    const upload = steps.find((s) => s.uses?.startsWith("github/codeql-action/upload-sarif@") === true);
    expect(upload?.with?.sarif_file).toBe(`${out}/scan.sarif`);
    expect(upload?.if).toContain(`hashFiles('${out}/scan.sarif')`);
    const comment = steps.find((s) => s.uses?.startsWith("actions/github-script@") === true);
    expect(comment?.with?.script).toContain(`"${out}/summary.md"`);
    expect(comment?.with?.script).toContain(MARKDOWN_MARKER);
    expect(steps.at(-1)?.if).toBe("steps.checks.outcome == 'failure'");
  });
});
