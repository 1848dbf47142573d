/**
 * `up` at the cap, on a real ledger file: refused while it would let the project spend or run as much or more,
 * deployed when it only lowers what the project may spend or run (a smaller cap, fewer slots, templates or agents, a
 * smaller agent cap), compared with what the last successful `up` recorded.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { recordUp, upRefusal } from "../../cli/ledger";
import { type ProjectInput, resolveProject } from "../../components/model";
import { lowersOnly, projectShape } from "../../runtime/deployed-shape";
import { Ledger, meterOf } from "../../runtime/ledger";

// Metered, one vCPU-second a dollar: a 20 s run spends the $20 cap.
const BUDGET = {
  monthlyCapUsd: 20,
  maxConcurrentTasks: 2,
  enforce: "metered" as const,
  usdPerVcpuHour: 3600,
  usdPerGbHour: 0,
};
const JOBS = mkdtempSync(join(tmpdir(), "up-at-cap-jobs-"));
const base = (over: Partial<ProjectInput> = {}) =>
  resolveProject({
    name: "cap-test",
    jobRoot: JOBS,
    budget: BUDGET,
    templates: { a: { image: "x:1" }, b: { image: "x:1" } },
    agents: { ci: { monthlyCapUsd: 10 }, bot: {} },
    ...over,
  });

describe("lowersOnly", () => {
  const before = projectShape(base());
  it.each([
    ["a smaller cap", base({ budget: { ...BUDGET, monthlyCapUsd: 15 } })],
    ["fewer slots", base({ budget: { ...BUDGET, maxConcurrentTasks: 1 } })],
    ["a template less", base({ templates: { a: { image: "x:1" } } })],
    ["an agent less", base({ agents: { ci: { monthlyCapUsd: 10 } } })],
    ["a smaller agent cap", base({ agents: { ci: { monthlyCapUsd: 5 }, bot: {} } })],
  ])("%s lowers", (_what, next) => {
    expect(lowersOnly(projectShape(next), before)).toBe(true);
  });

  it.each([
    ["the same", base()],
    ["a larger cap", base({ budget: { ...BUDGET, monthlyCapUsd: 30 } })],
    [
      "a template more",
      base({ templates: { a: { image: "x:1" }, b: { image: "x:1" }, c: { image: "x:1" } } }),
    ],
    [
      "a larger template",
      base({ templates: { a: { image: "x:1", resources: { vcpu: 2 } }, b: { image: "x:1" } } }),
    ],
    ["an agent more", base({ agents: { ci: { monthlyCapUsd: 10 }, bot: {}, new: {} } })],
    ["an agent's own cap dropped (it may spend the project's)", base({ agents: { ci: {}, bot: {} } })],
    [
      "a smaller cap at cheaper rates",
      base({ budget: { ...BUDGET, monthlyCapUsd: 15, usdPerVcpuHour: 1800 } }),
    ],
  ])("%s does not", (_what, next) => {
    expect(lowersOnly(projectShape(next), before)).toBe(false);
  });
});

describe("upRefusal at the cap", () => {
  it("refuses what does not only lower, and lets a lowering up deploy with a note", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "up-at-cap-")), "l.sqlite");
    const deployed = base();
    const notes: string[] = [];
    const note = (t: string) => notes.push(t);
    expect(await upRefusal(file, deployed, note)).toBeUndefined(); // no ledger yet
    await recordUp(file, deployed, note);
    // The month's cap spent: one run of 20 vCPU-seconds.
    const at = Date.now();
    const ledger = Ledger.open(file, meterOf(deployed), { clock: () => at });
    const run = await ledger.admit({
      id: "r1",
      template: "a",
      specHash: "x",
      command: ["true"],
      container: "c",
      size: { vcpu: 1, memoryMb: 512 },
      maxSeconds: 20,
    });
    await ledger.complete(run.id, { exitCode: 0 }, "done", at + 20_000);
    await ledger.close();

    expect(await upRefusal(file, deployed, note)).toMatch(/has reached its monthly cap/);
    const more = base({ templates: { a: { image: "x:1" }, b: { image: "x:1" }, c: { image: "x:1" } } });
    expect(await upRefusal(file, more, note)).toMatch(/has reached its monthly cap/);
    expect(notes.join("")).toBe("");
    const smaller = base({ budget: { ...BUDGET, monthlyCapUsd: 15 }, templates: { a: { image: "x:1" } } });
    expect(await upRefusal(file, smaller, note)).toBeUndefined();
    expect(notes.join("")).toContain("this up only lowers what it may spend or run, so it deploys");
  });
});
