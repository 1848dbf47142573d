// A team's project that installs only the packed tarball, in a temporary folder that is not this repository, running
// each quick-start (docs/quickstart-*.md) as it is written: their files written as they are, their `sh test`
// commands run as they are. Real engines: the Pulumi CLI (the toolkit's cached build, or one on PATH) and the local
// Docker engine; the package's own policy-pack/run-pack and local Docker provider, since this machine has neither
// the Node policy analyzer nor the official Docker plugin. The project's PATH holds a Node 22+ binary, the Pulumi
// CLI, the package's provider folder and the system's folders: nothing of this repository's code.
import { type SpawnSyncReturns, spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Validator } from "@cfworker/json-schema";
import type Dockerode from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { offSwitch, projectLeftovers } from "../../runtime/offSwitch";
import { TOOLCHAIN, toolCacheDir } from "../../toolchain/manifest";
import { requireDocker, TEST_IMAGE } from "../helpers/docker";
import { type Quickstart, quickstart } from "./quickstarts";
import { packageInfo, packedTarball, ROOT } from "./tarball";

/** How long to wait for a cold toolchain build (the Pulumi CLI) or a Docker engine that another run is starting. */
const TOOLS_WAIT_MS = 30 * 60_000;

/**
 * Pulumi's TypeScript template's compiler options (`pulumi new typescript`), over every program file of a folder, plus
 * the one the quick-start asks for (`esModuleInterop`).
 */
const PULUMI_TSCONFIG = {
  compilerOptions: {
    esModuleInterop: true,
    strict: true,
    outDir: "bin",
    target: "es2020",
    module: "commonjs",
    moduleResolution: "node",
    sourceMap: true,
    experimentalDecorators: true,
    pretty: true,
    noFallthroughCasesInSwitch: true,
    noImplicitReturns: true,
    forceConsistentCasingInFileNames: true,
  },
  include: ["*.ts"],
};

/** A Pulumi CLI the toolkit's set-up built, of any version (the cold build of the current one may be running). */
function cachedPulumi(): string | undefined {
  const base = join(toolCacheDir(), TOOLCHAIN.PULUMI_CACHE_FOLDER);
  if (!existsSync(base)) return undefined;
  return readdirSync(base)
    .map((v) => join(base, v, "bin", "pulumi"))
    .find((p) => existsSync(p));
}

function dockerAnswers(): boolean {
  return spawnSync("docker", ["version"], { stdio: "ignore", timeout: 30_000 }).status === 0;
}

/** The cached Pulumi CLI once it exists and the Docker engine answers, polling while a set-up may still be running. */
async function waitForTools(): Promise<string> {
  const until = Date.now() + TOOLS_WAIT_MS;
  for (;;) {
    const pulumi = cachedPulumi();
    if (pulumi !== undefined && dockerAnswers()) return pulumi;
    if (Date.now() > until) {
      throw new Error(
        `the consumer test needs the Pulumi CLI (${pulumi ?? "none cached under ~/.cache/sandbox-projects/pulumi/*/bin"}) and a Docker engine (${dockerAnswers() ? "answers" : "does not answer"}): run toolchain/setup.sh and toolchain/docker.sh (./sandbox test does)`,
      );
    }
    await new Promise((r) => setTimeout(r, 15_000));
  }
}

let project = "";
let pulumi = "";
let docker: Dockerode;
let env: NodeJS.ProcessEnv = {};
const timings: string[] = [];
const stack = `qs${Math.random().toString(36).slice(2, 7)}`;
const { name: PKG, version: VERSION } = packageInfo();

const pkgDir = () => join(project, "node_modules", ...PKG.split("/"));
const runPack = () => join(pkgDir(), "policy-pack", "run-pack");

function sh(script: string, cwd: string): SpawnSyncReturns<string> {
  return spawnSync("sh", ["-ec", script], { cwd, env, encoding: "utf8", timeout: 300_000 });
}

/** Writes a quick-start's files into `dir`, with the scaffolding an existing program has (Pulumi.yaml, tsconfig). */
function writeQuickstart(dir: string, q: Quickstart, pulumiProject?: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(PULUMI_TSCONFIG, null, 2));
  if (pulumiProject !== undefined)
    writeFileSync(join(dir, "Pulumi.yaml"), `name: ${pulumiProject}\nruntime: nodejs\n`);
  for (const f of q.files) {
    mkdirSync(dirname(join(dir, f.path)), { recursive: true });
    writeFileSync(join(dir, f.path), f.content);
  }
}

/** Runs a quick-start's `sh test` commands in order; each must end with its status and print what it shows. */
function runCommands(q: Quickstart, dir: string): SpawnSyncReturns<string>[] {
  return q.commands.map((c) => {
    const r = sh(c.script, dir);
    expect(r.status, `${c.script}\n${r.stdout}\n${r.stderr}`).toBe(c.exit);
    if (c.stdout !== undefined) expect(r.stdout).toBe(c.stdout);
    return r;
  });
}

interface DriverAnswer {
  ok: boolean;
  error?: string;
  log: string;
  outputs?: Record<string, unknown>;
}

/** The project's compiled program through the real engine, by the project's own Automation API (driver.js). */
function drive(request: Record<string, unknown>): DriverAnswer {
  const r = spawnSync("node", [join(project, "driver.js"), JSON.stringify(request)], {
    cwd: project,
    env,
    encoding: "utf8",
    timeout: 600_000,
    maxBuffer: 1 << 26,
  });
  if (r.status !== 0) throw new Error(`driver.js failed (exit ${r.status}):\n${r.stderr}`);
  return JSON.parse(r.stdout) as DriverAnswer;
}

beforeAll(async () => {
  pulumi = await waitForTools();
  docker = await requireDocker();
  let t = Date.now();
  const tarball = packedTarball((step, s) => timings.push(`${step}: ${s.toFixed(1)} s`));
  timings.push(`tarball ready: ${((Date.now() - t) / 1000).toFixed(1)} s`);
  project = mkdtempSync(join(tmpdir(), "sandbox-consumer-"));
  // Node: the one running this test (22 or later), alone in a folder of its own; the system's may be older.
  mkdirSync(join(project, ".node"));
  symlinkSync(process.execPath, join(project, ".node", "node"));
  const dev = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).devDependencies as Record<
    string,
    string
  >;
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify(
      {
        name: "team-infra",
        version: "1.0.0",
        private: true,
        // A team's own pins of the peers; the toolkit is the tarball, as `npm install <tarball>` records it.
        dependencies: {
          [PKG]: `file:${tarball}`,
          "@pulumi/pulumi": dev["@pulumi/pulumi"],
          "@pulumi/docker": dev["@pulumi/docker"],
          "@pulumi/kubernetes": dev["@pulumi/kubernetes"],
        },
        devDependencies: { typescript: dev.typescript, "@types/node": dev["@types/node"] },
      },
      null,
      2,
    ),
  );
  copyFileSync(join(__dirname, "driver.js"), join(project, "driver.js"));
  env = {
    HOME: process.env.HOME,
    PATH: [join(project, ".node"), dirname(pulumi), "/usr/local/bin", "/usr/bin", "/bin"].join(":"),
    PULUMI_HOME: join(project, ".pulumi"),
    PULUMI_BACKEND_URL: `file://${join(project, ".state")}`,
    PULUMI_CONFIG_PASSPHRASE: "consumer-test",
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    ...(process.env.DOCKER_HOST === undefined ? {} : { DOCKER_HOST: process.env.DOCKER_HOST }),
  };
  mkdirSync(join(project, ".state"));
  t = Date.now();
  const install = sh("npm install --no-audit --no-fund --prefer-offline --loglevel=error", project);
  expect(install.status, install.stderr).toBe(0);
  timings.push(`npm install of the tarball and its dependencies: ${((Date.now() - t) / 1000).toFixed(1)} s`);
  // The local Docker provider: the package's, first on the engine's PATH (no official plugin on this machine).
  env.PATH = [join(pkgDir(), "dist", "providers", "docker"), env.PATH].join(":");
}, TOOLS_WAIT_MS + 600_000);

afterAll(async () => {
  process.stdout.write(`consumer test timings: ${timings.join("; ")}\n`);
  // Whatever a failed test left on the shared engine goes, by the project's label, before its folder does.
  if (docker !== undefined) await offSwitch(docker, `agents-${stack}`, { jobRoot: join(project, "jobs") });
  if (project !== "") rmSync(project, { recursive: true, force: true });
});

describe("the installed package", () => {
  it("holds nothing of the repository: the pack's version is the package's, and its files are only what users need", () => {
    const pkg = JSON.parse(readFileSync(join(pkgDir(), "package.json"), "utf8"));
    expect(pkg.version).toBe(VERSION);
    const pack = JSON.parse(readFileSync(join(pkgDir(), "policy-pack", "package.json"), "utf8"));
    expect(pack.version).toBe(VERSION);
    const top = readdirSync(pkgDir()).sort();
    expect(top).toEqual(
      [
        "CHANGELOG.md",
        "LICENSE",
        "README.md",
        "dist",
        "docs",
        "package.json",
        "policy",
        "policy-pack",
      ].sort(),
    );
    // Compiled only: no TypeScript source, no tests, no benchmarks.
    const files = sh("find . -type f", pkgDir()).stdout.split("\n");
    expect(files.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))).toEqual([]);
    expect(files.filter((f) => /^\.\/(test|bench|toolchain\/.*\.sh)/.test(f))).toEqual([]);
  });
});

describe("the installed front, sandbox", () => {
  it("checks a stack file of the folder it runs in, and sends the stack verbs to the team's own program", () => {
    const dir = join(project, "front");
    mkdirSync(join(dir, "stacks"), { recursive: true });
    writeFileSync(
      join(dir, "stacks", "Pulumi.dev.yaml"),
      "config:\n  sandbox:budget:\n    monthlyCapUsd: 10\n  sandbox:templates:\n    default:\n      image: busybox:1\n",
    );
    const check = sh("npx sandbox check dev --json", dir);
    expect(check.status, check.stderr).toBe(0);
    expect(JSON.parse(check.stdout)).toMatchObject({ verb: "check", ok: true, project: "sandbox-dev" });
    const up = sh("npx sandbox up dev", dir);
    expect(up.status).toBe(2);
    expect(up.stderr).toContain(`--policy-pack node_modules/${PKG}/policy-pack`);
  });
});

describe("quick-start: add sandbox projects to your Pulumi program (docs/quickstart-components.md)", () => {
  const dir = () => join(project, "components");
  const jobRoot = () => join(project, "jobs");
  const name = `agents-${stack}`;

  it("type-checks the program against the package's types with Pulumi's TypeScript template", () => {
    expect(readFileSync(join(ROOT, "docs", "quickstart-components.md"), "utf8")).toContain(
      '`"esModuleInterop": true`',
    );
    writeQuickstart(dir(), quickstart("components"), "agents");
    writeQuickstart(dir(), quickstart("agent"));
    const r = sh("npx tsc", dir());
    expect(r.status, r.stdout + r.stderr).toBe(0);
  });

  it("goes up through the real engine with the installed pack attached, and the probe proves the walls", async () => {
    // `pulumi config set taskImage ...` and `pulumi up --policy-pack .../policy-pack`, through the Automation API.
    const up = drive({
      verb: "up",
      workDir: dir(),
      program: "bin/index.js",
      project: "agents",
      stack,
      pulumiRoot: dirname(dirname(pulumi)),
      config: { taskImage: TEST_IMAGE, jobRoot: jobRoot() },
      policyPacks: [runPack()],
    });
    expect(up.ok, `${up.error}\n${up.log}`).toBe(true);
    // The installed pack ran, at the package's version.
    expect(up.log).toContain(`sandbox-projects@v${VERSION}`);
    const probes = up.outputs?.probes as Record<string, { passed: boolean }>;
    expect(probes.default?.passed).toBe(true);
    const net = (await docker.getNetwork(`${name}-net`).inspect()) as { Internal: boolean };
    expect(net.Internal).toBe(true);
  });

  it("runs a task from an agent with the library (docs/quickstart-agent.md), from the stack's launch specs", () => {
    const [output, run] = runCommands(quickstart("agent"), dir());
    expect(output?.status).toBe(0);
    expect(JSON.parse(readFileSync(join(dir(), "templates.json"), "utf8")).default.project).toBe(name);
    expect(run?.stdout).toMatch(/^exit 0: hello from uid 1000/);
  });

  it("comes down with destroy, leaving nothing of the project on the engine", async () => {
    const down = drive({
      verb: "destroy",
      workDir: dir(),
      program: "bin/index.js",
      project: "agents",
      stack,
      pulumiRoot: dirname(dirname(pulumi)),
    });
    expect(down.ok, `${down.error}\n${down.log}`).toBe(true);
    expect(await projectLeftovers(docker, name)).toEqual([]);
  });
});

describe("quick-start: adopt only the policy pack (docs/quickstart-policy-pack.md)", () => {
  const dir = () => join(project, "pack");

  it("has a config file the shipped config.schema.json accepts", () => {
    const q = quickstart("policy-pack");
    writeQuickstart(dir(), q, "web");
    const schema = JSON.parse(readFileSync(join(pkgDir(), "policy-pack", "config.schema.json"), "utf8"));
    const config = JSON.parse(readFileSync(join(dir(), "sandbox-policy.json"), "utf8"));
    const result = new Validator(schema, "7").validate(config);
    expect(result.errors).toEqual([]);
    // The schema is strict: a misspelt rule is refused.
    expect(new Validator(schema, "7").validate({ "sandbox-disallow-exposed-port": "advisory" }).valid).toBe(
      false,
    );
  });

  it("fails the preview of an existing program with the walls it breaks, honouring the config and its exemption", () => {
    const r = sh("npx tsc", dir());
    expect(r.status, r.stdout + r.stderr).toBe(0);
    const preview = drive({
      verb: "preview",
      workDir: dir(),
      program: "bin/index.js",
      project: "web",
      stack,
      pulumiRoot: dirname(dirname(pulumi)),
      policyPacks: [runPack()],
      policyPackConfigs: [join(dir(), "sandbox-policy.json")],
    });
    expect(preview.ok).toBe(false);
    // Pulumi prints each violation as `[mandatory]  <pack> v<version>  <rule> (<resource>)`.
    const mandatory = preview.log.split("\n").filter((l) => l.includes("[mandatory]"));
    for (const rule of [
      "sandbox-require-drop-net-admin",
      "sandbox-require-non-root",
      "sandbox-require-resource-limits",
      "sandbox-require-readonly-rootfs",
    ]) {
      expect(
        mandatory.some((l) => l.includes(rule)),
        `${rule} in\n${preview.log}`,
      ).toBe(true);
    }
    expect(preview.log).not.toContain("sandbox-disallow-exposed-ports");
  });
});

describe("quick-start: run only sandbox-scan in CI (docs/quickstart-scan-ci.md)", () => {
  const dir = () => join(project, "scan");

  it("scans a folder with the installed CLI to SARIF, and from code with scan()", () => {
    const q = quickstart("scan-ci");
    writeQuickstart(dir(), q);
    runCommands(q, dir());
    const sarif = JSON.parse(readFileSync(join(dir(), "scan.sarif"), "utf8"));
    const run = sarif.runs[0];
    expect(run.tool.driver.version).toBe(VERSION);
    const ids = new Set((run.results as { ruleId: string }[]).map((r) => r.ruleId));
    for (const id of [
      "sandbox-require-drop-net-admin",
      "sandbox-require-non-root",
      "sandbox-disallow-secret-env",
    ])
      expect(ids).toContain(id);
  });
});
