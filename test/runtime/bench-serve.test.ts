// The launch service's benchmark (bench/serve.ts) starts and finishes at its smallest size: one round of each way
// and two small concurrency levels, on stacks of its own, and writes its JSON with nothing left on the engine. It
// asserts no time: speed goals live in bench/ as ratios measured in the same run.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { serveSocketPath } from "../../cli/serve-run";
import { requireDocker, TEST_IMAGE } from "../helpers/docker";

const repo = join(__dirname, "../..");
const stack = `bs${Math.random().toString(36).slice(2, 8)}`;
const stackFile = join(repo, "stacks", `Pulumi.${stack}.yaml`);
const dir = mkdtempSync(join(tmpdir(), "sandbox-bench-serve-"));

afterAll(() => {
  rmSync(stackFile, { force: true });
  rmSync(dir, { recursive: true, force: true });
});

describe("bench/serve.ts", () => {
  it("measures launches through the service at each level and one task three ways, and stops its services", async () => {
    await requireDocker();
    writeFileSync(
      stackFile,
      [
        "config:",
        `  sandbox:jobRoot: ${join(dir, "jobs")}`,
        "  sandbox:budget:",
        "    monthlyCapUsd: 10",
        "    maxConcurrentTasks: 1",
        "  sandbox:templates:",
        "    default:",
        `      image: ${TEST_IMAGE}`,
        "",
      ].join("\n"),
    );
    const out = join(dir, "serve.json");
    const r = spawnSync(
      process.execPath,
      ["--import", "tsx", "bench/serve.ts", "--runs", "1", "--levels", "1,2", "--stack", stack, "--out", out],
      { cwd: repo, encoding: "utf8", timeout: 600_000 },
    );
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const doc = JSON.parse(readFileSync(out, "utf8"));
    expect(doc.concurrency.levels.map((l: { atOnce: number }) => l.atOnce)).toEqual([1, 2]);
    for (const l of doc.concurrency.levels) expect(l.p99Ms).toBeGreaterThanOrEqual(l.p50Ms);
    expect(doc.concurrency.leftovers).toBe(0);
    expect(Object.keys(doc.oneTask.medianMs).sort()).toEqual([
      "./sandbox run (through serve)",
      "SandboxClient.run",
      "docker run --rm",
    ]);
    expect(doc.ratios.clientToDockerRun).toBeGreaterThan(0);
    expect(doc.ratios.p99AtMostToP50Alone).toBeGreaterThan(0);
    // Both services stopped (their sockets gone), and the concurrency stack's file removed.
    expect(existsSync(serveSocketPath(repo, stack))).toBe(false);
    expect(existsSync(serveSocketPath(repo, doc.concurrency.stack))).toBe(false);
    expect(existsSync(join(repo, "stacks", `Pulumi.${doc.concurrency.stack}.yaml`))).toBe(false);
  }, 600_000);
});
