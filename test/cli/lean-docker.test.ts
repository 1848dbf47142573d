// The front's Docker client without its BuildKit and SSH parts (cli/lean-docker.ts): in the front's process those
// files load as stand-ins, so their heavy dependencies never load, the client still talks to a unix socket, and a
// call of a stand-in fails naming why.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const REPO = join(__dirname, "../..");

function inNode(script: string): { loaded: string[]; thrown: string; socketPath: string } {
  const r = spawnSync(process.execPath, ["--import", "tsx", "-e", script], { cwd: REPO, encoding: "utf8" });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout);
}

const probe = (lean: boolean) => `
  ${lean ? `require(${JSON.stringify(join(REPO, "cli/lean-docker.ts"))}).leanDockerClient();` : ""}
  const { dockerClient } = require(${JSON.stringify(join(REPO, "runtime/docker/client.ts"))});
  const client = dockerClient({ DOCKER_HOST: "unix:///no/such.sock" });
  let thrown = "";
  try { require("docker-modem/lib/ssh.js")({}); } catch (e) { thrown = e.message; }
  process.stdout.write(JSON.stringify({
    loaded: Object.keys(require.cache).filter((f) => /\\/node_modules\\/(ssh2|@grpc|protobufjs)\\//.test(f)),
    thrown,
    socketPath: client.modem.socketPath,
  }));`;

describe("leanDockerClient", () => {
  it("keeps ssh2 and gRPC out of the front's process, and the client on its unix socket", () => {
    const lean = inNode(probe(true));
    expect(lean.loaded).toEqual([]);
    expect(lean.socketPath).toBe("/no/such.sock");
    expect(lean.thrown).toMatch(
      /drives the local Docker engine over its unix socket; Docker over SSH is not loaded/,
    );
  });

  it("without it, dockerode loads them (the check above can see them)", () => {
    expect(inNode(probe(false)).loaded.length).toBeGreaterThan(0);
  });
});
