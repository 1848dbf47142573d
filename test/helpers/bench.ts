import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";

/**
 * Runs a benchmark of bench/ at its smallest size (`args`, then `--out` a fresh file) in a Node process of its own,
 * expects it to finish with nothing on stderr, and returns the JSON it wrote.
 */
export function runSmallBenchmark<T>(file: string, args: readonly string[]): T {
  const out = join(mkdtempSync(join(tmpdir(), "bench-")), "result.json");
  const r = spawnSync(process.execPath, ["--import", "tsx", join("bench", file), ...args, "--out", out], {
    cwd: join(__dirname, "../.."),
    encoding: "utf8",
    timeout: 180_000,
  });
  expect(r.stderr).toBe("");
  expect(r.status).toBe(0);
  return JSON.parse(readFileSync(out, "utf8")) as T;
}
