import { createHash } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  lchownSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, relative } from "node:path";
import { MANAGED_BY, parseUser } from "../components/model";
import {
  askJobDiskAgain,
  isMountPoint,
  type JobDiskState,
  jobDiskImagePath,
  jobDiskSupport,
  mountJobDisk,
  releaseJobDisk,
} from "./job-disk";
import { LaunchRefused } from "./launch-errors";

/**
 * Job folders on the host: one per task under the project's job root. Each gets a marker beside it (never inside,
 * where the task could forge or delete it), so the off switch removes only folders the toolkit made.
 */

/** What a job folder is seeded with before its task starts. */
export type JobSeed =
  | { readonly kind: "file"; readonly name: string; readonly source: string }
  | { readonly kind: "dir"; readonly source: string };

/** `<root>/.<id>.sandbox-job`: outside the folder the task can write to. */
export function jobMarkerPath(jobRoot: string, id: string): string {
  return join(jobRoot, `.${id}.sandbox-job`);
}

interface Marker {
  readonly managedBy: string;
  readonly project: string;
  readonly id: string;
}

/** True for a relative name that stays inside the job folder. */
export function isSafeJobName(name: string): boolean {
  return name !== "" && !name.startsWith("/") && !name.split(/[\\/]/).some((s) => s === ".." || s === "");
}

/** The template's disk size for its job folder, and its name for the messages. */
export interface JobDisk {
  readonly template: string;
  /** `resources.diskMb`: the folder's own disk, in MiB, where the host allows one (runtime/job-disk.ts). */
  readonly diskMb: number;
}

/**
 * Creates the job folder, owned by the task's user when the launcher is root, with the given files and seeds in it.
 * The marker is written first, so a launcher killed half-way still leaves a folder the off switch recognizes. With
 * `disk`, the folder gets a disk of its own of `diskMb` MiB before anything is written into it, where the host
 * allows (runtime/job-disk.ts), so the seeds count against it; seeds and files larger than `diskMb` are refused.
 */
export function prepareJobFolder(
  jobRoot: string,
  id: string,
  project: string,
  user: string,
  files: Readonly<Record<string, string>>,
  seeds: readonly JobSeed[] = [],
  disk?: JobDisk,
): string {
  const jobDir = join(jobRoot, id);
  mkdirSync(jobRoot, { recursive: true, mode: 0o755 });
  const marker: Marker = { managedBy: MANAGED_BY, project, id };
  writeFileSync(jobMarkerPath(jobRoot, id), `${JSON.stringify(marker)}\n`, { mode: 0o644 });
  mkdirSync(jobDir, { recursive: true, mode: 0o750 });
  if (disk !== undefined) {
    const given = inputBytes(files, seeds);
    if (given > disk.diskMb * MIB) throw tooLarge(disk, given);
    if (jobDiskSupport().bounded) {
      // The disk's root gets the mode the plain folder got (the mount hides the folder's own).
      const mode = statSync(jobDir).mode & 0o7777;
      const real = join(realpathSync(jobRoot), id);
      let mounted = true;
      try {
        mountJobDisk(jobRoot, id, real, disk.diskMb);
      } catch (e) {
        // A host's answer kept from an earlier trial this boot may no longer hold: asked again, a host that now
        // refuses a trial mount leaves the folder plain (and says so), as it would have without the kept answer.
        if (!askJobDiskAgain() || jobDiskSupport().bounded) throw e;
        mounted = false;
      }
      if (mounted) chmodSync(real, mode);
    }
  }
  try {
    for (const seed of seeds) {
      if (seed.kind === "dir") copyTree(seed.source, jobDir);
      else {
        if (!isSafeJobName(seed.name)) throw new Error(`job file "${seed.name}" must be a relative path`);
        const dest = join(jobDir, seed.name);
        mkdirSync(dirname(dest), { recursive: true });
        copyFileSync(seed.source, dest);
      }
    }
    for (const [file, content] of Object.entries(files)) {
      if (!isSafeJobName(file)) throw new Error(`job file "${file}" must be a relative path`);
      const path = join(jobDir, file);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, content, { mode: 0o640 });
    }
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // A launch refused here leaves no disk mounted (the folder and its marker go as they always did).
    if (disk !== undefined) releaseJobDisk(realpathSync(jobRoot), id, join(realpathSync(jobRoot), id));
    if (disk !== undefined && (code === "ENOSPC" || code === "EDQUOT"))
      throw tooLarge(disk, inputBytes(files, seeds));
    throw e;
  }
  // The task runs as its template's user: it must own what it was given. lchown never follows a seeded symlink.
  if (process.getuid?.() === 0) {
    const { uid, gid } = parseUser(user);
    chownTree(jobDir, uid, gid);
  }
  if (!existsSync(jobDir)) throw new Error(`job folder ${jobDir} could not be created`);
  return jobDir;
}

const MIB = 1024 * 1024;

/** Whether the job folder has its own disk now, and if not, why not (for the probe's report). */
export function jobDiskState(jobRoot: string, id: string): JobDiskState {
  const support = jobDiskSupport();
  if (!support.bounded) return support;
  let real: string;
  try {
    real = join(realpathSync(jobRoot), id);
  } catch {
    return { bounded: false, reason: `job root ${jobRoot} is gone` };
  }
  return isMountPoint(real)
    ? support
    : { bounded: false, reason: `job folder ${real} has no disk of its own` };
}

function tooLarge(disk: JobDisk, bytes: number): LaunchRefused {
  return new LaunchRefused(disk.template, [
    `the job folder's files and seeds (${(bytes / MIB).toFixed(1)} MiB) do not fit in its disk: diskMb is ${disk.diskMb} ` +
      `(MiB, the filesystem's own bookkeeping takes a little of it); seed less, or raise resources.diskMb of template "${disk.template}"`,
  ]);
}

/** Bytes the task is given: every regular file of the seeds (links and folders count nothing) and every file. */
function inputBytes(files: Readonly<Record<string, string>>, seeds: readonly JobSeed[]): number {
  let total = 0;
  for (const content of Object.values(files)) total += Buffer.byteLength(content);
  const walk = (path: string): void => {
    const st = lstatSync(path);
    if (st.isFile()) total += st.size;
    else if (st.isDirectory()) for (const e of readdirSync(path)) walk(join(path, e));
  };
  for (const seed of seeds) {
    if (seed.kind === "file") total += statSync(seed.source).size;
    else walk(seed.source);
  }
  return total;
}

function chownTree(path: string, uid: number, gid: number): void {
  lchownSync(path, uid, gid);
  if (lstatSync(path).isDirectory()) for (const e of readdirSync(path)) chownTree(join(path, e), uid, gid);
}

/**
 * Copies the operator's folder `src` (a `--dir` seed) into a job folder without following any symlink: links are
 * copied as links. Sockets, FIFOs and devices are skipped. Returns the relative paths skipped. (A task's outputs
 * leave by runtime/outputs.ts, which trusts nothing in them.)
 */
export function copyTree(src: string, dest: string): string[] {
  const skipped: string[] = [];
  const walk = (from: string, to: string): void => {
    mkdirSync(to, { recursive: true });
    for (const entry of readdirSync(from)) {
      const a = join(from, entry);
      const b = join(to, entry);
      const st = lstatSync(a);
      if (st.isSymbolicLink()) symlinkSync(readlinkSync(a), b);
      else if (st.isDirectory()) walk(a, b);
      else if (st.isFile()) copyFileSync(a, b);
      else skipped.push(relative(src, a));
    }
  };
  walk(src, dest);
  return skipped;
}

/**
 * Removes one job folder, its disk (unmounted, lazily when busy, and its image deleted) and its marker. Nothing in
 * the folder is followed: its links are removed as links.
 */
export function removeJobFolder(jobRoot: string, id: string): void {
  let root: string;
  try {
    root = realpathSync(jobRoot);
  } catch {
    return;
  }
  const folder = join(root, id);
  const st = lstatSafe(folder);
  if (st === undefined || st.isDirectory()) releaseJobDisk(root, id, folder);
  rmSync(folder, { recursive: true, force: true });
  rmSync(jobDiskImagePath(root, id), { force: true });
  rmSync(jobMarkerPath(root, id), { force: true });
}

/**
 * The off switch's part on the host: removes every job folder of `project` directly under `jobRoot` that carries
 * the toolkit's marker. A folder without one, a marker of another project, and anything that is a symlink (the
 * folder or the marker) are left alone. Returns the folders removed.
 */
export function removeProjectJobFolders(jobRoot: string, project: string): string[] {
  let root: string;
  try {
    if (!lstatSync(jobRoot).isDirectory() && !lstatSync(jobRoot).isSymbolicLink()) return [];
    // The root itself is the user's configuration (it may be a link); below it nothing is followed.
    root = realpathSync(jobRoot);
  } catch {
    return [];
  }
  const removed: string[] = [];
  const failures: string[] = [];
  for (const entry of readdirSync(root)) {
    const m = /^\.([a-z0-9][a-z0-9-]{0,62})\.sandbox-job$/.exec(entry);
    if (m?.[1] === undefined) continue;
    const id = m[1];
    const markerPath = join(root, entry);
    let marker: Partial<Marker>;
    try {
      if (!lstatSync(markerPath).isFile()) continue;
      marker = JSON.parse(readFileSync(markerPath, "utf8")) as Partial<Marker>;
    } catch {
      continue;
    }
    if (marker.managedBy !== MANAGED_BY || marker.project !== project || marker.id !== id) continue;
    const folder = join(root, id);
    const st = lstatSafe(folder);
    if (st !== undefined && !st.isDirectory()) continue;
    try {
      // A folder a killed launcher left mounted: unmounted first, then its image deleted.
      releaseJobDisk(root, id, folder);
    } catch (e) {
      failures.push(e instanceof Error ? e.message : String(e));
      continue;
    }
    if (st !== undefined) {
      rmSync(folder, { recursive: true, force: true });
      removed.push(folder);
    }
    rmSync(markerPath, { force: true });
  }
  if (failures.length > 0) throw new Error(failures.join("; "));
  return removed.sort();
}

function lstatSafe(path: string) {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

/**
 * SHA-256 of every regular file under `dir`, by its path inside it (symbolic links are recorded as links, never
 * followed): what a task was given, for the audit log.
 */
export function hashTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    let names: string[];
    try {
      names = readdirSync(join(dir, rel)).sort();
    } catch {
      return;
    }
    for (const n of names) {
      const r = rel === "" ? n : `${rel}/${n}`;
      const st = lstatSync(join(dir, r));
      if (st.isDirectory()) walk(r);
      else if (st.isFile())
        out[r] = createHash("sha256")
          .update(readFileSync(join(dir, r)))
          .digest("hex");
      else if (st.isSymbolicLink()) out[r] = "symlink";
    }
  };
  walk("");
  return out;
}
