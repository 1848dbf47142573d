// The preview benchmark (bench/preview.ts) starts and finishes at the smallest sizes: each preview with the pack must
// list the pack as run and passed (else the benchmark fails), and it writes the medians, the ratios and the pack's
// start-up and cost per resource. It asserts no time: the goals live in bench/ as ratios measured in the same run.
import { describe, expect, it } from "vitest";
import { parsePreviewOptions } from "../../bench/preview";
import { requireEngineToolchain } from "../engine/toolchain";
import { runSmallBenchmark } from "../helpers/bench";
import { requireDocker } from "../helpers/docker";

describe("bench/preview.ts", () => {
  it("refuses sizes and runs it cannot use, naming the option", () => {
    expect(() => parsePreviewOptions(["--sizes", "5,x"])).toThrow(/--sizes "5,x"/);
    expect(() => parsePreviewOptions(["--sizes", "0"])).toThrow(/from 1 to 5000/);
    expect(() => parsePreviewOptions(["--runs", "0"])).toThrow(/--runs "0"/);
    expect(parsePreviewOptions(["--sizes", "500,5,5"]).sizes).toEqual([5, 500]);
  });

  it("previews 1 and 3 containers with and without the pack and writes the pack's cost", async () => {
    await requireDocker();
    requireEngineToolchain();
    const doc = runSmallBenchmark<{
      results: Record<
        string,
        { resources: number; ratio: number; withPack: { runs: number }; withoutPack: { runs: number } }
      >;
      pack: { startupSeconds: number; perResourceMs?: number };
    }>("preview.ts", ["--sizes", "1,3", "--runs", "1"]);
    expect(Object.keys(doc.results).sort()).toEqual(["1", "3"]);
    expect(doc.results["3"]?.resources).toBe(4);
    for (const r of Object.values(doc.results)) {
      expect(r.withPack.runs).toBe(1);
      expect(r.withoutPack.runs).toBe(1);
      expect(Number.isFinite(r.ratio)).toBe(true);
    }
    expect(Number.isFinite(doc.pack.startupSeconds)).toBe(true);
    expect(Number.isFinite(doc.pack.perResourceMs)).toBe(true);
  }, 240_000);
});
