/**
 * Once per test run: at the end, a job folder's own disk (runtime/job-disk.ts) that a test of this run left mounted
 * under the temp folder is named on stderr and, in CI (where the run is the machine's only one), unmounted, so that
 * no run leaves loop devices and busy folders behind. Only disks made since the run began are considered: another
 * run on the same machine keeps its own.
 */
import { readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname } from "node:path";
import { jobDiskImagePath, releaseJobDisk, unescapeMountPath } from "../runtime/job-disk";

let began = 0;

export function setup(): void {
  began = Date.now();
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

export function teardown(): void {
  let info: string;
  try {
    info = readFileSync("/proc/self/mountinfo", "utf8");
  } catch {
    return;
  }
  for (const point of loopMountsUnder(info, `${tmpdir()}/`).filter(madeThisRun)) {
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
}
