/**
 * The generated Engine API table is what the generator writes from the pinned module (toolchain/schemas.sh --check,
 * which builds and runs the generator with Go), and the pin is the toolchain manifest's.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ENGINE_API } from "../../../../policy/sources/docker/schema.generated";
import { TOOLCHAIN } from "../../../../toolchain/manifest";

const ROOT = join(__dirname, "..", "..", "..", "..");

describe("the generated Engine API schema", () => {
  it("is pinned by the toolchain manifest, in the generator's go.mod and the table alike", () => {
    const version = TOOLCHAIN.MOBY_API_VERSION;
    const goMod = readFileSync(join(ROOT, "toolchain", "schemas", "go.mod"), "utf8");
    expect(goMod).toMatch(
      new RegExp(`^require github\\.com/moby/moby/api ${version.replace(/\./g, "\\.")}$`, "m"),
    );
    expect(ENGINE_API.version).toBe(version);
    expect(ENGINE_API.apiVersion).toMatch(/^1\.\d+$/);
  });

  it("is what the generator writes (rerun toolchain/schemas.sh when this fails)", () => {
    const r = spawnSync("bash", [join(ROOT, "toolchain", "schemas.sh"), "--check"], {
      encoding: "utf8",
      timeout: 600_000,
    });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: "" });
  });
});
