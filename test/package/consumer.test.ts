// A team's project that installs only the packed tarball, in a temporary folder that is not this repository, running
// each quick-start (docs/quickstart-*.md) as it is written: their files written as they are (but the stack file's
// project name and image, which are this run's: the Docker engine is shared), their `sh test` commands run as they
// are. Real engines: the Pulumi CLI (the toolkit's cached build, or one on PATH) and the local Docker engine; the
// package's own policy-pack/run-pack and local Docker provider, since this machine has neither the Node policy
// analyzer nor the official Docker plugin. The project's PATH holds a Node 22+ binary, the Pulumi CLI, the
// package's provider folder and the system's folders: nothing of this repository's code. The installed `sandbox`
// front runs without that provider folder on PATH: it finds the package's provider itself.
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
    // How this machine reaches the registry (its proxy and the certificates it trusts), as a team's shell has it.
    ...Object.fromEntries(
      Object.entries(process.env).filter(
        ([k, v]) =>
          v !== undefined &&
          /^(NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR|HTTPS?_PROXY|NO_PROXY|npm_config_(registry|cafile|proxy|https_proxy|noproxy|strict_ssl))$/i.test(
            k,
          ),
      ),
    ),
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
  if (docker !== undefined) {
    for (const name of [`agents-${stack}`, `front-${stack}`])
      await offSwitch(docker, name, { jobRoot: join(project, "jobs") });
  }
  if (project !== "") rmSync(project, { recursive: true, force: true });
  // Two off switches and a folder with an installed node_modules: seconds on a busy machine, not vitest's 10.
}, 120_000);

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
  const dir = () => join(project, "front");

  it("checks the stack file beside it, else the one in stacks/", () => {
    mkdirSync(join(dir(), "stacks"), { recursive: true });
    const stackFile = (name: string) =>
      `config:\n  sandbox:name: ${name}\n  sandbox:budget:\n    monthlyCapUsd: 10\n  sandbox:templates:\n    default:\n      image: busybox:1\n`;
    writeFileSync(join(dir(), "stacks", "Pulumi.dev.yaml"), stackFile("in-stacks"));
    const check = sh("npx sandbox check dev --json", dir());
    expect(check.status, check.stderr).toBe(0);
    expect(JSON.parse(check.stdout)).toMatchObject({ verb: "check", ok: true, project: "in-stacks" });
    writeFileSync(join(dir(), "Pulumi.dev.yaml"), stackFile("beside"));
    expect(JSON.parse(sh("npx sandbox check dev --json", dir()).stdout)).toMatchObject({ project: "beside" });
    const help = sh("npx sandbox --help", dir());
    expect(help.stdout).toContain(
      "stack file  ./Pulumi.<stack>.yaml, else ./stacks/Pulumi.<stack>.yaml (the `sandbox:` config of the README)",
    );
    const none = sh("npx sandbox up nope --json", dir());
    expect(none.status).toBe(2);
    expect(JSON.parse(none.stdout).problems).toEqual([
      {
        key: "Pulumi.nope.yaml",
        message:
          "no such stack config file (nor stacks/Pulumi.nope.yaml); create it (see docs/quickstart-stack-file.md in the package)",
      },
    ]);
  });

  it("without a Pulumi CLI on PATH, says that the package cannot build one and what to install (exit 3)", () => {
    // Only this Node on PATH: no pulumi anywhere, whatever the machine has in its system folders.
    const r = spawnSync(
      join(project, ".node", "node"),
      [join(pkgDir(), "dist", "cli", "bin", "sandbox.js"), "up", "dev", "--json"],
      { cwd: dir(), env: { ...env, PATH: join(project, ".node") }, encoding: "utf8", timeout: 120_000 },
    );
    expect(r.status, r.stderr).toBe(3);
    const answer = JSON.parse(r.stdout);
    expect(answer).toMatchObject({ verb: "up", ok: false, exitCode: 3, error: { kind: "missing-tool" } });
    expect(answer.missing).toEqual([
      `the Pulumi CLI: no \`pulumi\` v${TOOLCHAIN.MIN_PULUMI_VERSION} or later on PATH`,
    ]);
    expect(answer.error.message).toContain("the installed package cannot build one");
    expect(answer.error.message).toContain("https://www.pulumi.com/docs/install/");
  });

  it("says before the engine starts that the policy pack's Node is too old, naming SANDBOX_NODE (exit 3)", () => {
    // The machine's own Node when it is older than 22 (a consumer's Node 20), else a binary that answers as one.
    const old =
      (process.env.PATH ?? "")
        .split(":")
        .filter((d) => d !== "" && !d.includes("node_modules"))
        .map((d) => join(d, "node"))
        .find((n) => {
          const v = spawnSync(n, ["-p", "process.versions.node"], { encoding: "utf8", timeout: 30_000 });
          return v.status === 0 && Number(v.stdout.split(".")[0]) < 22;
        }) ??
      (() => {
        const f = join(project, "node20");
        writeFileSync(f, "#!/bin/sh\necho 20.19.2\n", { mode: 0o755 });
        return f;
      })();
    const r = sh(`SANDBOX_NODE=${old} npx sandbox up dev --json`, dir());
    expect(r.status, r.stderr).toBe(3);
    const answer = JSON.parse(r.stdout);
    expect(answer).toMatchObject({ verb: "up", ok: false, exitCode: 3, error: { kind: "missing-tool" } });
    expect(answer.error.message).toContain(`SANDBOX_NODE=${JSON.stringify(old)} is Node 20.`);
    expect(answer.error.message).toContain("the policy pack needs Node 22 or later");
    expect(answer.error.message).toContain("Nothing was deployed");
  });

  it("refers the toolkit's own test suite to a checkout", () => {
    const r = sh("npx sandbox test", dir());
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("./sandbox test");
  });
});

describe("quick-start: deploy from a stack file with npx sandbox (docs/quickstart-stack-file.md)", () => {
  const dir = () => join(project, "stack-file");
  const name = `front-${stack}`;
  /** The quick-start's stack file, with this run's project name and the offline test image. */
  function stackFile(q: Quickstart): string {
    const file = q.files.find((f) => f.path === "Pulumi.dev.yaml");
    expect(file?.content).toContain("sandbox:name: team-agents ");
    expect(file?.content).toContain("image: busybox:1.36 ");
    return (file?.content ?? "")
      .replace("sandbox:name: team-agents ", `sandbox:name: ${name} `)
      .replace("image: busybox:1.36 ", `image: ${TEST_IMAGE} `);
  }
  /** What a team's shell has: no backend or passphrase set, and no provider folder of ours on PATH. */
  const frontEnv = (): NodeJS.ProcessEnv => {
    const {
      PULUMI_BACKEND_URL: _b,
      PULUMI_CONFIG_PASSPHRASE: _p,
      PULUMI_HOME: _h,
      PULUMI_SKIP_UPDATE_CHECK: _u,
      PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: _a,
      ...rest
    } = env;
    const provider = join(pkgDir(), "dist", "providers", "docker");
    return {
      ...rest,
      PATH: (env.PATH ?? "")
        .split(":")
        .filter((p) => p !== provider)
        .join(":"),
    };
  };
  const run = (script: string) =>
    spawnSync("sh", ["-ec", script], { cwd: dir(), env: frontEnv(), encoding: "utf8", timeout: 600_000 });

  it("goes up in the team's folder with the package's program, pack and provider, and comes down with destroy", async () => {
    const q = quickstart("stack-file");
    mkdirSync(dir(), { recursive: true });
    writeFileSync(join(dir(), "Pulumi.dev.yaml"), stackFile(q));
    const [check, up, destroy] = q.commands;
    expect(q.commands.map((c) => c.script.trim())).toEqual([
      "npx sandbox check dev",
      "npx sandbox up dev --json",
      "npx sandbox destroy dev --json",
    ]);

    const checked = run(check?.script ?? "");
    expect(checked.status, checked.stderr).toBe(check?.exit);
    expect(checked.stdout).toContain(`stack dev: project ${name} on docker`);

    let t = Date.now();
    const upped = run(up?.script ?? "");
    timings.push(`npx sandbox up: ${((Date.now() - t) / 1000).toFixed(1)} s`);
    expect(upped.status, `${upped.stdout}\n${upped.stderr}`).toBe(up?.exit);
    const result = JSON.parse(upped.stdout);
    expect(result).toMatchObject({ verb: "up", stack: "dev", ok: true, exitCode: 0, project: name });
    expect(result.changes.create).toBeGreaterThan(0);
    expect(result.walls.default.passed).toBe(true);
    // The package's provider served the engine, and the state is the folder's own, under the dev passphrase.
    expect(result.warnings.join("\n")).toContain(join(pkgDir(), "dist", "providers", "docker"));
    expect(existsSync(join(dir(), ".sandbox", "state", ".pulumi", "stacks", "sandbox", "dev.json"))).toBe(
      true,
    );
    const labelled = { label: [`sandbox.project=${name}`] };
    expect((await docker.listNetworks({ filters: labelled })).map((n) => n.Name)).toContain(`${name}-net`);
    expect(await projectLeftovers(docker, name)).not.toEqual([]);
    // The package's pack judged the stack: the engine names it, at the package's version, in its verbose output.
    const previewed = run("npx sandbox preview dev --verbose");
    expect(previewed.status, previewed.stderr).toBe(0);
    expect(previewed.stderr).toMatch(
      new RegExp(`sandbox-projects@v${VERSION.replace(/\./g, "\\.")} .*policy-pack/run-pack`),
    );

    t = Date.now();
    const destroyed = run(destroy?.script ?? "");
    timings.push(`npx sandbox destroy: ${((Date.now() - t) / 1000).toFixed(1)} s`);
    expect(destroyed.status, `${destroyed.stdout}\n${destroyed.stderr}`).toBe(destroy?.exit);
    expect(JSON.parse(destroyed.stdout)).toMatchObject({ verb: "destroy", ok: true, exitCode: 0 });
    expect(await projectLeftovers(docker, name)).toEqual([]);
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
