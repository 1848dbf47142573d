/**
 * The Docker engine the front is told to use: `DOCKER_HOST` (a unix socket; the toolkit drives the engine of its own
 * machine only) or the default socket. A verb that needs it asks first, so that no engine there is one message and
 * exit 3 at once, with the JSON document under `--json`, and never a daemon started in its place.
 */
import { dockerClient } from "../runtime/docker/client";

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
