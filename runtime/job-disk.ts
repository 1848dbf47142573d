/**
 * A job folder's own disk on Docker: a sparse ext4 image of exactly the template's `diskMb` beside the folder
 * (`<jobRoot>/.<id>.sandbox-disk`, outside what the task sees), loop-mounted `nosuid,nodev,noexec` on the folder.
 * A task that writes past `diskMb` gets ENOSPC instead of filling the host's disk. Where the launcher cannot mount
 * one (not root, no loop device, no `mkfs.ext4`, or `SANDBOX_JOB_DISK=plain`) the folder stays a plain host folder,
 * and the probe says its size is not bounded on this host.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import type { JobDiskState } from "../components/model";

export type { JobDiskState } from "../components/model";

/** The environment variable that forces plain job folders (their size not bounded): `SANDBOX_JOB_DISK=plain`. */
export const JOB_DISK_ENV = "SANDBOX_JOB_DISK";

/** `<root>/.<id>.sandbox-disk`: the job folder's disk image, beside its marker, outside the folder the task sees. */
export function jobDiskImagePath(jobRoot: string, id: string): string {
  return join(jobRoot, `.${id}.sandbox-disk`);
}

/** The options every job folder's disk is mounted with. */
export const JOB_DISK_MOUNT_OPTIONS = "loop,nosuid,nodev,noexec";

const MIB = 1024 * 1024;

/** Where a tool is: on PATH, else in the system's sbin folders (root's tools are often only there). */
function findTool(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? "").split(delimiter), "/usr/sbin", "/sbin", "/usr/bin", "/bin"];
  for (const dir of dirs) {
    if (dir === "") continue;
    const path = join(dir, name);
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Runs a tool with an explicit argv (no shell); throws naming the command and the tool's own words on failure. */
function run(tool: string, args: readonly string[], what: string): void {
  const path = findTool(tool);
  if (path === undefined) throw new Error(`${what}: ${tool} is not installed on this host`);
  const r = spawnSync(path, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 60_000 });
  if (r.status !== 0) {
    const said = `${r.stderr ?? ""}${r.stdout ?? ""}`.trim().split("\n").slice(0, 3).join("; ");
    const why = r.error !== undefined ? r.error.message : said || `exit ${String(r.status ?? r.signal)}`;
    throw new Error(`${what}: \`${[tool, ...args].join(" ")}\` failed: ${why}`);
  }
}

/** Makes the sparse image of `sizeMb` MiB and its ext4 filesystem (an existing image is replaced). */
function makeImage(image: string, sizeMb: number, what: string): void {
  rmSync(image, { force: true });
  // Created anew (never through a link), readable by the launcher alone; sparse: blocks come as the task writes.
  closeSync(openSync(image, "wx", 0o600));
  truncateSync(image, sizeMb * MIB);
  run("mkfs.ext4", ["-q", "-F", "-m", "0", "-E", "lazy_itable_init=1,lazy_journal_init=1", image], what);
}

let probed: JobDiskState | undefined;
/** Whether {@link probed} came from a trial kept for this boot rather than one made by this process. */
let probedFromRecord = false;

/**
 * Where a trial mount that worked is kept for the rest of the boot (`/run` is emptied at each boot), so that each
 * launcher process (every `./sandbox run`) does not make one again: a file named by everything the trial's answer
 * rests on (the boot, this process's mount namespace, the loop control device, and the path, size and time of each
 * tool), readable by root alone. A failed trial is never kept.
 */
export const JOB_DISK_TRIAL_DIR = "/run/sandbox-projects";

/** The record's file for this host as it is now, or undefined when what it rests on cannot be read. */
export function trialRecord(): string | undefined {
  try {
    const mark = (path: string) => {
      const s = statSync(path);
      return `${path} ${s.ino} ${s.rdev} ${s.size} ${s.mtimeMs}`;
    };
    const facts = [
      readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim(),
      readlinkSync("/proc/self/ns/mnt"),
      mark("/dev/loop-control"),
      ...["mkfs.ext4", "mount", "umount"].map((t) => mark(findTool(t) ?? t)),
    ];
    const key = createHash("sha256").update(facts.join("\n")).digest("hex").slice(0, 32);
    return join(JOB_DISK_TRIAL_DIR, `job-disk-trial-${key}`);
  } catch {
    return undefined;
  }
}

/** Keeps a trial that worked (written whole, then renamed into place); a record that cannot be written is none. */
function keepTrial(record: string): void {
  try {
    mkdirSync(JOB_DISK_TRIAL_DIR, { recursive: true, mode: 0o700 });
    const part = `${record}.${process.pid}`;
    writeFileSync(part, "a trial mount worked\n", { mode: 0o600 });
    renameSync(part, record);
  } catch {
    // The next launcher makes its own trial.
  }
}

/** What this host allows, asked once: root, Linux, the tools, a loop device, and a trial mount that worked. */
function hostSupport(): JobDiskState {
  if (process.platform !== "linux")
    return { bounded: false, reason: `the host is ${process.platform}, not Linux` };
  if (process.getuid?.() !== 0) {
    return {
      bounded: false,
      reason: "the launcher is not root (mounting a job folder's own disk needs root)",
    };
  }
  for (const tool of ["mkfs.ext4", "mount", "umount"]) {
    if (findTool(tool) === undefined) return { bounded: false, reason: `${tool} is not installed` };
  }
  if (!existsSync("/dev/loop-control"))
    return { bounded: false, reason: "no loop device (/dev/loop-control)" };
  const apart = engineApart();
  if (apart !== undefined) return { bounded: false, reason: apart };
  const record = trialRecord();
  if (record !== undefined && existsSync(record)) {
    probedFromRecord = true;
    return { bounded: true };
  }
  const dir = mkdtempSync(join(tmpdir(), "sandbox-job-disk-"));
  const image = join(dir, "trial.img");
  const mnt = join(dir, "mnt");
  try {
    mkdirSync(mnt);
    makeImage(image, 2, "a trial mount");
    run("mount", ["-o", JOB_DISK_MOUNT_OPTIONS, image, mnt], "a trial mount");
    run("umount", [mnt], "a trial mount");
    if (record !== undefined) keepTrial(record);
    return { bounded: true };
  } catch (e) {
    return { bounded: false, reason: e instanceof Error ? e.message : String(e) };
  } finally {
    if (isMountPoint(mnt)) spawnSync(findTool("umount") ?? "umount", ["-l", mnt]);
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Why a mount made here would not be what the engine binds into the task, or undefined: an engine reached over the
 * network (its folders are another host's), or a local engine in another mount namespace (known by its pid file).
 */
function engineApart(): string | undefined {
  const host = process.env.DOCKER_HOST ?? "";
  if (host !== "" && !host.startsWith("unix://"))
    return `the Docker engine is reached at ${host}, not through a local socket`;
  for (const pidFile of ["/run/docker.pid", "/var/run/docker.pid"]) {
    let pid: string;
    try {
      pid = readFileSync(pidFile, "utf8").trim();
    } catch {
      continue;
    }
    try {
      if (readlinkSync(`/proc/${pid}/ns/mnt`) !== readlinkSync("/proc/self/ns/mnt"))
        return "the Docker engine runs in another mount namespace: a disk mounted here would not reach the task";
    } catch {
      // The pid file outlived its engine, or the namespace is not ours to read: nothing is known against it.
    }
    return undefined;
  }
  return undefined;
}

/**
 * Whether a job folder gets its own disk here: `SANDBOX_JOB_DISK` (read at every call: unset, empty or `auto` lets
 * the host decide, `plain` forces plain folders), then what the host allows (asked once and remembered).
 */
export function jobDiskSupport(): JobDiskState {
  const forced = process.env[JOB_DISK_ENV];
  if (forced === "plain") return { bounded: false, reason: `${JOB_DISK_ENV}=plain` };
  if (forced !== undefined && forced !== "" && forced !== "auto") {
    throw new Error(
      `${JOB_DISK_ENV}=${JSON.stringify(forced)} is not allowed: use "plain" (job folders are plain host folders, ` +
        `their size not bounded) or "auto" or leave it unset (a disk of the template's diskMb where the host allows)`,
    );
  }
  probed ??= hostSupport();
  return probed;
}

/**
 * After a job folder's disk could not be mounted: when this process took the host's answer from a trial kept for the
 * boot, that answer is forgotten and the host asked again by a trial of its own, as a launcher without the record
 * would have; true when it was. The caller then goes by the new answer.
 */
export function askJobDiskAgain(): boolean {
  if (!probedFromRecord) return false;
  const record = trialRecord();
  if (record !== undefined) rmSync(record, { force: true });
  probed = undefined;
  probedFromRecord = false;
  return true;
}

/** Unescapes a path as /proc/self/mountinfo writes it (space, tab, newline and backslash as `\ooo`). */
export function unescapeMountPath(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8)));
}

/** The mount points of this process's mount namespace, from /proc/self/mountinfo (its fifth field). */
export function mountPoints(mountinfo: string): string[] {
  return mountinfo
    .split("\n")
    .map((line) => line.split(" ")[4])
    .filter((p): p is string => p !== undefined && p !== "")
    .map(unescapeMountPath);
}

/** True when something is mounted exactly at `path` (a real path, as the kernel names it). */
export function isMountPoint(path: string): boolean {
  try {
    return mountPoints(readFileSync("/proc/self/mountinfo", "utf8")).includes(path);
  } catch {
    return false;
  }
}

/**
 * Gives the job folder `jobDir` (a real path, already made) its own disk of `diskMb` MiB, unless it has one already
 * (a warm-pool member's folder, claimed by a task). The mounted root is left to the caller to own and chmod.
 */
export function mountJobDisk(jobRoot: string, id: string, jobDir: string, diskMb: number): void {
  if (isMountPoint(jobDir)) return;
  const image = jobDiskImagePath(jobRoot, id);
  const what = `job folder ${jobDir} could not get its own disk of ${diskMb} MiB (diskMb)`;
  makeImage(image, diskMb, what);
  try {
    run("mount", ["-o", JOB_DISK_MOUNT_OPTIONS, image, jobDir], what);
  } catch (e) {
    rmSync(image, { force: true });
    throw e;
  }
  // ext4's own folder: the task sees an empty folder plus what it was given.
  rmSync(join(jobDir, "lost+found"), { recursive: true, force: true });
}

/**
 * Unmounts whatever is mounted on the job folder (lazily when it is busy) and deletes its disk image. `jobDir` is
 * the real path of a folder directly under the real job root, named by the toolkit: nothing in it is followed.
 */
export function releaseJobDisk(jobRoot: string, id: string, jobDir: string): void {
  // A folder mounted more than once (never by the toolkit, but a hand's mount on top) is unmounted layer by layer.
  for (let layer = 0; layer < 8 && isMountPoint(jobDir); layer++) {
    try {
      run("umount", [jobDir], `job folder ${jobDir} could not be unmounted`);
    } catch {
      run(
        "umount",
        ["-l", jobDir],
        `job folder ${jobDir} could not be unmounted (unmounting it needs root: run the off switch as root)`,
      );
    }
  }
  if (isMountPoint(jobDir))
    throw new Error(`job folder ${jobDir} is still mounted after unmounting it 8 times`);
  rmSync(jobDiskImagePath(jobRoot, id), { force: true });
}
