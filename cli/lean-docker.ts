/**
 * The CLI front's Docker client without the parts it never uses. dockerode loads two things at start whatever the
 * call: BuildKit sessions (`@grpc/grpc-js`, `@grpc/proto-loader`, protobufjs) and Docker over SSH (`ssh2`), about
 * 110 ms of a task verb's start. The front drives the local engine over its unix socket only (a `DOCKER_HOST` of
 * another scheme is refused: runtime/docker/client.ts) and builds no image, so in the front's own process those two
 * files load as stand-ins that fail, naming why, if anything ever calls them. Only the front calls this: the
 * library leaves a user's dockerode whole.
 */
import * as nodeModule from "node:module";

/** The dockerode files replaced, by their path inside node_modules, and what they were for. */
const UNUSED: Readonly<Record<string, string>> = {
  "dockerode/lib/session.js": "BuildKit sessions (image builds)",
  "docker-modem/lib/ssh.js": "Docker over SSH",
};

let installed = false;

/** Installs the stand-ins for this process, once, where Node has `module.registerHooks` (22.15 and later). */
export function leanDockerClient(): void {
  const register = (nodeModule as { registerHooks?: typeof nodeModule.registerHooks }).registerHooks;
  if (installed || typeof register !== "function") return;
  installed = true;
  register({
    load(url, context, nextLoad) {
      for (const [file, what] of Object.entries(UNUSED)) {
        if (!url.endsWith(`/node_modules/${file}`)) continue;
        const message = `the sandbox front drives the local Docker engine over its unix socket; ${what} is not loaded`;
        return {
          format: "commonjs",
          source: `module.exports = function () { throw new Error(${JSON.stringify(message)}); };\n`,
          shortCircuit: true,
        };
      }
      return nextLoad(url, context);
    },
  });
}
