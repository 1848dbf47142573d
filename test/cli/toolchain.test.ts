import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEV_PASSPHRASE, engineEnv, policyPackArg } from "../../cli/engine";
import { TOOLCHAIN } from "../../toolchain/manifest";
import {
  cachedPulumiPath,
  compareVersions,
  findResourcePlugin,
  inspectToolchain,
  onPath,
  versionOf,
} from "../../toolchain/pulumi";

const { PULUMI_VERSION } = TOOLCHAIN;

/** The folders made here, removed after the file's tests. */
const made: string[] = [];
const temp = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A fake executable that prints `version` for `pulumi version`. */
function fakeTool(dir: string, name: string, version: string): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\necho ${version}\n`);
  chmodSync(path, 0o755);
  return path;
}

describe("compareVersions", () => {
  it.each([
    ["3.274.1", "3.200.0", 1],
    ["v3.200.0", "3.200.0", 0],
    ["3.99.9", "3.200.0", -1],
    ["4.0.0", "3.999.999", 1],
  ])("%s vs %s", (a, b, sign) => {
    expect(Math.sign(compareVersions(a, b))).toBe(sign);
  });
});

describe("finding the toolchain", () => {
  it("finds an executable on PATH and nothing on an empty PATH", () => {
    const bin = temp("sandbox-bin-");
    const tool = fakeTool(bin, "pulumi", "v3.274.1");
    expect(onPath("pulumi", { PATH: `/nonexistent:${bin}` })).toBe(tool);
    expect(onPath("pulumi", { PATH: "" })).toBeUndefined();
  });

  it("accepts a recent CLI and finds plugins on PATH or installed in the Pulumi home", () => {
    const bin = temp("sandbox-bin-");
    const home = temp("sandbox-home-");
    fakeTool(bin, "pulumi", "v3.274.1");
    fakeTool(bin, "pulumi-resource-docker", "x");
    mkdirSync(join(home, "plugins", "resource-kubernetes-v4.25.0"), { recursive: true });
    const env = { PATH: bin, PULUMI_HOME: home, XDG_CACHE_HOME: home };
    const report = inspectToolchain("/unused", ["docker", "kubernetes"], env);
    expect(report.missing).toEqual([]);
    expect(report.pulumi).toEqual({ path: join(bin, "pulumi"), version: "3.274.1" });
    expect(report.plugins).toEqual({
      docker: join(bin, "pulumi-resource-docker"),
      kubernetes: join(home, "plugins", "resource-kubernetes-v4.25.0"),
    });
    expect(findResourcePlugin("aws", home, env)).toBeUndefined();
  });

  it("serves the toolkit's local Docker provider when no official plugin is installed, unless told not to", () => {
    const repo = join(__dirname, "../..");
    const empty = temp("sandbox-empty-");
    const env = { PATH: empty, PULUMI_HOME: empty, XDG_CACHE_HOME: empty };
    const local = inspectToolchain(repo, ["docker"], env);
    expect(local.plugins.docker).toBe(join(repo, "providers", "docker", "pulumi-resource-docker"));
    expect(local.pathPrepend).toEqual([join(repo, "providers", "docker")]);
    const official = inspectToolchain(repo, ["docker"], { ...env, SANDBOX_DOCKER_PROVIDER: "official" });
    expect(official.plugins.docker).toBeUndefined();
    expect(official.missing).toContain(
      `the Pulumi docker resource plugin: no \`pulumi-resource-docker\` on PATH and none installed under ${join(empty, "plugins")}`,
    );
    const bin = temp("sandbox-bin-");
    fakeTool(bin, "pulumi-resource-docker", "x");
    const forced = inspectToolchain(repo, ["docker"], {
      ...env,
      PATH: bin,
      SANDBOX_DOCKER_PROVIDER: "local",
    });
    expect(forced.pathPrepend).toEqual([join(repo, "providers", "docker")]);
  });

  it("refuses a CLI that is too old and says which", () => {
    const bin = temp("sandbox-bin-");
    fakeTool(bin, "pulumi", "v3.100.0");
    const empty = temp("sandbox-empty-");
    const report = inspectToolchain("/unused", [], { PATH: bin, XDG_CACHE_HOME: empty });
    expect(report.pulumi).toBeUndefined();
    expect(report.missing).toEqual([
      `the Pulumi CLI at ${join(bin, "pulumi")} is v3.100.0; the toolkit needs v3.200.0 or later`,
      `the Pulumi CLI: no \`pulumi\` on PATH and none cached at ${cachedPulumiPath({ XDG_CACHE_HOME: empty })}`,
    ]);
  });

  it("uses the CLI the toolkit cached by version", () => {
    const cache = temp("sandbox-cache-");
    const path = cachedPulumiPath({ XDG_CACHE_HOME: cache });
    expect(path).toBe(join(cache, "sandbox-projects", "pulumi", `v${PULUMI_VERSION}`, "bin", "pulumi"));
    mkdirSync(join(path, ".."), { recursive: true });
    fakeTool(join(path, ".."), "pulumi", `v${PULUMI_VERSION}`);
    expect(inspectToolchain("/unused", [], { PATH: "", XDG_CACHE_HOME: cache }).pulumi).toEqual({
      path,
      version: PULUMI_VERSION,
    });
  });
});

describe("the CLI's version", () => {
  it("is asked once per binary and asked again when the binary changes", () => {
    const bin = temp("sandbox-bin-");
    const cache = temp("sandbox-cache-");
    const env = { XDG_CACHE_HOME: cache };
    // Counts its runs in a file beside it: the cache must spare the second.
    const path = join(bin, "pulumi");
    const runs = join(bin, "runs");
    writeFileSync(path, `#!/bin/sh\necho x >> ${runs}\necho v3.250.0\n`);
    chmodSync(path, 0o755);
    expect(versionOf(path, env)).toBe("3.250.0");
    expect(versionOf(path, env)).toBe("3.250.0");
    expect(readFileSync(runs, "utf8")).toBe("x\n");
    writeFileSync(path, `#!/bin/sh\necho x >> ${runs}\necho v3.260.0 \n`);
    expect(versionOf(path, env)).toBe("3.260.0");
    expect(readFileSync(runs, "utf8")).toBe("x\nx\n");
    // An unreadable cache only costs the question.
    writeFileSync(join(cache, "sandbox-projects", "pulumi-versions.json"), "{broken");
    expect(versionOf(path, env)).toBe("3.260.0");
    expect(versionOf(join(bin, "missing"), env)).toBeUndefined();
  });
});

describe("the engine's environment", () => {
  it("uses the local file backend, the dev passphrase, no update check and no plugin downloads", () => {
    expect(engineEnv("/repo", {})).toEqual({
      PULUMI_SKIP_UPDATE_CHECK: "true",
      PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
      PULUMI_BACKEND_URL: "file:///repo/.sandbox/state",
      PULUMI_CONFIG_PASSPHRASE: DEV_PASSPHRASE,
    });
  });

  it("keeps the caller's backend and passphrase", () => {
    const env = engineEnv("/repo", { PULUMI_BACKEND_URL: "s3://b", PULUMI_CONFIG_PASSPHRASE_FILE: "/p" });
    expect(env.PULUMI_BACKEND_URL).toBe("s3://b");
    expect(env.PULUMI_CONFIG_PASSPHRASE).toBeUndefined();
  });

  it("attaches no policy pack where the project has none", () => {
    expect(policyPackArg(temp("sandbox-nopack-"), { PATH: "" })).toEqual([]);
  });
});
