// The launch benchmark (bench/launch.ts) starts and finishes at the smallest size: one run of each way on a stack of
// its own, and writes its JSON. It asserts no time: speed goals live in bench/ as ratios measured in the same run.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { dockerRunArgs } from "../../bench/launch";
import { requireDocker } from "../helpers/docker";

const repo = join(__dirname, "../..");
const stack = `bl${Math.random().toString(36).slice(2, 8)}`;
const stackFile = join(repo, "stacks", `Pulumi.${stack}.yaml`);
const dir = mkdtempSync(join(tmpdir(), "sandbox-bench-launch-"));

afterAll(() => {
  rmSync(stackFile, { force: true });
  rmSync(dir, { recursive: true, force: true });
});

describe("bench/launch.ts", () => {
  it("maps the create body to docker run flags and refuses a field it has no flag for", () => {
    const args = dockerRunArgs({
      Image: "img:1",
      Cmd: ["true"],
      User: "1000:1000",
      HostConfig: { CapDrop: ["ALL"], ReadonlyRootfs: true, PidsLimit: 64, RestartPolicy: { Name: "no" } },
    });
    expect(args).toEqual([
      "--user",
      "1000:1000",
      "--cap-drop",
      "ALL",
      "--read-only",
      "--pids-limit",
      "64",
      "img:1",
      "true",
    ]);
    expect(() => dockerRunArgs({ Image: "img:1", HostConfig: { Privileged: true, OomScoreAdj: 5 } })).toThrow(
      /Privileged, OomScoreAdj/,
    );
  });

  it("runs one of each way and writes min, median, p95 and the ratios", async () => {
    await requireDocker();
    writeFileSync(
      stackFile,
      [
        "config:",
        "  sandbox:backend: docker",
        `  sandbox:jobRoot: ${join(dir, "jobs")}`,
        "  sandbox:budget:",
        "    monthlyCapUsd: 10",
        "    usdPerVcpuHour: 0.004",
        "    usdPerGbHour: 0.002",
        "    hoursPerMonth: 730",
        "    maxConcurrentTasks: 1",
        "  sandbox:templates:",
        "    default:",
        "      image: sandbox-busybox:1",
        "",
      ].join("\n"),
    );
    const out = join(dir, "launch.json");
    const r = spawnSync(
      join(repo, "node_modules/.bin/node"),
      ["--import", "tsx", join(repo, "bench/launch.ts"), "--runs", "1", "--stack", stack, "--out", out],
      { cwd: repo, encoding: "utf8", timeout: 300_000 },
    );
    expect(r.stderr).not.toMatch(/bench\/launch.ts:/);
    expect(r.status).toBe(0);
    const doc = JSON.parse(readFileSync(out, "utf8")) as {
      results: Record<
        string,
        { runs: number; minSeconds: number; medianSeconds: number; p95Seconds: number }
      >;
      ratios: { frontToDockerRun: number; libraryToDockerRun: number };
      frontFixedStartSeconds: number;
    };
    expect(Object.keys(doc.results).sort()).toEqual(["./sandbox run", "Launcher.run", "docker run --rm"]);
    for (const res of Object.values(doc.results)) {
      expect(res.runs).toBe(1);
      expect(res.minSeconds).toBeGreaterThan(0);
      expect(res.p95Seconds).toBeGreaterThanOrEqual(res.medianSeconds);
    }
    expect(doc.ratios.frontToDockerRun).toBeGreaterThan(0);
    expect(doc.ratios.libraryToDockerRun).toBeGreaterThan(0);
    expect(doc.frontFixedStartSeconds).toBeCloseTo(
      (doc.results["./sandbox run"]?.medianSeconds ?? 0) - (doc.results["Launcher.run"]?.medianSeconds ?? 0),
    );
  });
});
