/**
 * `run` when every slot is busy, through the front on the real engine, with a project of one slot: without `--wait`
 * it is refused at once, saying so, and the ledger records no alert for it; with `--wait` it says it waits, and runs
 * once the running task ends (released by the test only after the waiting line appeared, so the order is certain).
 */
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { main } from "../../cli/main";
import { frontStackOnEngine, oneTemplate } from "../helpers/front-stack";

const stack = frontStackOnEngine("rw", "rw", oneTemplate({ budget: ["    maxConcurrentTasks: 1"] }));
const { front, name } = stack;

/** Runs the front, calling `onErr` with everything written to stderr so far after each write. */
async function watched(argv: string[], onErr: (err: string) => void) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(
    argv,
    {
      out: (t) => out.push(t),
      err: (t) => {
        err.push(t);
        onErr(err.join(""));
      },
    },
    stack.root,
  );
  return { code, out: out.join(""), err: err.join("") };
}

/** Lets the task that waits for it go on: a file `go` in its job folder (the one folder in the job root). */
function release(): boolean {
  const folder = readdirSync(stack.jobRoot).find(
    (e) => !e.startsWith(".") && existsSync(join(stack.jobRoot, e)),
  );
  if (folder === undefined) return false;
  writeFileSync(join(stack.jobRoot, folder, "go"), "");
  return true;
}

const HOLDS = [
  "sh",
  "-c",
  "i=0; while [ ! -f go ] && [ $i -lt 400 ]; do sleep 0.1; i=$((i+1)); done; echo held",
];

describe("run with every slot busy", () => {
  it("is refused at once without --wait (no alert), and with --wait runs once the slot frees", async () => {
    const first = front("run", "rw", "default", "--", ...HOLDS);
    for (let i = 0; i < 600; i++) {
      const running = await stack.docker().listContainers({
        filters: { label: [`sandbox.project=${name}`], status: ["running"] },
      });
      if (running.length > 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const refused = await front("run", "rw", "default", "--", "echo", "second");
    expect(refused.code).toBe(2);
    expect(refused.err).toContain('1 tasks of project "');
    expect(refused.err).toContain("(`run --wait` waits for a slot)");

    let released = false;
    const waited = await watched(["run", "rw", "default", "--wait=60", "--", "echo", "second"], (err) => {
      if (!released && err.includes("waiting for a slot (up to 60 s)")) released = release();
    });
    expect(released).toBe(true);
    expect(waited.code, waited.err).toBe(0);
    expect(waited.out).toBe("second\n");
    expect((await first).out).toBe("held\n");
    const alerts = await front("alerts", "rw", "--json");
    const kinds = (JSON.parse(alerts.out) as { alerts: { kind: string }[] }).alerts.map((a) => a.kind);
    expect(kinds).not.toContain("launch-refused");
  }, 120_000);
});
