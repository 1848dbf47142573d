// policy/run-pack, the launcher the engine starts as an analyzer plugin: it must load the TypeScript pack with the
// project's Node and print the analyzer's port on its first line, wherever the engine starts it from.
import { spawn } from "node:child_process";
import { accessSync, constants, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { POLICY_PACK } from "./workspace";

describe("policy/run-pack", () => {
  it("is an executable file", () => {
    expect(() => accessSync(POLICY_PACK, constants.X_OK)).not.toThrow();
  });

  it("serves the pack and prints its port, started from any folder", async () => {
    // The engine address is only used for logging once the engine connects; any address will do here.
    const child = spawn(POLICY_PACK, ["127.0.0.1:1"], { cwd: tmpdir(), stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
    });
    try {
      const firstLine = await new Promise<string>((resolveLine, reject) => {
        child.stdout.on("data", (d: Buffer) => {
          out += d.toString();
          if (out.includes("\n")) resolveLine(out.split("\n")[0] ?? "");
        });
        child.on("exit", (code) =>
          reject(new Error(`run-pack exited (${code}) before printing a port:\n${err}`)),
        );
      });
      expect(firstLine).toMatch(/^\d+$/);
      expect(Number(firstLine)).toBeGreaterThan(0);
    } finally {
      child.kill("SIGTERM");
    }
  }, 60_000);

  it("stops once the engine that started it is gone", async () => {
    // A stand-in engine: a shell that starts the launcher, prints its pid, and exits without closing it.
    const engine = spawn("sh", ["-c", '"$0" 127.0.0.1:1 >/dev/null 2>&1 & echo $!; sleep 2', POLICY_PACK], {
      cwd: tmpdir(),
      stdio: ["ignore", "pipe", "ignore"],
    });
    let out = "";
    engine.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    await new Promise((r) => engine.once("exit", r));
    const pid = Number(out.trim());
    expect(pid).toBeGreaterThan(0);
    // Gone, or a zombie waiting for its new parent to reap it: either way the analyzer no longer runs.
    const running = () => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
      } catch {
        return false;
      }
    };
    const deadline = Date.now() + 15_000;
    while (running() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    try {
      expect(running()).toBe(false);
    } finally {
      if (running()) process.kill(pid, "SIGKILL");
    }
  }, 60_000);
});
