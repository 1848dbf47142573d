import { existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { LocalWorkspace, PulumiCommand } from "@pulumi/pulumi/automation";
import { sandboxProgram } from "../stacks/program";
import { onPath, pulumiHome, type ToolchainReport } from "../toolchain/pulumi";
import { recoverInterruptedRun } from "./recover";

/** The stack verbs the front runs through the Automation API. */
export type StackVerb = "preview" | "up" | "refresh" | "destroy";

/** The dev passphrase used when the caller set none: it protects only local, throwaway dev state. */
export const DEV_PASSPHRASE = "sandbox-dev-passphrase";

/**
 * The environment the engine runs with: the local file backend under the project, a dev passphrase unless one is
 * set, no update check, and no plugin downloads (a missing plugin is an error, never a download attempt).
 */
/** The local file backend's folder, created on first use (the engine refuses a missing one). */
export function stateDir(root: string): string {
  const dir = join(root, ".sandbox", "state");
  mkdirSync(dir, { recursive: true });
  return dir;
}

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
 * pack's launcher script, which the engine starts as an analyzer plugin (no Node language host needed).
 */
export function policyPackArg(root: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const folder = join(root, "policy");
  if (!existsSync(join(folder, "PulumiPolicy.yaml"))) return [];
  if (onPath("pulumi-analyzer-policy", env) !== undefined) return [folder];
  const launcher = join(folder, "run-pack");
  return existsSync(launcher) ? [launcher] : [];
}

/** Runs one stack verb on `stack` with the inline program, streaming the engine's output. Returns the exit code. */
export async function runStackVerb(
  verb: StackVerb,
  stackName: string,
  root: string,
  toolchain: ToolchainReport,
  print: (text: string) => void,
): Promise<number> {
  if (toolchain.pulumi === undefined) throw new Error("runStackVerb needs a Pulumi CLI");
  const onPathPulumi = onPath("pulumi") === toolchain.pulumi.path;
  const pulumiCommand = await PulumiCommand.get(
    onPathPulumi ? { skipVersionCheck: false } : { root: dirname(dirname(toolchain.pulumi.path)) },
  );
  const stack = await LocalWorkspace.createOrSelectStack(
    { stackName, projectName: "sandbox", program: sandboxProgram },
    {
      workDir: root,
      pulumiHome: pulumiHome(root),
      pulumiCommand,
      envVars: {
        ...engineEnv(root),
        // The local Docker provider (when chosen) must be the `pulumi-resource-docker` the engine finds first.
        PATH: [...toolchain.pathPrepend, dirname(toolchain.pulumi.path), process.env.PATH ?? ""].join(":"),
      },
    },
  );
  const onOutput = (out: string) => print(out);
  const backend = engineEnv(root).PULUMI_BACKEND_URL ?? "";
  if (backend.startsWith("file://"))
    await recoverInterruptedRun(stack, backend.slice("file://".length), "sandbox", print);
  const docker = toolchain.plugins.docker;
  if (docker !== undefined) {
    print(
      `docker provider: ${toolchain.pathPrepend.length > 0 ? "the toolkit's local provider (providers/docker)" : `the installed plugin at ${docker}`}\n`,
    );
  }
  const policyPacks = policyPackArg(root);
  switch (verb) {
    case "preview": {
      const r = await stack.preview({ onOutput, policyPacks, diff: false });
      print(`\npreview of ${stackName}: ${JSON.stringify(r.changeSummary)}\n`);
      return 0;
    }
    case "up": {
      const r = await stack.up({ onOutput, policyPacks });
      print(`\n${stackName} is up: ${JSON.stringify(r.summary.resourceChanges ?? {})}\n`);
      return 0;
    }
    case "refresh": {
      const r = await stack.refresh({ onOutput });
      print(`\n${stackName} refreshed: ${JSON.stringify(r.summary.resourceChanges ?? {})}\n`);
      return 0;
    }
    case "destroy": {
      const r = await stack.destroy({ onOutput });
      print(`\n${stackName} destroyed: ${JSON.stringify(r.summary.resourceChanges ?? {})}\n`);
      return 0;
    }
  }
}
