// Automation API workspaces for the engine tests: a temporary file backend and Pulumi home, the dev passphrase, no
// update check, no plugin downloads (the kubernetes plugin is found on PATH), unique stack names, and the project's
// policy pack through its launcher (policy/run-pack), which the engine starts as an analyzer plugin.
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { LocalWorkspace, PulumiCommand, type PulumiFn, type Stack } from "@pulumi/pulumi/automation";
import { engineEnv } from "../../cli/engine";
import { type EngineToolchain, ROOT } from "./toolchain";

/** The project's policy pack launcher, which the engine accepts as `--policy-pack`. */
export const POLICY_PACK = join(ROOT, "policy", "run-pack");

export interface EngineWorkspace {
  /** Creates a stack with a unique name (`<prefix>-<random>`) running `program` inline. */
  newStack(prefix: string, program: PulumiFn): Promise<Stack>;
  /** Destroys the stack and removes it; collects the output of both for the failure message. */
  dispose(stack: Stack): Promise<void>;
  /** Removes the temporary backend and Pulumi home. */
  cleanup(): void;
}

export async function engineWorkspace(tools: EngineToolchain): Promise<EngineWorkspace> {
  const dir = mkdtempSync(join(tmpdir(), "sandbox-engine-state-"));
  const workDir = join(dir, "work");
  const pulumiHome = join(dir, "home");
  mkdirSync(workDir);
  mkdirSync(pulumiHome);
  const envVars = {
    ...engineEnv(ROOT, {}),
    PULUMI_BACKEND_URL: `file://${join(dir, "state")}`,
    PULUMI_HOME: pulumiHome,
    PATH: tools.path,
  };
  mkdirSync(join(dir, "state"));
  // The Automation API runs `<root>/bin/pulumi`; a CLI found on PATH passes the same version check.
  const pulumiCommand = await PulumiCommand.get({ root: dirname(dirname(tools.pulumi)) });
  return {
    async newStack(prefix, program) {
      const stackName = `${prefix}-${randomBytes(4).toString("hex")}`;
      return LocalWorkspace.createStack(
        { stackName, projectName: "sandbox-engine-test", program },
        { workDir, pulumiHome, pulumiCommand, envVars },
      );
    },
    async dispose(stack) {
      let out = "";
      const onOutput = (s: string) => {
        out += s;
      };
      try {
        await stack.destroy({ onOutput });
      } catch (e) {
        throw new Error(`destroy of ${stack.name} failed: ${(e as Error).message}\n${out}`);
      } finally {
        await stack.workspace.removeStack(stack.name, { force: true });
      }
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A sandbox project's config as the engine holds it: `sandbox:<key>` → text (strings as they are, else JSON). */
export function sandboxConfigMap(config: Readonly<Record<string, unknown>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(config).map(([k, v]) => [`sandbox:${k}`, typeof v === "string" ? v : JSON.stringify(v)]),
  );
}

/** Sets a sandbox project's config on a stack, key by key, as `pulumi config set` would. */
export async function setSandboxConfig(
  stack: Stack,
  config: Readonly<Record<string, unknown>>,
): Promise<void> {
  await stack.setAllConfig(
    Object.fromEntries(Object.entries(sandboxConfigMap(config)).map(([k, value]) => [k, { value }])),
  );
}
