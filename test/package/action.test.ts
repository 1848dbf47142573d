// The GitHub Action (action.yml): its inputs are wired to the steps, and its two shell steps run here as GitHub runs
// them (bash, the step's env, RUNNER_TEMP, GITHUB_OUTPUT), the checks step with a stand-in `pulumi` that answers
// `preview --json` with a recorded preview, so the preview loop, the scan to SARIF and JSON, the summary and the
// step outputs are real. The package's dist/cli/pr-checks.js is cli/pr-checks.ts here, run through tsx.
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { launchSpec, projectNetworkName, resolveProject } from "../../components/model";
import { MARKDOWN_MARKER } from "../../policy/report/markdown";
import { ROOT } from "./tarball";

interface Step {
  name: string;
  id?: string;
  run?: string;
  uses?: string;
  if?: string;
  env?: Record<string, string>;
  with?: Record<string, string>;
}

const action = parse(readFileSync(join(ROOT, "action.yml"), "utf8")) as {
  inputs: Record<string, { description: string; default?: string }>;
  outputs: Record<string, { value: string }>;
  runs: { using: string; steps: Step[] };
};
const steps = action.runs.steps;
const stepById = (id: string): Step => {
  const s = steps.find((x) => x.id === id);
  if (s === undefined) throw new Error(`action.yml has no step ${id}`);
  return s;
};

/** A folder standing in for the installed package: dist/cli/pr-checks.js runs cli/pr-checks.ts. */
function toolkitShim(dir: string): string {
  const toolkit = join(dir, "toolkit");
  mkdirSync(join(toolkit, "dist", "cli"), { recursive: true });
  writeFileSync(
    join(toolkit, "dist", "cli", "pr-checks.js"),
    [
      `require(${JSON.stringify(join(ROOT, "node_modules", "tsx", "dist", "cjs", "index.cjs"))});`,
      `const { runPrChecks } = require(${JSON.stringify(join(ROOT, "cli", "pr-checks.ts"))});`,
      "runPrChecks(process.argv.slice(2), { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) })",
      "  .then((code) => { process.exitCode = code; });",
      "",
    ].join("\n"),
  );
  return toolkit;
}

/** A `pulumi` that records its arguments and prints a recorded preview for `preview --json`, exiting `exit`. */
function fakePulumi(dir: string, exit: number): string {
  const bin = join(dir, "pulumi");
  writeFileSync(
    bin,
    [
      "#!/usr/bin/env bash",
      `echo "$*" >> "${join(dir, "calls.log")}"`,
      `cat "${join(ROOT, "test", "scan", "fixtures", "pulumi", "preview.json")}"`,
      'echo "policy violations" >&2',
      `exit ${exit}`,
      "",
    ].join("\n"),
  );
  chmodSync(bin, 0o755);
  return bin;
}

/**
 * Runs one `run:` step as GitHub does (`bash -e` in the working directory), with its env's expressions resolved from
 * the inputs and the outputs of earlier steps (`toolkit.outputs.dir`).
 */
function runStep(
  step: Step,
  inputs: Record<string, string>,
  outputs: Record<string, string>,
  env: Record<string, string>,
  cwd: string,
) {
  const stepEnv = Object.fromEntries(
    Object.entries(step.env ?? {}).map(([k, v]) => [
      k,
      v.replace(/\$\{\{ (inputs|steps)\.([\w.-]+) \}\}/g, (_, scope: string, key: string) =>
        scope === "inputs" ? (inputs[key] ?? "") : (outputs[key] ?? ""),
      ),
    ]),
  );
  return spawnSync("bash", ["-e", "-c", step.run ?? ""], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, ...env, ...stepEnv },
    timeout: 240_000,
  });
}

const outputsOf = (file: string): Record<string, string> =>
  Object.fromEntries(
    readFileSync(file, "utf8")
      .split("\n")
      .filter((l) => l.includes("="))
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
  );

describe("action.yml", () => {
  it("is a composite action whose every input is used and every expression names a declared input or step", () => {
    expect(action.runs.using).toBe("composite");
    const text = readFileSync(join(ROOT, "action.yml"), "utf8");
    // `inputs.<name>` appears only in expressions (`${{ }}` and the bare ones of `if:`).
    const used = new Set([...text.matchAll(/\binputs\.([\w-]+)/g)].map((m) => m[1]));
    expect([...used].sort()).toEqual(Object.keys(action.inputs).sort());
    const ids = new Set(steps.map((s) => s.id).filter((id) => id !== undefined));
    for (const m of text.matchAll(/\bsteps\.([\w-]+)\./g)) expect(ids).toContain(m[1]);
    for (const [name, input] of Object.entries(action.inputs)) expect(input.description, name).not.toBe("");
  });

  it("comments with the marker the summary carries, so a second push updates the comment", () => {
    const comment = steps.find((s) => s.uses?.startsWith("actions/github-script@"));
    expect(comment?.with?.script).toContain(`const marker = "${MARKDOWN_MARKER}"`);
    expect(
      steps.find((s) => s.uses?.startsWith("github/codeql-action/upload-sarif@"))?.with?.sarif_file,
    ).toBe(`\${{ steps.checks.outputs.sarif }}`);
  });

  it("finds the project's own toolkit before installing one", () => {
    const dir = mkdtempSync(join(tmpdir(), "sandbox-action-"));
    const out = join(dir, "github-output");
    writeFileSync(out, "");
    // From this repository's root the package resolves to itself, as from a project that installed it.
    const r = runStep(stepById("toolkit"), {}, {}, { GITHUB_OUTPUT: out, RUNNER_TEMP: dir }, ROOT);
    expect(r.status, r.stderr).toBe(0);
    expect(outputsOf(out).dir).toBe(ROOT);
  });

  it("previews every stack with the pack, scans the previews and the paths to SARIF, and writes the summary", () => {
    const dir = mkdtempSync(join(tmpdir(), "sandbox-action-"));
    const out = join(dir, "github-output");
    const summary = join(dir, "step-summary");
    writeFileSync(out, "");
    writeFileSync(summary, "");
    const project = join(dir, "project");
    mkdirSync(join(project, "k8s"), { recursive: true });
    writeFileSync(
      join(project, "k8s", "pod.yaml"),
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: loose\nspec:\n  containers:\n    - name: c\n      image: busybox\n",
    );
    const inputs = { stacks: "dev staging", paths: "k8s/", config: "", category: "sandbox-projects-scan" };
    const r = runStep(
      stepById("checks"),
      inputs,
      { "toolkit.outputs.dir": toolkitShim(dir) },
      { GITHUB_OUTPUT: out, GITHUB_STEP_SUMMARY: summary, RUNNER_TEMP: dir, PULUMI: fakePulumi(dir, 255) },
      project,
    );
    // The step fails (a preview and the scan failed); the workflow goes on to upload and comment (continue-on-error).
    expect(r.status, r.stderr).toBe(1);
    const calls = readFileSync(join(dir, "calls.log"), "utf8").trim().split("\n");
    expect(calls).toHaveLength(2);
    for (const [i, s] of ["dev", "staging"].entries()) {
      expect(calls[i]).toMatch(
        new RegExp(`^preview --stack ${s} --policy-pack \\S+ --json --non-interactive$`),
      );
    }
    // Run from a checkout, the pack is the checkout's policy-pack folder (its run-pack: no Node analyzer here).
    expect(calls[0]).toContain(join(ROOT, "policy-pack", "run-pack"));
    const o = outputsOf(out);
    expect(o.result).toBe("failed");
    const sarif = JSON.parse(readFileSync(o.sarif ?? "", "utf8"));
    expect(sarif.runs[0].automationDetails.id).toBe("sandbox-projects-scan");
    const files = new Set(
      (
        sarif.runs[0].results as {
          locations: { physicalLocation: { artifactLocation: { uri: string } } }[];
        }[]
      ).map((x) => x.locations[0]?.physicalLocation.artifactLocation.uri),
    );
    expect(files).toContain("k8s/pod.yaml");
    expect([...files].some((f) => f?.endsWith("preview-dev.json"))).toBe(true);
    const md = readFileSync(o.summary ?? "", "utf8");
    expect(md.startsWith(MARKDOWN_MARKER)).toBe(true);
    expect(md).toMatch(/\| preview dev \| ❌ failed \| pulumi preview exited 255/);
    expect(md).toMatch(/\| scan \| ❌ failed \|/);
    expect(readFileSync(summary, "utf8")).toBe(md);
  });

  it("passes when the previews pass and nothing mandatory is found, and names what is missing otherwise", () => {
    const dir = mkdtempSync(join(tmpdir(), "sandbox-action-"));
    const out = join(dir, "github-output");
    writeFileSync(out, "");
    const steps = { "toolkit.outputs.dir": toolkitShim(dir) };
    const base = { GITHUB_OUTPUT: out, RUNNER_TEMP: dir };
    // No stacks and no paths: bad input, nothing run.
    const none = runStep(stepById("checks"), { stacks: "", paths: "", category: "c" }, steps, base, dir);
    expect(none.status).toBe(2);
    expect(none.stderr).toContain("name stacks to preview (--stacks) or paths to scan");
    // Stacks named and no Pulumi CLI: the checks fail rather than skip the previews.
    const noCli = runStep(
      stepById("checks"),
      { stacks: "dev", paths: "", category: "c" },
      steps,
      { ...base, PULUMI: "", PATH: [dirname(process.execPath), "/usr/bin", "/bin"].join(":") },
      dir,
    );
    expect(noCli.status, noCli.stderr).toBe(3);
    expect(noCli.stderr).toContain("preview: failed (no Pulumi CLI");
    // A launch spec of the toolkit's own hardened template passes every mandatory rule.
    mkdirSync(join(dir, "specs"));
    const project = resolveProject({
      name: "clean",
      budget: { monthlyCapUsd: 10 },
      templates: { default: { image: "sandbox-busybox:1" } },
    });
    writeFileSync(
      join(dir, "specs", "default.launch.json"),
      JSON.stringify(launchSpec(project, "default", projectNetworkName("clean"))),
    );
    const clean = runStep(
      stepById("checks"),
      { stacks: "", paths: "specs/", category: "c" },
      steps,
      base,
      dir,
    );
    expect(clean.status, clean.stderr).toBe(0);
    expect(outputsOf(out).result).toBe("passed");
    expect(existsSync(join(dir, "sandbox-pr-checks", "scan.sarif"))).toBe(true);
  });
});
