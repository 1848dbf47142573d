import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { claimScript, gateEntrypoint, shellWord } from "../../runtime/pool-gate";

/** Runs a claim as the gate does: a POSIX shell reads it as a script and execs its command. */
function claim(command: string[], env: Record<string, string> = {}, outer: Record<string, string> = {}) {
  return spawnSync("sh", ["-c", claimScript(command, env)], {
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...outer },
  });
}

describe("the pool gate's claim", () => {
  it("execs the command word for word, whatever the words hold", () => {
    const words = [
      "it's",
      '"double"',
      "$HOME",
      "`id`",
      "$(id)",
      "a  b",
      "line\nbreak",
      "\\",
      "-n",
      "",
      "*",
      "'",
    ];
    const r = claim(["printf", "<%s>\\n", ...words]);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(words.map((w) => `<${w}>\n`).join(""));
  });

  it("leaves the environment a cold launch starts with: the shell's own variables removed, the template's kept", () => {
    const plain = claim(["env"], {}, { KEEP: "1" });
    expect(plain.stdout).toContain("KEEP=1\n");
    for (const own of ["SHLVL=", "PWD=", "OLDPWD="])
      expect(plain.stdout).not.toMatch(new RegExp(`^${own}`, "m"));
    const kept = claim(["env"], { PWD: "/job", SHLVL: "7" }, { PWD: "/job", SHLVL: "7" });
    expect(kept.stdout).toContain("PWD=/job\n");
    expect(kept.stdout).toContain("SHLVL=7\n");
  });

  it("refuses a word no command line can carry, and an empty command", () => {
    expect(() => claimScript(["echo", "a\0b"], {})).toThrow("command word 2 holds a NUL byte");
    expect(() => claimScript([], {})).toThrow("needs a command");
  });

  it("names the channel in the job folder, quoted", () => {
    expect(gateEntrypoint("/job")).toEqual(["sh", "-c", ". '/job/.sandbox-gate'"]);
    expect(gateEntrypoint("/a b/it's")).toEqual(["sh", "-c", `. '/a b/it'\\''s/.sandbox-gate'`]);
    expect(shellWord("x'y")).toBe(`'x'\\''y'`);
  });
});
