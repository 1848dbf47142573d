// The concurrency benchmark (bench/concurrent.ts) starts and finishes at the smallest size and writes its JSON. It
// asserts no time: the ratio lives in bench/ as a figure measured in the same run.
import { describe, expect, it } from "vitest";
import { runSmallBenchmark } from "../helpers/bench";
import { requireDocker } from "../helpers/docker";

describe("bench/concurrent.ts", () => {
  it("runs two tasks at once each way for one round, leaves nothing, and writes the medians and ratio", async () => {
    await requireDocker();
    const doc = runSmallBenchmark<{
      tasks: number;
      rounds: number;
      ratio: number;
      leftovers: number;
      medianBatchMs: { launcher: number; dockerRun: number };
    }>("concurrent.ts", ["--tasks", "2", "--rounds", "1"]);
    expect(doc).toMatchObject({ tasks: 2, rounds: 1, leftovers: 0 });
    expect(doc.medianBatchMs.launcher).toBeGreaterThan(0);
    expect(Number.isFinite(doc.ratio)).toBe(true);
  }, 240_000);
});
