// The ledger benchmark (bench/ledger.ts) starts and finishes at the smallest size and writes its JSON. It asserts
// no time: the goal (the ledger adds under 2 % to a launch) lives in bench/ as a ratio measured in the same run.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { requireDocker } from "../helpers/docker";

describe("bench/ledger.ts", () => {
  it("runs one round each way and writes medians and the ratio", async () => {
    await requireDocker();
    const out = join(mkdtempSync(join(tmpdir(), "bench-ledger-")), "ledger.json");
    const r = spawnSync(process.execPath, ["--import", "tsx", "bench/ledger.ts", "1", "--out", out], {
      cwd: join(__dirname, "../.."),
      encoding: "utf8",
      timeout: 180_000,
    });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const doc = JSON.parse(readFileSync(out, "utf8")) as {
      runs: number;
      launch: { ratio: number; withLedger: { medianMs: number } };
      ledgerAlone: { medianMs: number };
    };
    expect(doc.runs).toBe(1);
    expect(doc.launch.withLedger.medianMs).toBeGreaterThan(0);
    expect(Number.isFinite(doc.launch.ratio)).toBe(true);
    expect(doc.ledgerAlone.medianMs).toBeGreaterThan(0);
  }, 240_000);
});
