// The up/destroy benchmark (bench/updown.ts) starts and finishes at the smallest size: one template, one run of the
// front, the Automation API and the Docker CLI; every up must leave the project's objects and every destroy none
// (else the benchmark fails), and its stack file is gone after. It asserts no time.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseUpDownOptions } from "../../bench/updown";
import { requireEngineToolchain } from "../engine/toolchain";
import { runSmallBenchmark } from "../helpers/bench";
import { requireDocker } from "../helpers/docker";

const stacks = join(__dirname, "../../stacks");

describe("bench/updown.ts", () => {
  it("refuses template counts and runs it cannot use, naming the option", () => {
    expect(() => parseUpDownOptions(["--templates", "0"])).toThrow(/--templates "0"/);
    expect(() => parseUpDownOptions(["--runs", "1.5"])).toThrow(/--runs "1.5"/);
  });

  it("brings one template up and down three ways and writes the medians and ratios", async () => {
    await requireDocker();
    requireEngineToolchain();
    const doc = runSmallBenchmark<{
      objects: number;
      results: Record<string, { up: { runs: number }; destroy: { runs: number } }>;
      ratios: Record<"up" | "destroy", { frontToAutomationApi: number; frontToDockerCli: number }>;
    }>("updown.ts", ["--templates", "1", "--runs", "1"]);
    expect(doc.objects).toBe(3);
    expect(Object.keys(doc.results).sort()).toEqual(["./sandbox", "Automation API", "docker CLI"]);
    for (const r of Object.values(doc.results)) expect([r.up.runs, r.destroy.runs]).toEqual([1, 1]);
    for (const verb of ["up", "destroy"] as const) {
      expect(Number.isFinite(doc.ratios[verb].frontToAutomationApi)).toBe(true);
      expect(Number.isFinite(doc.ratios[verb].frontToDockerCli)).toBe(true);
    }
    expect(readdirSync(stacks).filter((f) => f.startsWith("Pulumi.bench-updown-"))).toEqual([]);
    expect(existsSync(stacks)).toBe(true);
  }, 300_000);
});
