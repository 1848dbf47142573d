/**
 * What every engine run of the front shares and what needs none of the Pulumi SDK: the engine's environment (the
 * local file backend, the dev passphrase), the policy pack to attach and the work folders. Kept apart from
 * cli/engine.ts so that a verb that drives the CLI directly (cli/destroy.ts) starts without loading the SDK.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { findStackFile } from "../stacks/config";
import { onPath, type ToolkitFiles, toolkitFiles } from "../toolchain/pulumi";
import { PULUMI_PROJECT } from "./identity";

/** The dev passphrase used when the caller set none: it protects only local, throwaway dev state. */
export const DEV_PASSPHRASE = "sandbox-dev-passphrase";

/** The local file backend's folder, created on first use (the engine refuses a missing one). */
export function stateDir(root: string): string {
  const dir = join(root, ".sandbox", "state");
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * The environment the engine runs with: the local file backend under the project, a dev passphrase unless one is
 * set, no update check, and no plugin downloads (a missing plugin is an error, never a download attempt).
 */
export function engineEnv(root: string, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    PULUMI_BACKEND_URL: env.PULUMI_BACKEND_URL || `file://${stateDir(root)}`,
  };
  if (!env.PULUMI_CONFIG_PASSPHRASE && !env.PULUMI_CONFIG_PASSPHRASE_FILE)
    out.PULUMI_CONFIG_PASSPHRASE = DEV_PASSPHRASE;
  return out;
}

/**
 * The policy pack to attach: the pack folder when the official Node policy analyzer is installed, otherwise the
 * pack's launcher script, which the engine starts as an analyzer plugin (no Node language host needed). A checkout's
 * pack is `policy/` under the root; the installed front's is the package's `policy-pack/`.
 */
export function policyPackArg(
  root: string,
  env: NodeJS.ProcessEnv = process.env,
  files: ToolkitFiles = toolkitFiles(root),
): string[] {
  const folder = files.policyPack;
  if (!existsSync(join(folder, "PulumiPolicy.yaml"))) return [];
  if (onPath("pulumi-analyzer-policy", env) !== undefined) return [folder];
  const launcher = join(folder, "run-pack");
  return existsSync(launcher) ? [launcher] : [];
}

/**
 * A work folder for a stack whose config file no longer passes (or no longer parses): the project file and a stack
 * file holding only the secrets provider's lines, so that `destroy` runs from the state alone. Destroy never runs
 * the program, and the providers it calls are configured from the state.
 */
export function stateOnlyWorkDir(
  root: string,
  stack: string,
  installed = toolkitFiles(root).installed,
): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "sandbox-state-only-"));
  mkdirSync(join(dir, "stacks"));
  writeFileSync(
    join(dir, "Pulumi.yaml"),
    `name: ${PULUMI_PROJECT}\nruntime: nodejs\nstackConfigDir: stacks\n`,
  );
  const found = findStackFile(root, stack, installed);
  const text = found.exists ? readFileSync(join(root, found.file), "utf8") : "";
  const secrets = text.match(/^(encryptionsalt|secretsprovider|encryptedkey):.*$/gm) ?? [];
  writeFileSync(join(dir, "stacks", `Pulumi.${stack}.yaml`), `${secrets.join("\n")}\n`);
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * The installed front's work folder for a stack: a team's folder has no Pulumi.yaml of the toolkit's project, so
 * the front keeps one in `.sandbox/work/stack-<stack>/`, beside its state, whose `stackConfigDir` points back at the
 * folder that holds the stack's config file. The engine reads the config there and writes its secrets provider's
 * lines there, as it does to a checkout's `stacks/Pulumi.<stack>.yaml`.
 */
export function installedWorkDir(root: string, stack: string): string {
  // "stack-" keeps a stack named "." or ".." inside work/.
  const dir = join(root, ".sandbox", "work", `stack-${stack}`);
  mkdirSync(dir, { recursive: true });
  const configDir = relative(dir, dirname(join(root, findStackFile(root, stack, true).file)));
  writeFileSync(
    join(dir, "Pulumi.yaml"),
    [
      "# Written by the installed `sandbox` front for each run: the toolkit's program runs inline, and the stack's",
      "# config file is in the folder stackConfigDir names.",
      `name: ${PULUMI_PROJECT}`,
      "runtime: nodejs",
      `stackConfigDir: ${JSON.stringify(configDir)}`,
      "",
    ].join("\n"),
  );
  return dir;
}

/** The folder the engine runs in for `stack`: the caller's, else the installed front's own, else the checkout. */
export function engineWorkDir(
  root: string,
  stack: string,
  workDir: string | undefined,
  files: ToolkitFiles,
): string {
  return workDir ?? (files.installed ? installedWorkDir(root, stack) : root);
}

/** The oldest Node the policy pack runs on (`@pulumi/pulumi` needs 22). */
export const PACK_NODE_MAJOR = 22;

/**
 * What stops the installed package's policy pack from starting, said before the engine starts (the engine would
 * only report "could not read plugin … exit status 3"), or undefined. The pack runs on `SANDBOX_NODE`, else on the
 * Node running the front. A checkout's pack runs on its own Node 24 and is never judged here.
 */
export function packNodeProblem(
  installed: boolean,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (!installed) return undefined;
  const named = env.SANDBOX_NODE !== undefined && env.SANDBOX_NODE !== "";
  const node = named ? (env.SANDBOX_NODE as string) : process.execPath;
  let version: string;
  if (!named || node === process.execPath) version = process.versions.node;
  else {
    const r = spawnSync(node, ["-p", "process.versions.node"], { encoding: "utf8", timeout: 10_000 });
    if (r.status !== 0 || r.error !== undefined)
      return `SANDBOX_NODE=${JSON.stringify(node)} does not run (${r.error?.message ?? `exit ${r.status}`}): it must name a Node ${PACK_NODE_MAJOR} or later binary, which runs the policy pack`;
    version = r.stdout.trim();
  }
  const major = Number(version.split(".")[0]);
  if (Number.isInteger(major) && major >= PACK_NODE_MAJOR) return undefined;
  const where = named ? `SANDBOX_NODE=${JSON.stringify(node)}` : `the Node running this command (${node})`;
  return `the policy pack needs Node ${PACK_NODE_MAJOR} or later, and ${where} is Node ${version}: set SANDBOX_NODE to a Node ${PACK_NODE_MAJOR}+ binary, or run the command with a Node ${PACK_NODE_MAJOR}+ first on PATH. Nothing was deployed.`;
}
