// The gVisor benchmark (bench/runsc.ts) starts and finishes at the smallest size and writes its JSON. It asserts no
// time: the ratios live in bench/ as figures measured in the same run.
import { describe, expect, it } from "vitest";
import { runSmallBenchmark } from "../helpers/bench";
import { requireDocker } from "../helpers/docker";

describe("bench/runsc.ts", () => {
  it("runs one round of each way and writes the medians and ratios", async () => {
    await requireDocker();
    const doc = runSmallBenchmark<{
      runs: number;
      medianMs: Record<string, number>;
      ratios: { launcherRunscToDockerRunRunsc: number; runscToRunc: number };
    }>("runsc.ts", ["1"]);
    expect(doc.runs).toBe(1);
    expect(Object.keys(doc.medianMs).sort()).toEqual([
      "Launcher (runc)",
      "Launcher (runsc)",
      "docker run --rm --runtime=runsc",
    ]);
    expect(Number.isFinite(doc.ratios.launcherRunscToDockerRunRunsc)).toBe(true);
  }, 240_000);
});
