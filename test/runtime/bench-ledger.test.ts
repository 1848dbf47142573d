// The ledger benchmark (bench/ledger.ts) starts and finishes at the smallest size and writes its JSON. It asserts
// no time: the goal (the ledger adds under 2 % to a launch) lives in bench/ as a ratio measured in the same run.
import { describe, expect, it } from "vitest";
import { runSmallBenchmark } from "../helpers/bench";
import { requireDocker } from "../helpers/docker";

describe("bench/ledger.ts", () => {
  it("runs one round each way and writes medians and the ratio", async () => {
    await requireDocker();
    const doc = runSmallBenchmark<{
      runs: number;
      launch: { ratio: number; withLedger: { medianMs: number } };
      ledgerAlone: { medianMs: number };
    }>("ledger.ts", ["1"]);
    expect(doc.runs).toBe(1);
    expect(doc.launch.withLedger.medianMs).toBeGreaterThan(0);
    expect(Number.isFinite(doc.launch.ratio)).toBe(true);
    expect(doc.ledgerAlone.medianMs).toBeGreaterThan(0);
  }, 240_000);
});
