/** The job folder's walls on Docker, as the probe sees them (see judgeProbe in ./probe). */
import type { WallReport } from "./probe";
import type { Template } from "./template";

/**
 * Whether the launcher gave a task's job folder a disk of its own (Docker: runtime/job-disk.ts), and if not, why:
 * the probe then says the folder's size is not bounded on this host.
 */
export type JobDiskState = { readonly bounded: true } | { readonly bounded: false; readonly reason: string };

/** The options a job folder's own disk is mounted with, as the probe must see them. */
const JOB_MOUNT_FLAGS = ["nosuid", "nodev", "noexec"] as const;

/**
 * The job folder's walls on Docker: its size (a disk of its own, of the template's diskMb at most) and its mount
 * options. A plain folder (the launcher could not mount one) is said to be unbounded here: not a broken wall, since
 * nothing was promised on such a host, but never a pass.
 */
export function judgeJobDisk(
  template: Template,
  observed: Readonly<Record<string, string>>,
  disk: JobDiskState,
  gvisor: boolean,
  walls: WallReport[],
): void {
  const limitKb = template.resources.diskMb * 1024;
  const sizeKb = observed.jobSizeKb === undefined ? Number.NaN : Number(observed.jobSizeKb);
  const size = observed.jobSizeKb === undefined ? undefined : `${observed.jobSizeKb} KiB`;
  const opts = (observed.jobMount ?? "").split(",");
  const flags = JOB_MOUNT_FLAGS.filter((f) => opts.includes(f)).join(",") || "none of nosuid,nodev,noexec";
  const declared = `${limitKb} KiB or less (diskMb ${template.resources.diskMb})`;
  if (!disk.bounded) {
    const why = `not bounded on this host (${disk.reason}): a plain host folder, a task can fill the host's disk`;
    walls.push({ wall: "jobDisk", declared, observed: `${size ?? "(size not reported)"}; ${why}`, ok: null });
    walls.push({
      wall: "jobMount",
      declared: JOB_MOUNT_FLAGS.join(","),
      observed: `${flags}; not applied on this host (${disk.reason})`,
      ok: null,
    });
    return;
  }
  walls.push({
    wall: "jobDisk",
    declared,
    observed: size ?? "(not reported)",
    ok: size === undefined ? null : Number.isFinite(sizeKb) && sizeKb > 0 && sizeKb <= limitKb,
  });
  if (gvisor) {
    // gVisor's own mount table shows its gofer mount, not the host's options, and gVisor loads programs itself.
    walls.push({
      wall: "jobMount",
      declared: JOB_MOUNT_FLAGS.join(","),
      observed: `not observable under gVisor (its mount table shows ${observed.jobMount ?? "nothing"}); the host's mount is ${JOB_MOUNT_FLAGS.join(",")}, but gVisor loads programs itself, so noexec does not hold inside`,
      ok: null,
    });
    return;
  }
  walls.push({
    wall: "jobMount",
    declared: JOB_MOUNT_FLAGS.join(","),
    observed: observed.jobMount === undefined ? "(not reported)" : flags,
    ok: observed.jobMount === undefined ? null : JOB_MOUNT_FLAGS.every((f) => opts.includes(f)),
  });
}
