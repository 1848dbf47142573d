// bench/chart.ts: the results under bench/results/ as one SVG chart and the README's table; bars from what each
// benchmark writes, goals marked met or missed, a broken result file named.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { barsFrom, chartSvg, chartTable } from "../../bench/chart";

function resultsDir(files: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), "bench-chart-"));
  for (const [f, doc] of Object.entries(files))
    writeFileSync(join(dir, f), typeof doc === "string" ? doc : JSON.stringify(doc));
  return dir;
}

describe("bench/chart.ts", () => {
  it("reads each benchmark's ratios, leaves out a benchmark with no result, and marks each goal", () => {
    const dir = resultsDir({
      "launch.json": { ratios: { frontToDockerRun: 1.7, libraryToDockerRun: 0.8 } },
      "preview.json": { results: { "5": { ratio: 2.1 }, "500": { ratio: 1.15 } } },
    });
    const bars = barsFrom(dir);
    expect(bars.map((b) => [b.label, b.ratio, b.goal])).toEqual([
      ["./sandbox run", 1.7, 1.2],
      ["Launcher.run (cold)", 0.8, 0.9],
      ["5 containers", 2.1, undefined],
      ["500 containers", 1.15, 1.2],
    ]);
    const table = chartTable(bars);
    expect(table).toContain("| launch vs docker run --rm | ./sandbox run | 1.70× | ≤ 1.2× (missed) |");
    expect(table).toContain("| preview with the pack vs without | 500 containers | 1.15× | ≤ 1.2× (met) |");
    const svg = chartSvg(bars, "t < u");
    expect(svg.startsWith("<svg ")).toBe(true);
    expect(svg).toContain("t &lt; u");
    // One bar a result: red for the missed goal, green for the met ones, blue for the one without a goal.
    expect(svg.match(/<rect x=/g)?.length).toBe(4);
    expect(svg.match(/fill="#c2543d"/g)?.length).toBe(1);
    expect(svg.match(/fill="#4c9a5b"/g)?.length).toBe(2);
    expect(svg.match(/fill="#6b8fb5"/g)?.length).toBe(1);
  });

  it("names a result file that is not JSON or lacks a ratio", () => {
    expect(() => barsFrom(resultsDir({ "pool.json": "{not json" }))).toThrow(/pool\.json: not JSON/);
    expect(() => barsFrom(resultsDir({ "updown.json": { ratios: { up: {} } } }))).toThrow(
      /updown\.json: no number at ratios\.up\.frontToAutomationApi/,
    );
  });
});
