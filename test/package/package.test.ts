// The package's manifest and what ships with it, checked from the sources (no build): every entry point and command
// names a file the build makes, the policy pack's version and config schema follow the package's, the peers are
// pinned for development within their published ranges, the SARIF links point at the rules' documentation, and
// the public entry points export what the quick-starts use.
import { accessSync, constants, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { formatSarif, scan } from "../../cli/scan-api";
import * as root from "../../index";
import * as policy from "../../policy/api";
import { packConfigSchema } from "../../policy/config-schema";
import { REPOSITORY_URL, rulesHelpUri } from "../../policy/report/links";
import { ALL_RULES } from "../../policy/rules/registry";
import { ALL_STACK_RULES } from "../../policy/stack/registry";
import * as runtime from "../../runtime";
import * as kubeRuntime from "../../runtime/kubernetes";
import { quickstart } from "./quickstarts";
import { ROOT } from "./tarball";

interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  license: string;
  engines: { node: string };
  main: string;
  types: string;
  repository: { url: string };
  exports: Record<string, string | { types: string; default: string }>;
  typesVersions: { "*": Record<string, string[]> };
  bin: Record<string, string>;
  files: string[];
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}

const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as Manifest;
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

/** The TypeScript source the build compiles into `./dist/<path>.js` (or `.d.ts`). */
const sourceOf = (target: string) => target.replace(/^\.\/dist\//, "").replace(/(\.d\.ts|\.js)$/, ".ts");

describe("package.json", () => {
  it("is a publishable, semantically versioned package with a license and an engine range", () => {
    expect(pkg.private).toBeUndefined();
    expect(pkg.name).toMatch(/^@[a-z0-9-]+\/[a-z0-9-]+$/);
    expect(pkg.version).toMatch(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/);
    expect(pkg.license).toBe("Apache-2.0");
    expect(read("LICENSE")).toContain("Apache License\n                           Version 2.0, January 2004");
    expect(pkg.engines.node).toBe(">=22");
  });

  it("points every entry point, type definition and command at a source the build compiles", () => {
    const targets = [
      pkg.main,
      pkg.types,
      ...Object.values(pkg.bin),
      ...Object.values(pkg.exports).flatMap((e) => (typeof e === "string" ? [e] : [e.types, e.default])),
      ...Object.values(pkg.typesVersions["*"]).flat(),
    ].filter((t) => t.startsWith("./dist/"));
    for (const t of targets) expect(existsSync(join(ROOT, sourceOf(t))), t).toBe(true);
    const build = JSON.parse(read("tsconfig.build.json")) as { include: string[] };
    for (const t of targets) {
      const source = sourceOf(t);
      expect(
        build.include.some((i) => source === i || source.startsWith(`${i}/`)),
        `${source} is compiled by tsconfig.build.json`,
      ).toBe(true);
    }
    // Every subpath with types has them for TypeScript's old `node` resolution too (Pulumi's template uses it).
    for (const [sub, e] of Object.entries(pkg.exports)) {
      if (typeof e === "string" || sub === ".") continue;
      expect(pkg.typesVersions["*"][sub.slice(2)], sub).toEqual([e.types]);
    }
  });

  it("makes its commands executable Node scripts", () => {
    for (const [name, target] of Object.entries(pkg.bin)) {
      expect(read(sourceOf(target)).startsWith("#!/usr/bin/env node\n"), name).toBe(true);
    }
  });

  it("ships only what users need: the build, the pack, the docs, the changelog", () => {
    for (const f of pkg.files) {
      if (f.startsWith("dist/")) continue;
      expect(existsSync(join(ROOT, f)), f).toBe(true);
    }
    expect(
      pkg.files.some(
        (f) => /^(test|bench|toolchain|components|policy\/|runtime|cli)/.test(f) && f !== "policy/README.md",
      ),
    ).toBe(false);
  });

  it("takes @pulumi/pulumi and the provider SDKs as peers, developed against versions inside their ranges", () => {
    for (const peer of ["@pulumi/pulumi", "@pulumi/docker", "@pulumi/kubernetes"]) {
      const range = pkg.peerDependencies[peer] ?? "";
      expect(pkg.dependencies[peer], `${peer} is not also a dependency`).toBeUndefined();
      const dev = pkg.devDependencies[peer] ?? "";
      const m = /^\^(\d+)\.(\d+)\.(\d+)$/.exec(range);
      expect(m, `${peer}'s range ${range} is a caret range`).not.toBeNull();
      const [major, minor, patch] = dev.split(".").map(Number);
      const [lo1, lo2, lo3] = [Number(m?.[1]), Number(m?.[2]), Number(m?.[3])];
      expect(major, `${peer} ${dev} in ${range}`).toBe(lo1);
      expect((minor ?? 0) * 1e6 + (patch ?? 0) >= lo2 * 1e6 + lo3, `${peer} ${dev} in ${range}`).toBe(true);
    }
  });
});

describe("CHANGELOG.md", () => {
  it("has an entry and a link for the package's version", () => {
    const log = read("CHANGELOG.md");
    expect(log).toContain(`\n## [${pkg.version}]\n`);
    expect(log).toMatch(new RegExp(`^\\[${pkg.version.replace(/\./g, "\\.")}\\]: `, "m"));
  });
});

describe("policy-pack/", () => {
  const pack = JSON.parse(read("policy-pack/package.json")) as {
    version: string;
    main: string;
    dependencies: Record<string, string>;
  };

  it("carries the package's version (as the checkout's policy/ does) and depends on exactly that toolkit", () => {
    expect(pack.version).toBe(pkg.version);
    expect(JSON.parse(read("policy/package.json")).version).toBe(pkg.version);
    expect(pack.dependencies).toEqual({ [pkg.name]: pkg.version });
  });

  it("loads the pack through the package's ./pack entry, the one policy/index.ts compiles to", () => {
    expect(read(`policy-pack/${pack.main}`)).toContain(`require("${pkg.name}/pack");`);
    expect(pkg.exports["./pack"]).toBe("./dist/policy/index.js");
  });

  it("describes itself as the checkout's pack does, and runs as Node", () => {
    expect(parse(read("policy-pack/PulumiPolicy.yaml"))).toEqual(parse(read("policy/PulumiPolicy.yaml")));
    accessSync(join(ROOT, "policy-pack", "run-pack"), constants.X_OK);
  });

  it("ships the config schema of this version's rules (regenerate: tsx policy/config-schema.ts)", () => {
    const shipped = JSON.parse(read("policy-pack/config.schema.json"));
    expect(shipped).toEqual(packConfigSchema(pkg.version));
    const ids = [...ALL_RULES, ...ALL_STACK_RULES].map((r) => r.id).sort();
    expect(
      Object.keys(shipped.properties)
        .filter((k) => k !== "all")
        .sort(),
    ).toEqual(ids);
  });
});

describe("SARIF links", () => {
  it("name the repository package.json names, and the rules table that lists every rule", () => {
    expect(pkg.repository.url).toBe(`git+${REPOSITORY_URL}.git`);
    expect(rulesHelpUri("1.2.3")).toBe(`${REPOSITORY_URL}/blob/v1.2.3/policy/README.md#rules`);
    expect(rulesHelpUri("0.0.0")).toBe(`${REPOSITORY_URL}/blob/main/policy/README.md#rules`);
    const readme = read("policy/README.md");
    expect(readme).toMatch(/^## Rules$/m);
    const table = readme.slice(readme.indexOf("## Rules"));
    for (const r of [...ALL_RULES, ...ALL_STACK_RULES]) expect(table, r.id).toContain(`\`${r.id}\``);
  });

  it("are in every rule of a scan's SARIF, with the driver's informationUri", async () => {
    const folder = join(ROOT, "test", "scan", "fixtures", "kubernetes");
    const { report } = await scan({ paths: [folder], cwd: ROOT });
    const sarif = JSON.parse(formatSarif(report));
    const driver = sarif.runs[0].tool.driver;
    expect(driver.informationUri).toBe(REPOSITORY_URL);
    expect(driver.rules.length).toBeGreaterThan(0);
    // From this checkout the build says it is unreleased, and its rules link to the main branch, not a release tag.
    expect(driver.version).toMatch(
      new RegExp(`^${pkg.version.replace(/\./g, "\\.")}\\+unreleased\\.[0-9a-f]{12}$`),
    );
    expect(driver.semanticVersion).toBe(driver.version);
    for (const r of driver.rules) expect(r.helpUri).toBe(rulesHelpUri(driver.version));
    expect(rulesHelpUri(driver.version)).toBe(`${REPOSITORY_URL}/blob/main/policy/README.md#rules`);
  });
});

describe("the public entry points", () => {
  it("export what the quick-starts and the README name", () => {
    expect(typeof root.docker.SandboxProject).toBe("function");
    expect(typeof root.kubernetes.SandboxProject).toBe("function");
    expect(typeof root.resolveProject).toBe("function");
    expect(typeof root.launchSpec).toBe("function");
    const functions = (m: object, names: readonly string[]) =>
      Object.fromEntries(names.map((n) => [n, typeof (m as Record<string, unknown>)[n]]));
    const runtimeNames = ["Launcher", "policyPreflight", "dockerClient", "offSwitch", "LaunchRefused"];
    expect(functions(runtime, runtimeNames)).toEqual(
      Object.fromEntries(runtimeNames.map((n) => [n, "function"])),
    );
    const kubeNames = ["KubeLauncher", "kubeApis", "kubeOffSwitch"];
    expect(functions(kubeRuntime, kubeNames)).toEqual(
      Object.fromEntries(kubeNames.map((n) => [n, "function"])),
    );
    // The launch service's client, from the main entry, the runtime's and its own (`/client`), which loads only
    // Node's own modules: an agent needs neither Pulumi nor the engine's client to launch through the service.
    expect([typeof root.SandboxClient, typeof runtime.SandboxClient]).toEqual(["function", "function"]);
    expect(pkg.exports["./client"]).toEqual({
      types: "./dist/runtime/serve/client.d.ts",
      default: "./dist/runtime/serve/client.js",
    });
    for (const file of ["runtime/serve/client.ts", "runtime/serve/protocol.ts"]) {
      const modules = /^(?:import\s+"([^"]+)"|(?:import|export)\b[^;"]*?\bfrom\s+"([^"]+)");/gm;
      const from = [...read(file).matchAll(modules)].map((m) => m[1] ?? m[2]);
      expect(
        from.filter((f) => !f?.startsWith("node:") && f !== "./protocol"),
        file,
      ).toEqual([]);
    }
    // The Docker entry does not carry the Kubernetes launcher: it is the Kubernetes entry's alone.
    expect(Object.keys(runtime)).not.toContain("KubeLauncher");
    const policyNames = ["judge", "selectRules", "adaptResources", "adaptLaunchSpec", "packArgs"];
    expect(functions(policy, policyNames)).toEqual(
      Object.fromEntries(policyNames.map((n) => [n, "function"])),
    );
    expect(policy.ALL_RULES.length).toBeGreaterThan(20);
  });

  it("scan() returns the report the CLI prints, with its verdict", async () => {
    const folder = join(ROOT, "test", "scan", "fixtures", "kubernetes");
    const { exitCode, report } = await scan({ paths: [folder], cwd: ROOT, failOnUnjudged: false });
    expect(exitCode).toBe(report.exitCode);
    expect(report.summary.resources).toBeGreaterThan(0);
    expect(exitCode).toBe(report.summary.mandatory > 0 ? 1 : report.errors.length > 0 ? 2 : 0);
    await expect(scan({ paths: [folder], config: "no-such-config.json", cwd: ROOT })).rejects.toThrow(
      /no-such-config\.json/,
    );
  });

  it("scan({ ci: true }) fails closed on a mandatory check a preview unknown kept from being made, as --ci", async () => {
    const dir = mkdtempSync(join(tmpdir(), "scan-ci-"));
    try {
      const urn = "urn:pulumi:dev::p::kubernetes:core/v1:Pod::x";
      const inputs = {
        apiVersion: "v1",
        kind: "Pod",
        spec: { hostPID: "04da6b54-80e4-46f7-96ec-b56ff0331ba9" },
      };
      const preview = {
        steps: [{ op: "create", urn, newState: { type: "kubernetes:core/v1:Pod", urn, inputs } }],
      };
      writeFileSync(join(dir, "preview.json"), JSON.stringify(preview));
      const hostPid = (r: Awaited<ReturnType<typeof scan>>) =>
        r.report.findings.filter((f) => f.ruleId === "sandbox-disallow-host-namespaces");
      const plain = await scan({ paths: ["preview.json"], cwd: dir });
      expect(hostPid(plain).map((f) => f.unchecked)).toEqual([true]);
      const ci = await scan({ paths: ["preview.json"], cwd: dir, ci: true });
      expect(ci.exitCode).toBe(1);
      expect(hostPid(ci).map((f) => [f.unchecked, f.message])).toEqual([
        [false, expect.stringMatching(/^hostPID could not be checked: .*--ci fails closed/)],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the quick-starts", () => {
  it("are each run by the consumer test, and each has something to run", () => {
    const consumer = read("test/package/consumer.test.ts");
    for (const name of ["components", "policy-pack", "scan-ci", "agent", "stack-file"]) {
      expect(consumer, name).toContain(`quickstart("${name}")`);
      const q = quickstart(name);
      expect(q.files.length + q.commands.length, name).toBeGreaterThan(0);
    }
  });
});
