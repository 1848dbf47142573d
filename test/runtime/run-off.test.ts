import { describe, expect, it } from "vitest";
import { main } from "../../cli/main";
import { projectLeftovers } from "../../runtime/offSwitch";
import { frontStackOnEngine, oneTemplate } from "../helpers/front-stack";

const stack = frontStackOnEngine("ro", "ro", oneTemplate());
const { front, name } = stack;

describe("a task the off switch stops", () => {
  it("ends with exit 137, what it had shown and one line saying the off switch stopped it", async () => {
    const out: string[] = [];
    const err: string[] = [];
    const running = main(
      ["run", "ro", "default", "--", "sh", "-c", "echo started; sleep 50; echo never"],
      { out: (t) => out.push(t), err: (t) => err.push(t) },
      stack.root,
    );
    // The off switch once the task has shown its first line (on a loaded machine that may take a while).
    for (let i = 0; i < 1200 && !out.join("").includes("started\n"); i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(out.join("")).toBe("started\n");
    const off = await front("off", "ro", "--yes");
    expect(off.code, off.err).toBe(0);
    const r = { code: await running, out: out.join(""), err: err.join("") };
    expect(r.code).toBe(137);
    expect(r.out).toBe("started\n");
    expect(r.err).toMatch(/task [a-z0-9-]+: stopped by the off switch \(exit 137\)/);
    expect(r.err).not.toMatch(/HTTP code|409|404|no such container/i);
    expect(await projectLeftovers(stack.docker(), name)).toEqual([]);
    const audit = await front("audit", "ro", "--json");
    const [last] = (JSON.parse(audit.out) as { runs: { stoppedBy: string | null; status: string }[] }).runs;
    expect(last).toMatchObject({ stoppedBy: "off", status: "done" });
  }, 120_000);
});
