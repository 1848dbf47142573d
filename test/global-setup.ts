/**
 * Once per test run: a temp folder of the run's own, removed at its end. Every test file's `TMPDIR` is set to it
 * (test/setup-fast-check.ts), and the processes the tests start inherit it, so what a test leaves in its temp folders
 * goes with the run, and two runs side by side (the docker and unit tiers of `./sandbox test`) never see each other's.
 * Before it is removed, a job folder's own disk (runtime/job-disk.ts) that a test of this run left mounted under it is
 * named on stderr and, in CI (where the run is the machine's only one), unmounted, so that no run leaves loop devices
 * and busy folders behind. Only disks made since the run began are considered; a folder with a mount still in it is
 * kept and named.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import type { TestProject } from "vitest/node";
import { jobDiskImagePath, releaseJobDisk, unescapeMountPath } from "../runtime/job-disk";

declare module "vitest" {
  export interface ProvidedContext {
    /** The run's temp folder (test/global-setup.ts). */
    runTempDir: string;
  }
}

let began = 0;
let runTemp = "";

export function setup(project: TestProject): void {
  began = Date.now();
  // A short name: unix socket paths under it have 108 bytes at most. Like /tmp, anyone may write in it (a test's
  // PostgreSQL runs as its own user).
  runTemp = mkdtempSync(join(tmpdir(), "st-"));
  chmodSync(runTemp, 0o1777);
  project.provide("runTempDir", runTemp);
}

/** Loop-device ext4 mounts under `under`, from /proc/self/mountinfo (mount point: field 5; after ` - `: type, source). */
function loopMountsUnder(mountinfo: string, under: string): string[] {
  return mountinfo.split("\n").flatMap((line) => {
    const [head = "", tail = ""] = line.split(" - ");
    const point = unescapeMountPath(head.split(" ")[4] ?? "");
    const [type, source = ""] = tail.split(" ");
    return type === "ext4" && source.startsWith("/dev/loop") && point.startsWith(under) ? [point] : [];
  });
}

/** True when the disk image of the job folder at `point` was made since this run began. */
function madeThisRun(point: string): boolean {
  try {
    return statSync(jobDiskImagePath(dirname(point), basename(point))).ctimeMs >= began;
  } catch {
    return false;
  }
}

function mountInfo(): string | undefined {
  try {
    return readFileSync("/proc/self/mountinfo", "utf8");
  } catch {
    return undefined;
  }
}

export function teardown(): void {
  if (!runTemp) return;
  const info = mountInfo();
  if (info === undefined) return;
  for (const point of loopMountsUnder(info, `${runTemp}/`).filter(madeThisRun)) {
    if (process.env.CI !== "true") {
      process.stderr.write(`test run: a test left a job folder's disk mounted: ${point}\n`);
      continue;
    }
    try {
      releaseJobDisk(dirname(point), basename(point), point);
      process.stderr.write(`test run: unmounted a job folder's disk a test left behind: ${point}\n`);
    } catch (e) {
      process.stderr.write(
        `test run: could not unmount ${point}: ${e instanceof Error ? e.message : String(e)}\n`,
      );
    }
  }
  // Any mount left under the run's folder (a disk kept outside CI, a test's own) keeps the folder: removing what is
  // inside a mounted file system would reach past the run.
  const left = (mountInfo() ?? "")
    .split("\n")
    .filter((line) => unescapeMountPath(line.split(" ")[4] ?? "").startsWith(`${runTemp}/`));
  if (left.length > 0) {
    process.stderr.write(
      `test run: kept the run's temp folder ${runTemp}: ${left.length} mount(s) still in it\n`,
    );
    return;
  }
  try {
    rmSync(runTemp, { recursive: true, force: true, maxRetries: 3 });
  } catch (e) {
    process.stderr.write(
      `test run: could not remove the run's temp folder ${runTemp}: ${e instanceof Error ? e.message : String(e)}\n`,
    );
  }
}
