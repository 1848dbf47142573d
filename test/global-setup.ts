/**
 * Once per test run: at the end, a job folder's own disk (runtime/job-disk.ts) that a test left mounted under the
 * temp folder is unmounted and named on stderr, so that no run leaves loop devices and busy folders on the machine.
 */
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname } from "node:path";
import { releaseJobDisk, unescapeMountPath } from "../runtime/job-disk";

/** Loop-device ext4 mounts under `under`, from /proc/self/mountinfo (mount point: field 5; after ` - `: type, source). */
function loopMountsUnder(mountinfo: string, under: string): string[] {
  return mountinfo.split("\n").flatMap((line) => {
    const [head = "", tail = ""] = line.split(" - ");
    const point = unescapeMountPath(head.split(" ")[4] ?? "");
    const [type, source = ""] = tail.split(" ");
    return type === "ext4" && source.startsWith("/dev/loop") && point.startsWith(under) ? [point] : [];
  });
}

export function teardown(): void {
  let info: string;
  try {
    info = readFileSync("/proc/self/mountinfo", "utf8");
  } catch {
    return;
  }
  for (const point of loopMountsUnder(info, `${tmpdir()}/`)) {
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
