/**
 * `docker.Container` inputs as the provider turns them into the Engine API body: a `volumes[].volumeName` that is a
 * path is a bind (the provider sends `<name>:<path>`, the daemon reads a path as a host folder), `uploads[].source`
 * copies a file of the deployer's machine into the container, and `cpus` is sent as whole billionths of a CPU.
 */
import { describe, expect, it } from "vitest";
import { failing } from "./container-fixture";

describe("docker.Container inputs as the provider sends them", () => {
  it("passes the hardened container", () => {
    expect(failing({})).toEqual([]);
  });

  it("reads a volumeName that is a path as a bind of that host folder", () => {
    expect(failing({ volumes: [{ volumeName: "/var/run/docker.sock", containerPath: "/s" }] })).toContain(
      "sandbox-disallow-runtime-socket",
    );
    expect(failing({ volumes: [{ volumeName: "//etc", containerPath: "/e", readOnly: true }] })).toContain(
      "sandbox-disallow-sensitive-host-mounts",
    );
    expect(failing({ volumes: [{ volumeName: "~/.ssh", containerPath: "/k", readOnly: true }] })).toContain(
      "sandbox-disallow-sensitive-host-mounts",
    );
    expect(failing({ volumes: [{ volumeName: "data", containerPath: "/data" }] })).toEqual([]);
  });

  it("judges an upload's source as the deployer's file it copies", () => {
    expect(failing({ uploads: [{ file: "/k/id", source: "/home/dev/.ssh/id_ed25519" }] })).toContain(
      "sandbox-disallow-sensitive-host-mounts",
    );
    expect(failing({ uploads: [{ file: "/app/run.sh", content: "echo hi" }] })).toEqual([]);
  });

  it("reads a CPU value that comes to no billionth of a CPU as no limit", () => {
    expect(failing({ cpus: "0.0000000001" })).toContain("sandbox-require-resource-limits");
    expect(failing({ cpus: "0" })).toContain("sandbox-require-resource-limits");
    expect(failing({ cpus: "0.000000001" })).toEqual([]);
  });
});
