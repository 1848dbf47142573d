// bench/off.ts at a tiny size: it runs end to end (every contender, both variants), reports what the README says,
// and leaves nothing behind. No time is asserted: the speed goal lives in the benchmark, as a ratio.
import type Dockerode from "dockerode";
import { beforeAll, describe, expect, it } from "vitest";
import { offBench } from "../../bench/off";
import { OFF_CONCURRENCY } from "../../runtime/offSwitch";
import { requireDocker } from "../helpers/docker";

let docker: Dockerode;

beforeAll(async () => {
  docker = await requireDocker();
});

describe("bench/off.ts", () => {
  it("times each contender on identical sets of 3 containers and leaves nothing", {
    timeout: 300_000,
  }, async () => {
    const lines: string[] = [];
    const r = await offBench({
      containers: 3,
      runs: 1,
      variants: ["running", "created"],
      concurrency: [OFF_CONCURRENCY, Number.POSITIVE_INFINITY],
      cli: true,
      log: (l) => lines.push(l),
    });
    const contenders = [
      `offSwitch (concurrency ${OFF_CONCURRENCY})`,
      "offSwitch (concurrency Infinity)",
      "sandbox off (CLI)",
      "docker rm -f",
    ];
    expect(r.containers).toBe(3);
    expect(Object.keys(r.variants)).toEqual(["running", "created"]);
    for (const variant of ["running", "created"]) {
      expect(Object.keys(r.variants[variant] ?? {})).toEqual(contenders);
      for (const s of Object.values(r.variants[variant] ?? {})) {
        expect(s.runs).toBe(1);
        expect(s.min).toBeGreaterThan(0);
        expect(s.min).toBe(s.median);
        expect(s.p95).toBe(s.median);
      }
      expect(Object.keys(r.ratios[variant] ?? {})).toEqual(contenders.slice(0, 3));
      for (const x of Object.values(r.ratios[variant] ?? {})) expect(Number.isFinite(x) && x > 0).toBe(true);
    }
    // A warm-up and one round, each contender once per variant.
    expect(lines).toHaveLength(2 * 2 * contenders.length);
    expect(lines.filter((l) => l.startsWith("warm-up "))).toHaveLength(2 * contenders.length);
    const left = await docker.listContainers({ all: true, filters: { label: ["sandbox.project"] } });
    expect(
      left.filter((c) => c.Labels["sandbox.project"]?.startsWith(`offb-${process.pid.toString(36)}-`)),
    ).toEqual([]);
  });
});
