/**
 * What `scan` reads from the file system, and how, so that hostile input can neither hang nor crash it:
 * only regular files are opened (a FIFO, socket or device is refused from its stat, and opened with O_NONBLOCK so a
 * file swapped for a FIFO between stat and open cannot block; a regular-looking file that would still block, like
 * /proc/kmsg, is refused at its first EAGAIN), at most `maxFileBytes` of each and `maxTotalBytes` in
 * all are read, and the text must be UTF-8 without NUL bytes. Folders are walked with symbolic links followed once
 * (a loop is listed, never followed again); `.git` and `node_modules` are listed as skipped, never silently dropped.
 */
import {
  closeSync,
  constants,
  type Dirent,
  fstatSync,
  openSync,
  readdirSync,
  readSync,
  realpathSync,
  type Stats,
  statSync,
} from "node:fs";
import { basename, join } from "node:path";

/** The size caps `scan` reads under (`--max-file-size`, `--max-total-size`). */
export interface ReadLimits {
  readonly maxFileBytes: number;
  readonly maxTotalBytes: number;
}

export const MIB = 1024 * 1024;

/** File names `scan` reads in a folder: any case, as on case-insensitive file systems the user sees them alike. */
export const EXTENSIONS = [".yaml", ".yml", ".json"] as const;

/** Folders never walked into: a repository's object store and installed packages hold no manifests of the project. */
export const SKIPPED_FOLDERS: Readonly<Record<string, string>> = {
  ".git": "a Git object store, not the project's files",
  node_modules: "installed packages, not the project's files",
};

/** A read that failed for a reason the user must see (exit code 2). */
export class InputRefused extends Error {}

export function hasScannedExtension(name: string): boolean {
  const lower = name.toLowerCase();
  return EXTENSIONS.some((e) => lower.endsWith(e));
}

/** What a non-regular file is, in words. */
export function kindOf(st: Stats): string {
  if (st.isDirectory()) return "a folder";
  if (st.isFIFO()) return "a FIFO (named pipe)";
  if (st.isSocket()) return "a socket";
  if (st.isCharacterDevice()) return "a character device";
  if (st.isBlockDevice()) return "a block device";
  return "not a regular file";
}

export function formatBytes(n: number): string {
  if (n % MIB === 0) return `${n / MIB} MiB`;
  if (n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Bytes as text, or the reason they are not text: a NUL byte (binary, or UTF-16, which no reader of the project's
 * formats is asked to take) or a byte sequence that is not UTF-8. A leading BOM is kept as U+FEFF (kubectl's file
 * reader keeps it in the first line, where it decides whether that line is a `---` separator); the readers skip it.
 */
export function decodeText(bytes: Uint8Array): string {
  // UTF-16 with its byte-order mark is text to kubectl (its file reader honours the mark), so it is read as such.
  const le = bytes[0] === 0xff && bytes[1] === 0xfe;
  const be = bytes[0] === 0xfe && bytes[1] === 0xff;
  if ((le || be) && bytes.length % 2 === 0) {
    try {
      return new TextDecoder(le ? "utf-16le" : "utf-16be", { fatal: true, ignoreBOM: true }).decode(bytes);
    } catch {
      throw new InputRefused(`is not valid UTF-16 text (it starts with a UTF-16 byte-order mark)`);
    }
  }
  const nul = bytes.indexOf(0);
  if (nul >= 0)
    throw new InputRefused(
      `is binary (a NUL byte at offset ${nul}); scan reads UTF-8 text, or UTF-16 with its byte-order mark (YAML or JSON)`,
    );
  try {
    return utf8.decode(bytes);
  } catch {
    throw new InputRefused(
      "is not valid UTF-8 text; scan reads UTF-8 text, or UTF-16 with its byte-order mark (YAML or JSON)",
    );
  }
}

/** Running total of what has been read, so one huge input cannot exhaust memory across many files. */
export class Budget {
  private used = 0;
  constructor(readonly limits: ReadLimits) {}

  /** The most the next file may hold: its own cap, or what is left of the total. */
  private allowance(): { bytes: number; which: string } {
    const left = this.limits.maxTotalBytes - this.used;
    return left < this.limits.maxFileBytes
      ? {
          bytes: Math.max(0, left),
          which: `the total input limit of ${formatBytes(this.limits.maxTotalBytes)}`,
        }
      : {
          bytes: this.limits.maxFileBytes,
          which: `the file size limit of ${formatBytes(this.limits.maxFileBytes)}`,
        };
  }

  /** Reads a regular file under the caps; throws {@link InputRefused} with the reason otherwise. */
  readFile(path: string): string {
    const allow = this.allowance();
    // stat follows symbolic links: what matters is what an open would reach.
    const st = statSync(path);
    if (!st.isFile()) throw new InputRefused(`is ${kindOf(st)}, not a regular file; not read`);
    if (st.size > allow.bytes)
      throw new InputRefused(
        `is ${formatBytes(st.size)}, over ${allow.which} (--max-file-size, --max-total-size)`,
      );
    // O_NONBLOCK: if the file was swapped for a FIFO since the stat, the open returns instead of waiting for a writer.
    const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
    try {
      const fst = fstatSync(fd);
      if (!fst.isFile()) throw new InputRefused(`is ${kindOf(fst)}, not a regular file; not read`);
      const bytes = readCapped(fd, allow.bytes);
      if (bytes === undefined)
        throw new InputRefused(
          `grew over ${allow.which} while being read (--max-file-size, --max-total-size)`,
        );
      this.used += bytes.length;
      return decodeText(bytes);
    } finally {
      closeSync(fd);
    }
  }

  /** Reads standard input under the caps. */
  readStdin(read: () => Uint8Array | string): string {
    const allow = this.allowance();
    const got = read();
    const bytes = typeof got === "string" ? new TextEncoder().encode(got) : got;
    if (bytes.length > allow.bytes)
      throw new InputRefused(`is over ${allow.which} (--max-file-size, --max-total-size)`);
    this.used += bytes.length;
    return typeof got === "string" ? got : decodeText(bytes);
  }
}

/** A `readSync`: the one call `readCapped` reads with (a test may give another). */
export type ReadFn = (fd: number, buffer: Buffer, offset: number, length: number, position: null) => number;

/** Why a file that answers "would block" is not read. */
export const WOULD_BLOCK =
  "would block: it is a special file that has nothing to read now and may never end (like /proc/kmsg); not read";

let scratchBuffer: Buffer | undefined;
/** One read buffer for every file: each read is copied out of it before the next, and nothing else holds it. */
function scratch(): Buffer {
  scratchBuffer ??= Buffer.allocUnsafe(MIB);
  return scratchBuffer;
}

/**
 * At most `max` bytes from a descriptor; undefined when there are more. A read that would block (`EAGAIN`) is waited
 * for only when `wait` (a pipe on standard input whose writer has not written yet, which a blocking read would wait
 * for too); for a file it is a refusal ({@link WOULD_BLOCK}): a regular-looking file that blocks (/proc/kmsg) may
 * never have more, and the scan must not hang on it.
 */
export function readCapped(
  fd: number,
  max: number,
  wait = false,
  read: ReadFn = readSync,
): Uint8Array | undefined {
  const chunks: Buffer[] = [];
  let total = 0;
  const chunk = scratch().subarray(0, Math.min(max + 1, MIB));
  for (;;) {
    let n: number;
    try {
      n = read(fd, chunk, 0, chunk.length, null);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "EAGAIN") {
        if (!wait) throw new InputRefused(WOULD_BLOCK);
        // A non-blocking pipe with nothing yet: wait briefly instead of spinning.
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
        continue;
      }
      if ((e as NodeJS.ErrnoException).code === "EOF") break;
      throw e;
    }
    if (n === 0) break;
    total += n;
    if (total > max) return undefined;
    chunks.push(Buffer.from(chunk.subarray(0, n)));
  }
  return Buffer.concat(chunks, total);
}

/** One entry a folder walk did not read, with why. */
export interface WalkSkip {
  readonly path: string;
  readonly kind: "folder" | "file";
  readonly reason: string;
  /**
   * A skipped folder (`.git`, `node_modules`) that holds a file `kubectl apply -R` would apply: that file, or
   * `LOOKED_ENOUGH` when the folder is too large to look through.
   */
  readonly holds?: string;
}

/** What a skipped folder may hold that `kubectl apply -R` would apply, for its reason. */
export function skippedFolderNote(
  holds: string | undefined,
  show: (path: string) => string = (p) => p,
): string {
  if (holds === undefined) return " (it holds no .yaml, .yml or .json file)";
  const which =
    holds === LOOKED_ENOUGH
      ? `any .yaml, .yml or .json file in it (it is too large to look through: over ${LOOK_LIMIT} entries)`
      : `the .yaml, .yml and .json files in it, such as ${show(holds)}`;
  return `, though \`kubectl apply -R\` would apply ${which}; name the folder to scan it`;
}

/** How many entries of a skipped folder are looked at for a manifest before giving up (and assuming one). */
export const LOOK_LIMIT = 100_000;
export const LOOKED_ENOUGH = "";

/**
 * The first file under a skipped folder that `kubectl apply -R` would apply (k8s.io/cli-runtime
 * `ExpandPathsToFileVisitors`: `filepath.Walk` into every sub-folder, no name skipped, keeping `.json`, `.yaml` and
 * `.yml`; taken here in any case), or undefined; {@link LOOKED_ENOUGH} past {@link LOOK_LIMIT} entries. Like
 * `filepath.Walk`, links to folders are not followed; a link to a file counts.
 */
export function firstManifest(dir: string): string | undefined {
  const stack = [dir];
  let seen = 0;
  while (stack.length > 0) {
    const d = stack.pop() as string;
    let entries: Dirent[];
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      continue;
    }
    entries.sort((a, b) => (a.name < b.name ? 1 : a.name > b.name ? -1 : 0));
    for (const e of entries) {
      if (++seen > LOOK_LIMIT) return LOOKED_ENOUGH;
      const p = join(d, e.name);
      if (e.isDirectory()) stack.push(p);
      else if (hasScannedExtension(e.name)) return p;
    }
  }
  return undefined;
}

/** One entry a folder walk could not look at. */
export interface WalkError {
  readonly path: string;
  readonly message: string;
}

export interface Walked {
  readonly files: string[];
  readonly skipped: WalkSkip[];
  readonly errors: WalkError[];
}

function realOf(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

/**
 * The files of a folder, recursively and in a stable order: hidden folders (`.github`, `.k8s`) are walked; `.git`
 * and `node_modules` are listed as skipped; a symbolic link to a folder is followed unless it leads back to one
 * already walked (a loop, or the same folder twice), which is listed; other files are listed with their reason.
 */
export function walkFolder(root: string, show: (path: string) => string = (p) => p): Walked {
  // A skipped folder named itself is scanned whole: nothing under it is skipped by name.
  const skipping = SKIPPED_FOLDERS[basename(root)] === undefined;
  const out: Walked = { files: [], skipped: [], errors: [] };
  const seen = new Map<string, string>();
  const rootReal = realOf(root);
  if (rootReal !== undefined) seen.set(rootReal, root);
  // Explicit frames instead of recursion: a very deep tree cannot overflow the stack. Entries are taken in name
  // order, depth first, so files are listed in the order a recursive walk gives.
  const frames: { dir: string; names: string[]; next: number }[] = [];
  const enter = (dir: string): void => {
    try {
      frames.push({ dir, names: readdirSync(dir).sort(), next: 0 });
    } catch (e) {
      out.errors.push({ path: dir, message: `cannot be listed: ${(e as Error).message}` });
    }
  };
  enter(root);
  while (frames.length > 0) {
    const frame = frames[frames.length - 1] as (typeof frames)[number];
    const name = frame.names[frame.next++];
    if (name === undefined) {
      frames.pop();
      continue;
    }
    const p = join(frame.dir, name);
    let st: Stats;
    try {
      st = statSync(p);
    } catch {
      out.skipped.push({
        path: p,
        kind: "file",
        reason: "a symbolic link to nothing (or unreadable); not read",
      });
      continue;
    }
    if (st.isDirectory()) {
      const why = skipping ? SKIPPED_FOLDERS[name] : undefined;
      if (why !== undefined) {
        const holds = firstManifest(p);
        out.skipped.push({
          path: p,
          kind: "folder",
          reason: `${why}; not scanned${skippedFolderNote(holds, show)}`,
          ...(holds === undefined ? {} : { holds }),
        });
        continue;
      }
      const real = realOf(p) ?? p;
      const first = seen.get(real);
      if (first !== undefined) {
        out.skipped.push({
          path: p,
          kind: "folder",
          reason: `a symbolic link to ${show(first)}, which is already scanned (a loop or a second way in)`,
        });
        continue;
      }
      seen.set(real, p);
      enter(p);
    } else if (hasScannedExtension(name)) out.files.push(p);
    else
      out.skipped.push({
        path: p,
        kind: "file",
        reason: `not ${EXTENSIONS.join(", ")} (any case); name the file to scan it anyway`,
      });
  }
  return out;
}
