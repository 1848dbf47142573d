/**
 * The Docker engine the front is told to use: `DOCKER_HOST` (a unix socket; the toolkit drives the engine of its own
 * machine only) or the default socket. A verb that needs it asks first, so that no engine there is one message and
 * exit 3 at once, with the JSON document under `--json`, and never a daemon started in its place.
 */
import { dockerClient } from "../runtime/docker/client";
import {
  inspectToolchain,
  missingToolchainMessage,
  type ToolchainReport,
  toolkitFiles,
} from "../toolchain/pulumi";
import { packNodeProblem } from "./engine-env";
import type { StackVerb } from "./engine-run";

/** Where the front looks for the engine, as the user would name it. */
export function engineAddress(env: NodeJS.ProcessEnv = process.env): string {
  const host = env.DOCKER_HOST;
  return host !== undefined && host !== "" ? host : "unix:///var/run/docker.sock (the default)";
}

/** Why no engine answers where the front looks, or undefined when one does. */
export async function dockerEngineProblem(env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  try {
    await dockerClient(env).ping();
    return undefined;
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return `no Docker engine answers at ${engineAddress(env)} (${why}); start it, or point DOCKER_HOST at the one to use (\`bash toolchain/docker.sh\` starts a local one as root on Debian, never in place of one named)`;
  }
}

/** Why a stack verb cannot start (exit 3): the failure's `error` and, for the toolchain, what is missing. */
export interface ToolsMissing {
  readonly missing?: readonly string[];
  readonly error: { readonly kind: "no-engine" | "missing-tool"; readonly message: string };
}

/**
 * What must exist before a stack verb starts the engine, in the order a person fixes it: the Docker engine where
 * DOCKER_HOST points (no engine is the answer, whatever else is missing), the toolchain, and the Node the installed
 * package's policy pack runs on (too old is said now, not as a plugin's "exit status 3"). Gives the toolchain found,
 * or why the verb cannot start.
 */
export async function toolsFor(
  verb: StackVerb,
  stack: string,
  root: string,
  backend: "docker" | "kubernetes",
  env: NodeJS.ProcessEnv,
): Promise<ToolchainReport | ToolsMissing> {
  const head = `${verb} ${stack}`;
  if (backend === "docker") {
    const problem = await dockerEngineProblem(env);
    if (problem !== undefined) return { error: { kind: "no-engine", message: `${head}: ${problem}` } };
  }
  const toolchain = inspectToolchain(root, [backend], env);
  if (toolchain.missing.length > 0) {
    const message = `\n${missingToolchainMessage(verb, stack, toolchain)}`;
    return { missing: toolchain.missing, error: { kind: "missing-tool", message } };
  }
  const packs = verb === "up" || verb === "preview";
  const oldNode = packs ? packNodeProblem(toolkitFiles(root).installed, env) : undefined;
  if (oldNode !== undefined) return { error: { kind: "missing-tool", message: `${head}: ${oldNode}` } };
  return toolchain;
}
