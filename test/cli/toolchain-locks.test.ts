import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { TOOLCHAIN } from "../../toolchain/manifest";
import { cachedPulumiPath } from "../../toolchain/pulumi";
import { requireDocker } from "../helpers/docker";

const repo = join(__dirname, "../..");
const { PULUMI_VERSION } = TOOLCHAIN;
const work = mkdtempSync(join(tmpdir(), "sandbox-locks-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function tool(dir: string, name: string, body: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, name), `#!/bin/sh\n${body}\n`);
  chmodSync(join(dir, name), 0o755);
}

interface Run {
  child: ChildProcess;
  err: () => string;
  exit: Promise<number | null>;
}

function setup(env: NodeJS.ProcessEnv, ...parts: string[]): Run {
  const child = spawn("bash", [join(repo, "toolchain/setup.sh"), ...parts], { env, cwd: repo });
  let err = "";
  child.stderr?.on("data", (d) => {
    err += String(d);
  });
  const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, err: () => err, exit };
}

async function until(what: string, ok: () => boolean, seconds = 30): Promise<void> {
  for (let i = 0; i < seconds * 20; i++) {
    if (ok()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("toolchain locks are per tool, never one for every set-up", () => {
  it("lets a set-up whose tool is cached proceed while another builds, and makes a second build of that tool wait", async () => {
    // A fake Go whose module download (the first step of the kube build) blocks while the hold file exists: a
    // long-running build that holds the kube lock for as long as the test wants.
    const bin = join(work, "bin");
    const hold = join(work, "hold");
    const log = join(work, "builds.log");
    writeFileSync(hold, "");
    tool(
      bin,
      "go",
      [
        'case "$1 $2" in',
        `  "env GOVERSION") echo go${TOOLCHAIN.MIN_GO_VERSION} ;;`,
        '  "env GOPROXY") echo off ;;',
        `  "mod download") echo start >> "${log}"; while [ -e "${hold}" ]; do sleep 0.1; done; echo end >> "${log}"; echo '"Error": "fake build ends",'; exit 1 ;;`,
        "  *) exit 1 ;;",
        "esac",
      ].join("\n"),
    );
    // The Pulumi CLI, already cached: `setup.sh pulumi` has nothing to build.
    const cache = join(work, "cache");
    tool(dirname(cachedPulumiPath({ XDG_CACHE_HOME: cache })), "pulumi", `echo v${PULUMI_VERSION}`);
    const env = { PATH: `${bin}:/usr/bin:/bin`, HOME: work, XDG_CACHE_HOME: cache, TMPDIR: work };

    const building = setup(env, "kube");
    await until("the kube build to start", () => building.err().includes("building kube-apiserver"));

    const cached = setup(env, "pulumi");
    expect(await cached.exit).toBe(0);
    expect(cached.err()).toContain(`setup: pulumi: v${PULUMI_VERSION} cached`);
    expect(cached.err()).not.toContain("waiting");
    expect(building.child.exitCode).toBeNull(); // the build still holds its lock: pulumi did not wait for it

    const second = setup(env, "kube");
    await until("the second kube set-up to wait", () =>
      second.err().includes("another set-up is building kube; waiting for it (nothing else is held up)..."),
    );
    await new Promise((r) => setTimeout(r, 500));
    expect(second.err()).not.toContain("building kube-apiserver"); // it waits, it does not build alongside
    rmSync(hold);
    expect(await building.exit).toBe(3); // the fake build fails, and says so
    expect(await second.exit).toBe(3);
    // The builds' own record: the second began only after the first had ended, never alongside it.
    expect(readFileSync(log, "utf8")).toBe("start\nend\nstart\nend\n");
    expect(second.err()).toContain("building kube-apiserver");
    expect(second.err()).toContain(
      "missing: kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy",
    );
  }, 90_000);
});

describe("the offline images' check on the hot path", () => {
  it("asks no package manager and gives the same answer every time", async () => {
    await requireDocker();
    // Bring both images up to date with the real tools first (a changed recipe rebuilds them once).
    const first = spawnSync("bash", [join(repo, "toolchain/docker.sh")], { encoding: "utf8" });
    expect(first.status, first.stderr).toBe(0);
    // Then every package-manager command on PATH only records that it was called.
    const bin = join(work, "pm");
    const log = join(work, "pm.log");
    writeFileSync(log, "");
    for (const pm of ["apt-get", "apt-cache", "dpkg", "dpkg-query"])
      tool(bin, pm, `echo "${pm} $*" >> "${log}"; exit 1`);
    const env = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ""}` };
    for (let i = 0; i < 20; i++) {
      const r = spawnSync("bash", [join(repo, "toolchain/docker.sh")], { env, encoding: "utf8" });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toBe("");
    }
    expect(readFileSync(log, "utf8")).toBe("");
  }, 120_000);
});
