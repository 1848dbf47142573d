// The gVisor benchmark (bench/runsc.ts) starts and finishes at the smallest size and writes its JSON. It asserts no
// time: the ratios live in bench/ as figures measured in the same run.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { requireDocker } from "../helpers/docker";

describe("bench/runsc.ts", () => {
  it("runs one round of each way and writes the medians and ratios", async () => {
    await requireDocker();
    const out = join(mkdtempSync(join(tmpdir(), "bench-runsc-")), "runsc.json");
    const r = spawnSync(process.execPath, ["--import", "tsx", "bench/runsc.ts", "1", "--out", out], {
      cwd: join(__dirname, "../.."),
      encoding: "utf8",
      timeout: 180_000,
    });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const doc = JSON.parse(readFileSync(out, "utf8")) as {
      runs: number;
      medianMs: Record<string, number>;
      ratios: { launcherRunscToDockerRunRunsc: number; runscToRunc: number };
    };
    expect(doc.runs).toBe(1);
    expect(Object.keys(doc.medianMs).sort()).toEqual([
      "Launcher (runc)",
      "Launcher (runsc)",
      "docker run --rm --runtime=runsc",
    ]);
    expect(Number.isFinite(doc.ratios.launcherRunscToDockerRunRunsc)).toBe(true);
  }, 240_000);
});
