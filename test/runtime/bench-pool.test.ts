// The pool benchmark (bench/pool.ts) starts and finishes at the smallest size and writes its JSON: each way's
// median to its container removed and to its output in hand, their ratios to `docker run --rm`, and the engine floor
// (what a cold launch cannot go below). It asserts no time: the goal lives in bench/ as a ratio measured in one run.
import { describe, expect, it } from "vitest";
import { runSmallBenchmark } from "../helpers/bench";
import { requireDocker } from "../helpers/docker";

describe("bench/pool.ts", () => {
  it("runs one round of each way, the engine floor included, and writes medians and ratios", async () => {
    await requireDocker();
    const doc = runSmallBenchmark<{
      runs: number;
      medianMs: Record<string, number>;
      ratioToDockerRun: Record<string, number>;
      medianInHandMs: Record<string, number>;
      floor: string;
    }>("pool.ts", ["1"]);
    expect(doc.runs).toBe(1);
    expect(Object.keys(doc.medianMs).sort()).toEqual(["cold", "docker run --rm", "engine floor", "pooled"]);
    for (const v of Object.values(doc.medianMs)) expect(v).toBeGreaterThan(0);
    expect(doc.ratioToDockerRun["docker run --rm"]).toBe(1);
    expect(Number.isFinite(doc.ratioToDockerRun.pooled)).toBe(true);
    // To its output in hand: every way the launcher or the engine API gives it, not `docker run --rm`.
    expect(Object.keys(doc.medianInHandMs).sort()).toEqual(["cold", "engine floor", "pooled"]);
    for (const v of Object.values(doc.medianInHandMs)) expect(v).toBeGreaterThan(0);
    expect(doc.floor).toMatch(/the least a cold launch can take/);
  }, 240_000);
});
