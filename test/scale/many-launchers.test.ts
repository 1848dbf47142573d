// Many launchers, one cap, on simulated nodes (test/engine/scale.ts, smaller than the benchmark bench/kube-scale.ts):
// 100 kwok nodes, two launcher processes on one ledger on a real PostgreSQL, 500 tasks under a cap that admits fewer,
// the first launcher SIGKILLed part way and another started for the rest of its share.
import { describe, expect, it } from "vitest";
import { runScale } from "../engine/scale";

describe("two launchers on one shared ledger, 100 simulated nodes, 500 tasks", () => {
  it("never cross the cap together, give each admitted task one row and one Job, leave nothing open after a SIGKILL, and off leaves nothing", async () => {
    const r = await runScale({
      nodes: 100,
      tasks: 500,
      launchers: 2,
      concurrency: 20,
      capUsd: 0.6,
      killAt: 0.4,
    });
    const inv = r.invariants;
    // The cap admits fewer than were launched, and the rest are refused by it, with the ledger's reason.
    expect(r.admitted).toBeGreaterThan(50);
    expect(r.admitted).toBeLessThan(500);
    expect(r.refused.cap?.count ?? 0).toBeGreaterThan(0);
    // Which of its two wordings comes first depends on timing: the cap is reached, or this run's maximum would pass it.
    expect(r.refused.cap?.example).toMatch(
      /month-to-date spend \$[\d.]+ \+ this run's maximum .* > the cap for runs \$0\.6|the month's spend \$[\d.]+ has reached the cap for runs \$0\.6/,
    );
    // The charges never crossed the cap, read while the launchers ran and at the end.
    expect(inv.maxChargesUsd).toBeGreaterThan(0);
    expect(inv.maxChargesUsd).toBeLessThanOrEqual(0.6 + 1e-9);
    // One Job for each admitted task, none for a refused one; a task the killed launcher admitted but never
    // created is reconciled as never started.
    expect(inv.rowsWithManyJobs).toEqual([]);
    expect(inv.jobsWithoutRow).toEqual([]);
    expect(inv.rowsWithoutJob).toEqual([]);
    expect(inv.jobsCreated + inv.reconciledWithoutJob).toBe(inv.ledgerRows);
    // Every task a launcher ran ended as it should; the killed launcher's runs were reconciled by the next one.
    expect(r.failedExample).toBeUndefined();
    expect(r.failed).toBe(0);
    expect(inv.reconciled).toBeGreaterThan(0);
    expect(inv.openRuns).toBe(0);
    expect(inv.leftAfterOff).toBe(0);
  }, 900_000);
});
