// A task verb that finds no engine runs the front's engine set-up once, then tries again, and reports one failure:
// the second attempt's. No engine is reached: DOCKER_HOST names sockets that do not exist.
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadStack } from "../../cli/main";
import { runTaskVerb } from "../../cli/runtime";

const repo = join(__dirname, "../..");
const saved = process.env.DOCKER_HOST;
afterEach(() => {
  if (saved === undefined) delete process.env.DOCKER_HOST;
  else process.env.DOCKER_HOST = saved;
});

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (t: string) => out.push(t), err: (t: string) => err.push(t) }, out, err };
}

describe("the engine set-up of the task verbs", () => {
  it.each(["run", "off"] as const)(
    "%s: runs it once, retries, and reports the retry's failure once",
    async (verb) => {
      process.env.DOCKER_HOST = "unix:///nonexistent/first.sock";
      const c = capture();
      let calls = 0;
      const code = await runTaskVerb(
        verb,
        loadStack(repo, "dev"),
        verb === "run" ? ["default", "--", "true"] : [],
        c.io,
        true,
        () => {
          calls++;
          process.env.DOCKER_HOST = "unix:///nonexistent/second.sock";
          return true;
        },
      );
      expect(calls).toBe(1);
      expect(code).toBe(3);
      expect(c.out).toHaveLength(1);
      const doc = JSON.parse(c.out[0] ?? "") as { error: { kind: string; message: string } };
      expect(doc.error.kind).toBe("no-engine");
      expect(doc.error.message).toMatch(/second\.sock/);
    },
  );

  it("does not retry when the set-up fails, nor without one", async () => {
    process.env.DOCKER_HOST = "unix:///nonexistent/only.sock";
    let calls = 0;
    const failing = capture();
    const code = await runTaskVerb("run", loadStack(repo, "dev"), ["default"], failing.io, false, () => {
      calls++;
      return false;
    });
    expect([calls, code]).toEqual([1, 3]);
    expect(failing.err.join("")).toMatch(/^run: no Docker engine answers .*only\.sock/);
    const none = capture();
    expect(await runTaskVerb("run", loadStack(repo, "dev"), ["default"], none.io, false)).toBe(3);
    expect(none.err).toHaveLength(1);
  });

  it("off: an engine address the client refuses is the engine's problem (exit 3), not an internal error", async () => {
    process.env.DOCKER_HOST = "tcp://127.0.0.1:1";
    const c = capture();
    expect(await runTaskVerb("off", loadStack(repo, "dev"), [], c.io, false)).toBe(3);
    expect(c.err.join("")).toMatch(/^off: no Docker engine answers .*is not a unix socket/);
  });

  it("never runs it for bad input", async () => {
    let calls = 0;
    const c = capture();
    const code = await runTaskVerb("run", loadStack(repo, "dev"), ["default", "--nope"], c.io, false, () => {
      calls++;
      return true;
    });
    expect([calls, code]).toEqual([0, 2]);
  });
});
