/**
 * A task's outputs leaving its job folder for the operator's (`run --out`). Everything in the folder was written by
 * code nobody reviewed, so it arrives as plain data: regular files and folders only, owned by whoever runs the
 * launcher, with no setuid, setgid or sticky bit; a link only when it points inside the outputs; nothing followed on
 * either side; and no more than the template's disk size in all (a sparse file the task wrote cannot turn into
 * gigabytes of real blocks on the host).
 */
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
  statSync,
  symlinkSync,
  writeSync,
} from "node:fs";
import { isAbsolute, join, posix, relative } from "node:path";

/** An entry of the job folder that was not copied, and why. */
export interface NotCopied {
  /** Its path in the job folder. */
  readonly path: string;
  readonly reason: string;
}

const CHUNK = 1024 * 1024;

/** The mode a copied file gets: readable, executable when the task's file was, never setuid, setgid or sticky. */
function plainMode(mode: number): number {
  return mode & 0o111 ? 0o755 : 0o644;
}

/**
 * Copies the job folder `src` into `dest` (made when missing), at most `maxBytes` of file contents in all, and
 * returns what it left out. Files are copied in the order the folder lists them; a file that would pass the bound is
 * left out whole.
 */
export function copyOutputs(src: string, dest: string, maxBytes: number): NotCopied[] {
  const left: NotCopied[] = [];
  let budget = maxBytes;
  const skip = (path: string, reason: string) => left.push({ path: relative(src, path), reason });
  const walk = (from: string, to: string): void => {
    // `dest` itself is the operator's: it may be a link to a folder. Below it nothing is followed.
    const there = to === dest ? statOrUndefined(to) : lstatOrUndefined(to);
    if (there?.isSymbolicLink() === true || (there !== undefined && !there.isDirectory())) {
      skip(from, `${to} is already there and is not a folder`);
      return;
    }
    if (there === undefined) mkdirSync(to, { mode: 0o755 });
    for (const entry of readdirSync(from)) {
      const a = join(from, entry);
      const b = join(to, entry);
      const st = lstatSync(a);
      if (st.isDirectory()) walk(a, b);
      else if (st.isSymbolicLink()) {
        const target = readlinkSync(a);
        const inside = posix.normalize(posix.join(posix.dirname(relative(src, a)), target));
        if (isAbsolute(target) || inside === ".." || inside.startsWith("../"))
          skip(a, `a link out of the job folder (to ${JSON.stringify(target)})`);
        else if (lstatOrUndefined(b) !== undefined) skip(a, `${b} is already there`);
        else symlinkSync(target, b);
      } else if (!st.isFile()) skip(a, "not a file, folder or link (a FIFO, socket or device)");
      else if (st.size > budget)
        skip(a, `${st.size} bytes would pass the template's disk size of outputs (${maxBytes} bytes in all)`);
      else {
        const copied = copyFile(a, b, plainMode(st.mode), st.size);
        if (typeof copied === "string") skip(a, copied);
        else budget -= copied;
      }
    }
  };
  walk(src, dest);
  return left;
}

function lstatOrUndefined(path: string): ReturnType<typeof lstatSync> | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

function statOrUndefined(path: string): ReturnType<typeof statSync> | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/**
 * One file's contents, at most `size` bytes, neither path followed if it is a link (`O_NOFOLLOW`): the bytes
 * written, or why it was not copied.
 */
function copyFile(from: string, to: string, mode: number, size: number): number | string {
  let input: number;
  try {
    input = openSync(from, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    return `cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)})`;
  }
  try {
    if (!fstatSync(input).isFile()) return "not a file when opened";
    let output: number;
    try {
      output = openSync(
        to,
        constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW,
        mode,
      );
    } catch (e) {
      return `${to} cannot be written (${(e as NodeJS.ErrnoException).code ?? String(e)})`;
    }
    try {
      const buffer = Buffer.allocUnsafe(CHUNK);
      let total = 0;
      // At most the size it had when the walk looked at it: the bound was checked against that.
      while (total < size) {
        const n = readSync(input, buffer, 0, Math.min(CHUNK, size - total), null);
        if (n === 0) break;
        writeSync(output, buffer, 0, n);
        total += n;
      }
      return total;
    } finally {
      closeSync(output);
    }
  } finally {
    closeSync(input);
  }
}
