import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { deadline } from "../../components/model";

describe("deadline", () => {
  it("puts timeout in front of the command when the engine's init is PID 1 (Docker)", () => {
    expect(deadline(30, ["sh", "/job/run.sh"], "engine-init")).toEqual([
      "timeout",
      "-s",
      "KILL",
      "30",
      "sh",
      "/job/run.sh",
    ]);
  });

  it("keeps a shell as PID 1 that runs timeout as its child when the command would be PID 1 (Kubernetes)", () => {
    expect(deadline(600, ["sh", "/job/run.sh"], "command")).toEqual([
      "sh",
      "-c",
      'timeout -s KILL 600 "$@" & wait $!',
      "sh",
      "sh",
      "/job/run.sh",
    ]);
  });

  // The shell form run for real: the command's words reach it unchanged, its exit code is the container's, and a
  // command that outlives the deadline is killed.
  const run = (argv: string[]) => spawnSync(argv[0] ?? "", argv.slice(1), { encoding: "utf8" });

  it("passes the command's words through the shell unchanged, and its exit code back", () => {
    const r = run(
      deadline(10, ["sh", "-c", 'printf "%s|" "$@"; exit 3', "x", "a b", "$HOME", "'q'"], "command"),
    );
    expect(r.stdout).toBe("a b|$HOME|'q'|");
    expect(r.status).toBe(3);
  });

  it("kills a command that outlives the deadline", () => {
    const started = Date.now();
    const r = run(deadline(1, ["sleep", "30"], "command"));
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(r.status).toBe(128 + 9);
  });
});
