// The toolchain manifest (toolchain/versions.env): both of its readers, and every place that must agree with it
// without reading it (package.json, the installed SDKs, the Go oracle that stands in for the CLI, the README).
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { PROVIDER_VERSION } from "../../providers/docker/provider";
import {
  cachedToolPath,
  MANIFEST_KEYS,
  parseManifest,
  TOOLCHAIN,
  toolCacheDir,
} from "../../toolchain/manifest";
import { cachedPulumiPath, compareVersions } from "../../toolchain/pulumi";

const repo = join(__dirname, "../..");
const read = (path: string) => readFileSync(join(repo, path), "utf8");
const packageJson = JSON.parse(read("package.json")) as Record<string, Record<string, string> | undefined>;
/** The version package.json pins for the project's own installs and tests, in whichever dependency list holds it. */
const pinned = (pkg: string) => packageJson.dependencies?.[pkg] ?? packageJson.devDependencies?.[pkg];
const installed = (pkg: string) =>
  JSON.parse(read(join("node_modules", pkg, "package.json"))) as {
    version: string;
    pulumi?: { version: string };
  };

/** Runs `script` in bash with toolchain/manifest.sh (from `dir`) sourced; returns stdout, or throws with stderr. */
function bashWithManifest(
  script: string,
  env: NodeJS.ProcessEnv = process.env,
  dir = join(repo, "toolchain"),
) {
  const r = spawnSync("bash", ["-c", `set -euo pipefail; . "${dir}/manifest.sh"; ${script}`], {
    encoding: "utf8",
    env,
  });
  if (r.status !== 0) throw new Error(`bash exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

describe("the manifest's TypeScript reader", () => {
  const valid = MANIFEST_KEYS.map((k) => `${k}=1.0.0`).join("\n");

  it("reads KEY=VALUE lines, skipping comments and blank lines", () => {
    const m = parseManifest(`# a comment\n\n${valid}\n`, "m");
    expect(Object.keys(m).sort()).toEqual([...MANIFEST_KEYS].sort());
    expect(m.PULUMI_VERSION).toBe("1.0.0");
  });

  it.each([
    ["a quoted value", 'PULUMI_VERSION="3.0.0"', "not a KEY=VALUE line"],
    ["a space", "PULUMI_VERSION=3.0.0 # trailing", "not a KEY=VALUE line"],
    ["an expansion", "PULUMI_VERSION=$HOME", "not a KEY=VALUE line"],
    ["an empty value", "PULUMI_VERSION=", "not a KEY=VALUE line"],
    ["a CRLF line end", "PULUMI_VERSION=3.0.0\r", "not a KEY=VALUE line"],
    ["an unknown key", "PATH=/bin", "unknown key PATH"],
    ["a repeated key", "PULUMI_VERSION=3.0.0", "PULUMI_VERSION is set twice"],
  ])("refuses %s", (_what, line, message) => {
    expect(() => parseManifest(`${valid}\n${line}\n`, "m")).toThrow(message);
  });

  it("refuses a manifest that lacks a key", () => {
    expect(() => parseManifest(valid.replace(/^KUBE_VERSION=.*$/m, ""), "m")).toThrow(
      "m: missing KUBE_VERSION",
    );
  });
});

describe("the manifest's bash reader (toolchain/manifest.sh)", () => {
  it("gives every key the value the TypeScript reader gives", () => {
    const out = bashWithManifest(
      `for k in ${MANIFEST_KEYS.join(" ")}; do printf '%s=%s\\n' "$k" "\${!k}"; done`,
    );
    expect(parseManifest(out, "bash")).toEqual(TOOLCHAIN);
  });

  it("lays the cache out as the TypeScript does, and setup.sh prints those folders", () => {
    const cache = mkdtempSync(join(tmpdir(), "sandbox-manifest-"));
    const env = { ...process.env, XDG_CACHE_HOME: cache };
    const folders = [
      dirname(cachedPulumiPath(env)),
      dirname(cachedToolPath(TOOLCHAIN.K8S_PLUGIN_CACHE_FOLDER, TOOLCHAIN.K8S_PLUGIN_VERSION, "x", env)),
      dirname(cachedToolPath(TOOLCHAIN.KUBE_CACHE_FOLDER, TOOLCHAIN.KUBE_VERSION, "x", env)),
      dirname(cachedToolPath(TOOLCHAIN.RUNSC_CACHE_FOLDER, TOOLCHAIN.GVISOR_VERSION, "x", env)),
    ];
    expect(folders[0]).toBe(
      join(cache, TOOLCHAIN.CACHE_FOLDER, "pulumi", `v${TOOLCHAIN.PULUMI_VERSION}`, "bin"),
    );
    const bash = bashWithManifest(
      [
        'echo "$cache"',
        'cached_bin_dir "$PULUMI_CACHE_FOLDER" "$PULUMI_VERSION"',
        'cached_bin_dir "$K8S_PLUGIN_CACHE_FOLDER" "$K8S_PLUGIN_VERSION"',
        'cached_bin_dir "$KUBE_CACHE_FOLDER" "$KUBE_VERSION"',
        'cached_bin_dir "$RUNSC_CACHE_FOLDER" "$GVISOR_VERSION"',
      ].join("; "),
      env,
    );
    expect(bash).toBe(`${[toolCacheDir(env), ...folders].join("\n")}\n`);
    const printed = spawnSync("bash", [join(repo, "toolchain", "setup.sh"), "--print-path"], {
      env,
      encoding: "utf8",
    });
    expect(printed.status, printed.stderr).toBe(0);
    expect(printed.stdout).toBe(`${folders.join("\n")}\n`);
  });

  it("refuses a line that is not KEY=VALUE, and names it", () => {
    const dir = mkdtempSync(join(tmpdir(), "sandbox-manifest-"));
    copyFileSync(join(repo, "toolchain", "manifest.sh"), join(dir, "manifest.sh"));
    writeFileSync(join(dir, "versions.env"), `${read("toolchain/versions.env")}PULUMI_VERSION="3.0.0"\n`);
    expect(() => bashWithManifest("echo read", process.env, dir)).toThrow(
      `${join(dir, "versions.env")}: not a KEY=VALUE line: PULUMI_VERSION="3.0.0"`,
    );
  });
});

describe("no copy of the manifest's versions", () => {
  const versionKeys = MANIFEST_KEYS.filter((k) => k.endsWith("_VERSION"));
  // The files that read the manifest: none of them may write one of its versions again.
  const readers = [
    ...readdirSync(join(repo, "toolchain"), { recursive: true, encoding: "utf8" })
      .filter((f) => /\.(sh|ts)$/.test(f))
      .map((f) => join("toolchain", f)),
    "test/engine/toolchain.ts",
    ...readdirSync(join(repo, ".github", "workflows")).map((f) => join(".github", "workflows", f)),
  ];

  it.each(readers)("%s", (file) => {
    const text = read(file);
    for (const key of versionKeys) expect(text, `${file} writes ${key}`).not.toContain(TOOLCHAIN[key]);
  });

  it("the workflow takes the manifest into the job's environment before the Pulumi CLI step uses it", () => {
    const workflow = parse(read(".github/workflows/pr-checks.yml")) as {
      env: Record<string, string>;
      jobs: { checks: { steps: { run?: string; uses?: string; with?: Record<string, string> }[] } };
    };
    const steps = workflow.jobs.checks.steps;
    const load = steps.findIndex((s) => s.run?.includes("toolchain/versions.env") === true);
    const pulumi = steps.findIndex((s) => s.uses?.startsWith("pulumi/actions@") === true);
    expect(load).toBeGreaterThan(-1);
    expect(pulumi).toBeGreaterThan(load);
    expect(steps[pulumi]?.with?.["pulumi-version"]).toBe(`\${{ env.PULUMI_VERSION }}`);
    expect(Object.keys(workflow.env)).not.toContain("PULUMI_VERSION");
    // The step's own command, run as the runner would: every key lands in $GITHUB_ENV as the manifest says.
    const dir = mkdtempSync(join(tmpdir(), "sandbox-manifest-"));
    const githubEnv = join(dir, "github-env");
    const r = spawnSync("bash", ["-e", "-c", steps[load]?.run ?? ""], {
      cwd: repo,
      env: { ...process.env, GITHUB_ENV: githubEnv },
      encoding: "utf8",
    });
    expect(r.status, r.stderr).toBe(0);
    expect(parseManifest(readFileSync(githubEnv, "utf8"), "GITHUB_ENV")).toEqual(TOOLCHAIN);
  });
});

describe("package.json agrees with the manifest where it must", () => {
  it("@pulumi/kubernetes is the plugin version setup.sh builds and installs: the SDK asks the engine for exactly it", () => {
    expect(pinned("@pulumi/kubernetes")).toBe(TOOLCHAIN.K8S_PLUGIN_VERSION);
    expect(installed("@pulumi/kubernetes").pulumi?.version).toBe(TOOLCHAIN.K8S_PLUGIN_VERSION);
  });

  it("@pulumi/pulumi's Automation API accepts the CLI the toolkit builds and the oldest it accepts", () => {
    // The Automation API refuses a CLI older than its minimum or of a newer major version. The SDK's own version
    // need not be the CLI's: nothing pairs them.
    const { minimumVersion } = createRequire(__filename)("@pulumi/pulumi/automation/minimumVersion") as {
      minimumVersion: { major: number; version: string };
    };
    expect(compareVersions(minimumVersion.version, TOOLCHAIN.MIN_PULUMI_VERSION)).toBeLessThanOrEqual(0);
    expect(compareVersions(TOOLCHAIN.MIN_PULUMI_VERSION, TOOLCHAIN.PULUMI_VERSION)).toBeLessThanOrEqual(0);
    expect(TOOLCHAIN.PULUMI_VERSION.split(".")[0]).toBe(String(minimumVersion.major));
    expect(installed("@pulumi/pulumi").version).toBe(pinned("@pulumi/pulumi"));
  });

  it("@pulumi/docker is the version the toolkit's own Docker provider speaks and reports", () => {
    expect(pinned("@pulumi/docker")).toBe(PROVIDER_VERSION);
    expect(installed("@pulumi/docker").pulumi?.version).toBe(PROVIDER_VERSION);
  });
});

describe("the Go oracles agree with the manifest", () => {
  const oracles = readdirSync(join(repo, "test", "oracles"));

  it("the policy-config oracle is the reader of the Pulumi CLI the toolkit builds", () => {
    const gomod = read("test/oracles/packconfig/go.mod");
    expect(gomod).toContain(`github.com/pulumi/pulumi/pkg/v3 v${TOOLCHAIN.PULUMI_VERSION}\n`);
    expect(gomod).toContain(`github.com/pulumi/pulumi/sdk/v3 v${TOOLCHAIN.PULUMI_VERSION}\n`);
  });

  it.each(oracles)("%s builds with the oldest Go the set-up accepts", (oracle) => {
    const go = /^go (\S+)$/m.exec(read(join("test", "oracles", oracle, "go.mod")))?.[1];
    expect(go).toBeDefined();
    expect(compareVersions(go ?? "", TOOLCHAIN.MIN_GO_VERSION)).toBeLessThanOrEqual(0);
  });
});

describe("the toolchain page's prose agrees with the manifest", () => {
  const readme = read(join("docs", "toolchain.md"));
  // Each phrase of the README that names a manifest value, and that value.
  const phrases: [RegExp, string][] = [
    [/`pulumi` on\s+your PATH when it is v(\S+) or later/g, TOOLCHAIN.MIN_PULUMI_VERSION],
    [/builds the Pulumi CLI v(\d\S*?),/g, TOOLCHAIN.PULUMI_VERSION],
    [/the Kubernetes resource plugin\s+(\d\S*)/g, TOOLCHAIN.K8S_PLUGIN_VERSION],
    [/kube-apiserver and kube-controller-manager v(\d\S*)/g, TOOLCHAIN.KUBE_VERSION],
    [/need Go (\S+) or later/g, TOOLCHAIN.MIN_GO_VERSION],
    [/kube-router v(\d[\d.]*\d)/g, TOOLCHAIN.KUBE_ROUTER_VERSION],
    [/kwok v(\d[\d.]*\d)/g, TOOLCHAIN.KWOK_VERSION],
    [/^\| Pulumi CLI v(\S+) \|/gm, TOOLCHAIN.PULUMI_VERSION],
    [/^\| kube-apiserver \+ kube-controller-manager v(\S+) \|/gm, TOOLCHAIN.KUBE_VERSION],
    [/^\| pulumi-resource-kubernetes (\S+) \|/gm, TOOLCHAIN.K8S_PLUGIN_VERSION],
    [/\$\{XDG_CACHE_HOME:-~\/\.cache\}\/([\w.-]+)/g, TOOLCHAIN.CACHE_FOLDER],
  ];

  it.each(phrases)("%s names %s", (phrase, value) => {
    const found = [...readme.matchAll(phrase)].map((m) => m[1]);
    expect(found.length, `the README no longer says ${phrase}`).toBeGreaterThan(0);
    for (const v of found) expect(v).toBe(value);
  });
});
