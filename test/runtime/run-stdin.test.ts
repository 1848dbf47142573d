// `run -i`: the task reads the command's standard input, streamed as it comes and closed at its end; without -i a
// task reads an empty input (it never waits on the terminal); a task that stops reading early ends all the same.
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { main } from "../../cli/main";
import { frontStackOnEngine, oneTemplate } from "../helpers/front-stack";

const stack = frontStackOnEngine("ri", "ri", oneTemplate());

async function run(stdin: Readable | undefined, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const io = {
    out: (t: string) => out.push(t),
    err: (t: string) => err.push(t),
    ...(stdin === undefined ? {} : { stdin: () => stdin }),
  };
  const code = await main(["run", "ri", "default", ...argv], io, stack.root);
  return { code, out: out.join(""), err: err.join("") };
}

describe("run -i", () => {
  it("gives the task this command's input, as it comes, and closes it at its end", async () => {
    const r = await run(
      Readable.from(["hello\n", "world\n"]),
      "-i",
      "--",
      "sh",
      "-c",
      "tr a-z A-Z; echo done",
    );
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe("HELLO\nWORLD\ndone\n");
  });

  it("streams a large input whole", async () => {
    const chunk = "x".repeat(64 * 1024);
    const big = Readable.from(Array.from({ length: 32 }, () => chunk));
    const r = await run(big, "--stdin", "--", "sh", "-c", "wc -c");
    expect(r.code, r.err).toBe(0);
    expect(r.out.trim()).toBe(String(32 * 64 * 1024));
  });

  it("without -i the task reads an empty input, even when the command has one", async () => {
    const r = await run(Readable.from(["not for the task\n"]), "--", "sh", "-c", "cat; echo end");
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe("end\n");
  });

  it("ends when the task stops reading, whatever is left of an endless input", async () => {
    const endless = new Readable({
      read() {
        this.push("y\n");
      },
    });
    const r = await run(endless, "-i", "--", "sh", "-c", "head -n 2; exit 3");
    expect(r.code).toBe(3);
    expect(r.out).toBe("y\ny\n");
    endless.destroy();
  });
});
