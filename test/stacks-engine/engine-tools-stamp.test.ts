// ./sandbox's stamps: for the engine's tools, a stack verb runs toolchain/setup.sh once, then answers from the stamp
// until a tool it found changes (rebuilt, replaced or removed), and then runs the set-up again; for the Docker
// engine, a task verb runs toolchain/docker.sh once, then answers from the stamp with no process started, and
// again from its key (no set-up) when an input's time changed but not its text.
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TOOLCHAIN } from "../../toolchain/manifest";

const repo = join(__dirname, "../..");

describe("./sandbox's stamp for the engine's tools", () => {
  it("runs the set-up once, skips it while the tools are unchanged, and runs it again when one changes", () => {
    const bin = mkdtempSync(join(tmpdir(), "sandbox-tools-bin-"));
    const cache = mkdtempSync(join(tmpdir(), "sandbox-tools-cache-"));
    // A Pulumi CLI on PATH recent enough for the set-up; anything but `version` fails, so the verb ends at once.
    const pulumi = join(bin, "pulumi");
    writeFileSync(
      pulumi,
      `#!/bin/sh\n[ "$1" = version ] && { echo v${TOOLCHAIN.PULUMI_VERSION}; exit 0; }\nexit 1\n`,
    );
    chmodSync(pulumi, 0o755);
    const env = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ""}`, XDG_CACHE_HOME: cache };
    const setUps = () => {
      const r = spawnSync("bash", ["-x", join(repo, "sandbox"), "destroy", "no-such-stack-here"], {
        cwd: repo,
        env,
        encoding: "utf8",
        timeout: 120_000,
      });
      return r.stderr.split("\n").filter((l) => /^\++ bash toolchain\/setup\.sh pulumi$/.test(l)).length;
    };
    expect(setUps()).toBe(1);
    const stamp = readFileSync(join(cache, "sandbox-projects", "engine-tools-ready-pulumi"), "utf8");
    expect(stamp.split("\n")[1]).toBe(pulumi);
    expect(setUps()).toBe(0);
    utimesSync(pulumi, new Date(), new Date(Date.now() + 5_000));
    expect(setUps()).toBe(1);
    expect(setUps()).toBe(0);
  }, 300_000);
});

describe("./sandbox's stamp for the Docker engine", () => {
  it("runs docker.sh once, then answers with bash's own tests, and from the key when only a time changed", () => {
    const cache = mkdtempSync(join(tmpdir(), "sandbox-docker-cache-"));
    const env = { ...process.env, XDG_CACHE_HOME: cache };
    const trace = () => {
      const r = spawnSync("bash", ["-x", join(repo, "sandbox"), "off", "no-such-stack-here"], {
        cwd: repo,
        env,
        encoding: "utf8",
        timeout: 120_000,
      });
      const lines = r.stderr.split("\n");
      return {
        setUps: lines.filter((l) => /^\++ bash toolchain\/docker\.sh$/.test(l)).length,
        hashed: lines.some((l) => /^\++ sha256sum$/.test(l)),
      };
    };
    expect(trace().setUps).toBe(1);
    expect(trace()).toEqual({ setUps: 0, hashed: false });
    // An input touched, its text unchanged: the key answers (hashed), no set-up, and the stamp is written again.
    const input = join(repo, "toolchain", "lock.sh");
    const now = new Date();
    utimesSync(input, now, now);
    expect(trace()).toEqual({ setUps: 0, hashed: true });
    expect(trace()).toEqual({ setUps: 0, hashed: false });
  }, 300_000);
});
