// Where the installed `sandbox` front finds what the stack verbs need, decided without an engine: the package's own
// policy pack and Docker provider (not the folder's), the Pulumi CLI on PATH only, the stack file beside the team's
// files or in stacks/, and a work folder whose project file points the engine at that stack file. The consumer test
// (consumer.test.ts) runs the same front through the real engines from the installed tarball.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { installedWorkDir, policyPackArg, stateOnlyWorkDir } from "../../cli/engine";
import { findStackFile } from "../../stacks/config";
import { TOOLCHAIN } from "../../toolchain/manifest";
import {
  cachedPulumiPath,
  inspectToolchain,
  missingToolchainMessage,
  type ToolkitFiles,
  toolkitFiles,
} from "../../toolchain/pulumi";

const temp = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));

function executable(path: string, text: string): string {
  mkdirSync(resolve(path, ".."), { recursive: true });
  writeFileSync(path, text);
  chmodSync(path, 0o755);
  return path;
}

/** An installed package's layout: `<pkg>/policy-pack/` and `<pkg>/dist/providers/docker/`. */
function fakePackage(): string {
  const pkg = temp("sandbox-pkg-");
  mkdirSync(join(pkg, "policy-pack"));
  writeFileSync(join(pkg, "policy-pack", "PulumiPolicy.yaml"), "runtime: nodejs\n");
  executable(join(pkg, "policy-pack", "run-pack"), "#!/bin/sh\n");
  executable(join(pkg, "dist", "providers", "docker", "pulumi-resource-docker"), "#!/bin/sh\n");
  mkdirSync(join(pkg, "dist", "toolchain"), { recursive: true });
  return pkg;
}

describe("the toolkit's own files", () => {
  it("are the package's when the code runs from <package>/dist, whatever folder the front runs in", () => {
    const pkg = fakePackage();
    expect(toolkitFiles("/team/folder", join(pkg, "dist", "toolchain"))).toEqual({
      installed: true,
      policyPack: join(pkg, "policy-pack"),
      dockerProvider: join(pkg, "dist", "providers", "docker"),
    });
  });

  it("are the root's in a checkout, and in a dist/ that has no pack beside it", () => {
    const checkout = { installed: false, policyPack: "/r/policy", dockerProvider: "/r/providers/docker" };
    expect(toolkitFiles("/r", join(__dirname, "..", "..", "toolchain"))).toEqual(checkout);
    expect(toolkitFiles("/r", join(temp("sandbox-nopack-"), "dist", "toolchain"))).toEqual(checkout);
    // The tests run the checkout's sources: the default is the checkout's layout.
    expect(toolkitFiles("/r").installed).toBe(false);
  });
});

describe("the installed front's toolchain", () => {
  const pkg = fakePackage();
  const files: ToolkitFiles = toolkitFiles("/unused", join(pkg, "dist", "toolchain"));

  it("takes the Pulumi CLI from PATH only, never the checkout's cache, and serves the package's provider", () => {
    const cache = temp("sandbox-cache-");
    const cached = cachedPulumiPath({ XDG_CACHE_HOME: cache });
    executable(cached, `#!/bin/sh\necho v${TOOLCHAIN.PULUMI_VERSION}\n`);
    const empty = temp("sandbox-empty-");
    const env = { PATH: empty, XDG_CACHE_HOME: cache, PULUMI_HOME: empty };
    // A checkout would use the cached build.
    expect(inspectToolchain("/unused", [], env).pulumi?.path).toBe(cached);
    const report = inspectToolchain("/unused", ["docker"], env, files);
    expect(report.pulumi).toBeUndefined();
    expect(report.missing).toEqual([
      `the Pulumi CLI: no \`pulumi\` v${TOOLCHAIN.MIN_PULUMI_VERSION} or later on PATH`,
    ]);
    expect(report.plugins.docker).toBe(join(pkg, "dist", "providers", "docker", "pulumi-resource-docker"));
    expect(report.pathPrepend).toEqual([join(pkg, "dist", "providers", "docker")]);
    const bin = temp("sandbox-bin-");
    executable(join(bin, "pulumi"), `#!/bin/sh\necho v${TOOLCHAIN.PULUMI_VERSION}\n`);
    expect(inspectToolchain("/unused", [], { ...env, PATH: bin }, files).pulumi?.path).toBe(
      join(bin, "pulumi"),
    );
  });

  it("says that the package cannot build a Pulumi CLI, and what to install", () => {
    const empty = temp("sandbox-empty-");
    const report = inspectToolchain("/unused", ["docker"], { PATH: empty, PULUMI_HOME: empty }, files);
    const message = missingToolchainMessage("up", "dev", report);
    expect(message).toContain(`install the Pulumi CLI v${TOOLCHAIN.MIN_PULUMI_VERSION} or later`);
    expect(message).toContain("the installed package cannot build one");
    expect(message).not.toContain("bash toolchain/setup.sh");
    expect(message.endsWith("Nothing was deployed.")).toBe(true);
  });

  it("attaches the package's pack: its launcher without the Node analyzer, its folder with it", () => {
    expect(policyPackArg("/unused", { PATH: temp("sandbox-empty-") }, files)).toEqual([
      join(pkg, "policy-pack", "run-pack"),
    ]);
    const bin = temp("sandbox-bin-");
    executable(join(bin, "pulumi-analyzer-policy"), "#!/bin/sh\n");
    expect(policyPackArg("/unused", { PATH: bin }, files)).toEqual([join(pkg, "policy-pack")]);
  });
});

describe("the stack file", () => {
  it("is ./Pulumi.<stack>.yaml for the installed front, else ./stacks/Pulumi.<stack>.yaml", () => {
    const root = temp("sandbox-team-");
    expect(findStackFile(root, "dev", true)).toEqual({
      file: "Pulumi.dev.yaml",
      exists: false,
      tried: ["Pulumi.dev.yaml", join("stacks", "Pulumi.dev.yaml")],
    });
    mkdirSync(join(root, "stacks"));
    writeFileSync(join(root, "stacks", "Pulumi.dev.yaml"), "config: {}\n");
    expect(findStackFile(root, "dev", true)).toMatchObject({
      file: join("stacks", "Pulumi.dev.yaml"),
      exists: true,
    });
    writeFileSync(join(root, "Pulumi.dev.yaml"), "config: {}\n");
    expect(findStackFile(root, "dev", true)).toMatchObject({ file: "Pulumi.dev.yaml", exists: true });
  });

  it("is only stacks/Pulumi.<stack>.yaml in a checkout, as its Pulumi.yaml says", () => {
    const root = temp("sandbox-checkout-");
    writeFileSync(join(root, "Pulumi.dev.yaml"), "config: {}\n");
    expect(findStackFile(root, "dev", false)).toEqual({
      file: join("stacks", "Pulumi.dev.yaml"),
      exists: false,
      tried: [join("stacks", "Pulumi.dev.yaml")],
    });
  });
});

describe("the installed front's work folder", () => {
  it("holds the project file, pointing the engine at the folder of the stack's config file", () => {
    const root = temp("sandbox-team-");
    writeFileSync(join(root, "Pulumi.dev.yaml"), "config: {}\n");
    mkdirSync(join(root, "stacks"));
    writeFileSync(join(root, "stacks", "Pulumi.prod.yaml"), "config: {}\n");
    for (const [stack, folder] of [
      ["dev", root],
      ["prod", join(root, "stacks")],
    ] as const) {
      const dir = installedWorkDir(root, stack);
      expect(dir).toBe(join(root, ".sandbox", "work", `stack-${stack}`));
      const project = parse(readFileSync(join(dir, "Pulumi.yaml"), "utf8"));
      expect(project).toEqual({ name: "sandbox", runtime: "nodejs", stackConfigDir: expect.any(String) });
      expect(resolve(dir, project.stackConfigDir)).toBe(folder);
    }
  });

  it("for a destroy from the state alone, keeps the secrets provider's lines of the stack file beside it", () => {
    const root = temp("sandbox-team-");
    writeFileSync(join(root, "Pulumi.dev.yaml"), "config:\n  sandbox:budget: lots\nencryptionsalt: v1:abc\n");
    const work = stateOnlyWorkDir(root, "dev", true);
    try {
      expect(readFileSync(join(work.dir, "stacks", "Pulumi.dev.yaml"), "utf8")).toBe(
        "encryptionsalt: v1:abc\n",
      );
    } finally {
      work.cleanup();
    }
  });
});
