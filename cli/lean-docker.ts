/**
 * The CLI front's Docker client without the parts it never uses. dockerode loads two things at start whatever the
 * call: BuildKit sessions (`@grpc/grpc-js`, `@grpc/proto-loader`, protobufjs) and Docker over SSH (`ssh2`), about
 * 110 ms of a task verb's start. The front drives the local engine over its unix socket only (a `DOCKER_HOST` of
 * another scheme is refused: runtime/docker/client.ts) and builds no image, so in the front's own process those two
 * files are stand-ins, put in Node's module cache before dockerode loads, that fail naming why if anything ever
 * calls them. Only the front calls this: the library leaves a user's dockerode whole.
 */
import { createRequire, Module } from "node:module";

let installed = false;

/** Puts the stand-ins in this process's module cache, once. Where dockerode cannot be found, does nothing. */
export function leanDockerClient(): void {
  if (installed) return;
  installed = true;
  let files: [string, string][];
  try {
    const dockerode = createRequire(require.resolve("dockerode"));
    files = [
      [dockerode.resolve("./session.js"), "BuildKit sessions (image builds)"],
      [createRequire(dockerode.resolve("docker-modem")).resolve("./ssh.js"), "Docker over SSH"],
    ];
  } catch {
    return;
  }
  for (const [file, what] of files) {
    if (require.cache[file] !== undefined) continue; // loaded already: whole
    const stand = new Module(file);
    stand.filename = file;
    stand.loaded = true;
    stand.exports = () => {
      throw new Error(
        `the sandbox front drives the local Docker engine over its unix socket; ${what} is not loaded`,
      );
    };
    require.cache[file] = stand;
  }
}
