/**
 * `run` shows a task's output as it is written, through the front on the real engine: the task waits for a file
 * that the test writes into its job folder only once it has seen the task's first line, so the task finishes early
 * only if that line reached the front while the task still ran. `--json` still holds the output in its one document.
 */
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { main } from "../../cli/main";
import { frontStackOnEngine, oneTemplate } from "../helpers/front-stack";

const stack = frontStackOnEngine("rl", "rl", oneTemplate());

/** The task: a first line on each stream, then up to 30 s for the file `go`, then whether it came. */
const WAITS = [
  "sh",
  "-c",
  'echo ready; echo "on stderr" >&2; i=0; while [ ! -f go ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done; [ -f go ] && echo went || echo "never went"',
];

describe("run's live output", () => {
  it("reaches the front while the task runs, on both streams", async () => {
    const out: string[] = [];
    const err: string[] = [];
    let released = false;
    /** Once the first line is out: the task's job folder (the one folder in the job root) gets its `go` file. */
    const release = () => {
      if (released || !out.join("").includes("ready\n")) return;
      const folder = readdirSync(stack.jobRoot).find(
        (e) => !e.startsWith(".") && existsSync(join(stack.jobRoot, e)),
      );
      if (folder === undefined) return;
      writeFileSync(join(stack.jobRoot, folder, "go"), "");
      released = true;
    };
    const code = await main(
      ["run", "rl", "default", "--", ...WAITS],
      {
        out: (t) => {
          out.push(t);
          release();
        },
        err: (t) => err.push(t),
      },
      stack.root,
    );
    expect(code, err.join("")).toBe(0);
    expect(released).toBe(true);
    expect(out.join("")).toBe("ready\nwent\n");
    expect(err.join("")).toContain("on stderr\n");
    // Shown once: the result does not repeat what was shown live.
    expect(err.join("").match(/on stderr/g)).toHaveLength(1);
  }, 90_000);

  it("leaves no timer running once it returned, so the front's process ends with the task", async () => {
    // Every timer set while the front runs, and whether it has fired or was cleared since.
    const pending = new Map<NodeJS.Timeout, string>();
    const set = globalThis.setTimeout;
    const clear = globalThis.clearTimeout;
    const setSpy = vi.spyOn(globalThis, "setTimeout").mockImplementation(((
      fn: (...a: unknown[]) => void,
      ms?: number,
      ...args: unknown[]
    ) => {
      const t = set(
        (...a: unknown[]) => {
          pending.delete(t);
          fn(...a);
        },
        ms,
        ...args,
      );
      pending.set(
        t,
        `${ms} ms, set at ${new Error().stack
          ?.split("\n")
          .find((l) => l.includes("/runtime/") || l.includes("/cli/"))
          ?.trim()}`,
      );
      return t;
    }) as typeof setTimeout);
    const clearSpy = vi.spyOn(globalThis, "clearTimeout").mockImplementation((t) => {
      pending.delete(t as NodeJS.Timeout);
      clear(t);
    });
    try {
      const r = await stack.front("run", "rl", "default", "--", "echo", "done");
      expect(r.code, r.err).toBe(0);
      expect(r.out).toBe("done\n");
    } finally {
      setSpy.mockRestore();
      clearSpy.mockRestore();
    }
    // A timer that holds no reference does not keep the process alive.
    expect([...pending].filter(([t]) => t.hasRef()).map(([, at]) => at)).toEqual([]);
  }, 90_000);

  it("with --json, holds the output in its one document and shows nothing before it", async () => {
    const r = await stack.front("run", "rl", "default", "--json", "--", "sh", "-c", "echo one; echo two >&2");
    expect(r.code, r.err).toBe(0);
    const doc = JSON.parse(r.out) as { task: { stdout: string; stderr: string } };
    expect(doc.task.stdout).toBe("one\n");
    expect(doc.task.stderr).toBe("two\n");
    expect(r.err).not.toContain("two");
  }, 90_000);
});
