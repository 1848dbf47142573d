// A throwaway Pulumi workspace for Docker stacks through the real engine: the Automation API's inline programs, a
// temporary file backend and work folder (no tracked file is touched), the dev passphrase, no plugin downloads, the
// toolkit's local Docker provider where no official plugin is installed, and the policy pack through its launcher.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { LocalWorkspace, PulumiCommand, type PulumiFn, type Stack } from "@pulumi/pulumi/automation";
import { stringify } from "yaml";
import { engineEnv } from "../../cli/engine";
import { inspectToolchain } from "../../toolchain/pulumi";

export const ROOT = join(__dirname, "../..");
export const POLICY = [join(ROOT, "policy", "run-pack")];

export interface DockerEngineWorkspace {
  /** The temporary folder: `state/` is the backend, `work/` holds Pulumi.yaml and the stack files. */
  readonly dir: string;
  /** A stack named `<prefix>-<random>` running `program`, with `sandbox:<key>` config from `config`. */
  newStack(prefix: string, program: PulumiFn, config?: Record<string, unknown>): Promise<Stack>;
  cleanup(): void;
}

/** The workspace, or an error naming what is missing and how to get it (never a silent skip). */
export async function dockerEngineWorkspace(): Promise<DockerEngineWorkspace> {
  const tools = inspectToolchain(ROOT, ["docker"]);
  if (tools.pulumi === undefined) {
    throw new Error(
      `the Pulumi CLI is missing (${tools.missing.join("; ")}); toolchain/setup.sh builds it (./sandbox test runs it)`,
    );
  }
  const dir = mkdtempSync(join(tmpdir(), "sandbox-docker-engine-"));
  const work = join(dir, "work");
  mkdirSync(join(dir, "state"));
  mkdirSync(join(work, "stacks"), { recursive: true });
  writeFileSync(join(work, "Pulumi.yaml"), "name: sandbox\nruntime: nodejs\nstackConfigDir: stacks\n");
  const pulumiCommand = await PulumiCommand.get({ root: dirname(dirname(tools.pulumi.path)) });
  const envVars = {
    ...engineEnv(ROOT, {}),
    PULUMI_BACKEND_URL: `file://${join(dir, "state")}`,
    PULUMI_HOME: join(dir, "home"),
    PATH: [...tools.pathPrepend, dirname(tools.pulumi.path), process.env.PATH ?? ""].join(":"),
  };
  return {
    dir,
    async newStack(prefix, program, config = {}) {
      const stackName = `${prefix}-${Math.random().toString(36).slice(2, 7)}`;
      writeFileSync(
        join(work, "stacks", `Pulumi.${stackName}.yaml`),
        stringify({
          config: Object.fromEntries(Object.entries(config).map(([k, v]) => [`sandbox:${k}`, v])),
        }),
      );
      return LocalWorkspace.createStack(
        { stackName, projectName: "sandbox", program },
        { workDir: work, pulumiHome: join(dir, "home"), pulumiCommand, envVars },
      );
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
