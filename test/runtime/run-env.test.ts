import { describe, expect, it } from "vitest";
import { projectLeftovers } from "../../runtime/offSwitch";
import { frontStackOnEngine, oneTemplate } from "../helpers/front-stack";

const stack = frontStackOnEngine("re", "re", oneTemplate());
const { front, name } = stack;
// A GitHub token's shape, made here: the pack's secret rule knows it.
const TOKEN = `ghp_${"a1B2c3D4e5".repeat(3)}abcdef`;

describe("run --env", () => {
  it("gives the task its variables", async () => {
    const r = await front(
      "run",
      "re",
      "default",
      "--env",
      "GREETING=hello there",
      "--env=PART=2",
      "--",
      "sh",
      "-c",
      'echo "$GREETING/$PART"',
    );
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe("hello there/2\n");
  });

  it("refuses a credential with the pack's own rule, before anything starts, never printing it", async () => {
    const r = await front("run", "re", "default", "--env", `GITHUB_TOKEN=${TOKEN}`, "--", "true");
    expect(r.code).toBe(2);
    expect(r.err).toContain("sandbox-disallow-secret-env");
    expect(`${r.out}${r.err}`).not.toContain(TOKEN);
    expect(await projectLeftovers(stack.docker(), name)).toEqual([]);
  });

  it.each([
    ["HTTP_PROXY=http://elsewhere:1", "the toolkit sets HTTP_PROXY itself"],
    ["1BAD=x", "expected NAME=value"],
    ["NOVALUE", "expected NAME=value"],
  ])("refuses --env %s: %s", async (entry, message) => {
    const r = await front("run", "re", "default", "--env", entry, "--", "true");
    expect(r.code).toBe(2);
    expect(r.err).toContain(message);
  });
});

describe("run --timeout", () => {
  it("kills the task at its own shorter deadline, which the ledger prices", async () => {
    const r = await front("run", "re", "default", "--timeout", "1", "--", "sleep", "30");
    expect(r.code).toBe(124);
    expect(r.err).toContain("(killed at its 1 s deadline: exit 124)");
    const audit = await front("audit", "re", "--json");
    const [last] = (JSON.parse(audit.out) as { runs: { maxSeconds: number }[] }).runs;
    expect(last?.maxSeconds).toBeLessThan(60);
  });

  it("refuses a deadline longer than the template's, and one that is not whole seconds", async () => {
    const long = await front("run", "re", "default", "--timeout", "61", "--", "true");
    expect(long.code).toBe(2);
    expect(long.err).toContain('--timeout 61: at most template "default"\'s deadline, 60 s');
    const bad = await front("run", "re", "default", "--timeout", "1.5", "--", "true");
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('--timeout "1.5": expected whole seconds, at least 1');
  });
});
