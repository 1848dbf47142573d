// The host's answer to "can a job folder get a disk of its own here" (runtime/job-disk.ts) comes from a trial mount,
// made once per launcher process; a trial that worked is kept for the rest of the boot, so that the next process
// (every `./sandbox run`) takes it without a mount of its own. A kept answer that no longer holds is asked again:
// the folder then stays plain when a fresh trial fails, as it would have without the record. Each process below is
// a real Node process on this host, as a launcher is.
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jobDiskSupport, trialRecord } from "../../runtime/job-disk";

const REPO = join(__dirname, "../..");
const work = mkdtempSync(join(tmpdir(), "sandbox-job-disk-trial-"));

/** Runs `body` in a launcher-like process (the module fresh, as in a new `./sandbox run`); what it printed. */
function inProcess(body: string, env: Record<string, string> = {}): Record<string, unknown> {
  const script = `
    const disk = require(${JSON.stringify(join(REPO, "runtime/job-disk.ts"))});
    const jobs = require(${JSON.stringify(join(REPO, "runtime/jobs.ts"))});
    let out;
    try { out = (() => { ${body} })(); } catch (e) { out = { threw: e.message }; }
    process.stdout.write(JSON.stringify(out));`;
  const r = spawnSync(process.execPath, ["--import", "tsx", "-e", script], {
    cwd: REPO,
    encoding: "utf8",
    env: { ...process.env, ...env },
  });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

beforeAll(() => {
  // Where a trial cannot be made here, there is nothing to keep: the suite says so rather than skip.
  const support = jobDiskSupport();
  if (!support.bounded) throw new Error(`this host cannot give a job folder its own disk: ${support.reason}`);
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/**
 * A `mount` first on PATH for the processes below: it logs each call, refuses when `refuse` exists (a host that lost
 * its loop devices since the record), else runs the real one. The same for every process, so their records agree.
 */
const bin = join(work, "bin");
const calls = join(work, "mount-calls");
const refuse = join(work, "refuse");
const env = { PATH: `${bin}:${process.env.PATH}` };
mkdirSync(bin);
writeFileSync(
  join(bin, "mount"),
  `#!/bin/sh\necho "$@" >>${calls}\nif [ -e ${refuse} ]; then echo "mount: refused for the test" >&2; exit 32; fi\nexec /usr/bin/mount "$@"\n`,
);
chmodSync(join(bin, "mount"), 0o755);
const trials = () =>
  (existsSync(calls) ? readFileSync(calls, "utf8") : "").split("\n").filter((l) => l.includes("trial"))
    .length;

describe("the job disk's trial mount, kept for the boot", () => {
  it("is kept once it worked, and the next process takes it without a trial of its own", () => {
    const first = inProcess("return { support: disk.jobDiskSupport(), record: disk.trialRecord() };", env);
    expect(first.support).toEqual({ bounded: true });
    const record = first.record as string;
    // Its own record: this PATH's `mount` is not the host's.
    expect(record).not.toBe(trialRecord());
    expect(existsSync(record)).toBe(true);
    const made = trials();
    expect(made).toBeGreaterThan(0);
    expect(inProcess("return disk.jobDiskSupport();", env)).toEqual({ bounded: true });
    expect(trials()).toBe(made);
    // Negative control: without the record, the next process makes a trial again.
    rmSync(record);
    expect(inProcess("return disk.jobDiskSupport();", env)).toEqual({ bounded: true });
    expect(trials()).toBe(made + 1);
    expect(existsSync(record)).toBe(true);
  }, 60_000);

  it("is asked again when the disk cannot be mounted after all: a failed trial leaves the folder plain", () => {
    const record = inProcess("return disk.trialRecord();", env) as unknown as string;
    expect(existsSync(record)).toBe(true);
    writeFileSync(refuse, "");
    const jobRoot = join(work, "jobs");
    const after = inProcess(
      `const dir = jobs.prepareJobFolder(${JSON.stringify(jobRoot)}, "t1", "jdt", "1000:1000", { "a.txt": "A" }, [], { template: "t", diskMb: 16 });
       const state = jobs.jobDiskState(${JSON.stringify(jobRoot)}, "t1");
       const plain = require("node:fs").readFileSync(require("node:path").join(dir, "a.txt"), "utf8");
       jobs.removeJobFolder(${JSON.stringify(jobRoot)}, "t1");
       return { state, plain };`,
      env,
    );
    expect(after).toEqual({
      state: { bounded: false, reason: expect.stringContaining("mount: refused for the test") },
      plain: "A",
    });
    // Forgotten: the next process makes a trial of its own.
    expect(existsSync(record)).toBe(false);
  }, 60_000);
});
