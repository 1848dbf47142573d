// The concurrency benchmark (bench/concurrent.ts) starts and finishes at the smallest size and writes its JSON. It
// asserts no time: the ratio lives in bench/ as a figure measured in the same run.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { requireDocker } from "../helpers/docker";

describe("bench/concurrent.ts", () => {
  it("runs two tasks at once each way for one round, leaves nothing, and writes the medians and ratio", async () => {
    await requireDocker();
    const out = join(mkdtempSync(join(tmpdir(), "bench-conc-")), "c.json");
    const r = spawnSync(
      process.execPath,
      ["--import", "tsx", "bench/concurrent.ts", "--tasks", "2", "--rounds", "1", "--out", out],
      { cwd: join(__dirname, "../.."), encoding: "utf8", timeout: 180_000 },
    );
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const doc = JSON.parse(readFileSync(out, "utf8")) as {
      tasks: number;
      rounds: number;
      ratio: number;
      leftovers: number;
      medianBatchMs: { launcher: number; dockerRun: number };
    };
    expect(doc).toMatchObject({ tasks: 2, rounds: 1, leftovers: 0 });
    expect(doc.medianBatchMs.launcher).toBeGreaterThan(0);
    expect(Number.isFinite(doc.ratio)).toBe(true);
  }, 240_000);
});
