/**
 * A task's job folder coming back from its pod as a tar stream (written by `tar` in the pod, so by code nobody
 * reviewed): read entry by entry into a fresh host folder as plain data, by the rules runtime/outputs.ts applies on
 * Docker. Regular files and folders only, modes reduced to 0644/0755, at most the template's disk size in all; a
 * link is made at the end, and only when it points inside the folder (so nothing is ever written through one); hard
 * links, devices, FIFOs, sparse files and names that leave the folder are listed as not brought back, with why.
 * Understands ustar, GNU long names and pax `path`/`linkpath`/`size` records.
 */
import { closeSync, constants, mkdirSync, openSync, symlinkSync, writeSync } from "node:fs";
import { isAbsolute, join, posix } from "node:path";
import { Writable } from "node:stream";
import type { NotCopied } from "../outputs";

const BLOCK = 512;

interface Entry {
  readonly path: string;
  readonly type: string;
  readonly size: number;
  readonly mode: number;
  readonly link: string;
}

/** A NUL-ended string field of a header. */
function field(header: Buffer, at: number, length: number): string {
  const raw = header.subarray(at, at + length);
  const end = raw.indexOf(0);
  return raw.subarray(0, end === -1 ? length : end).toString("utf8");
}

/** A numeric field: octal text, or GNU base-256 when its first byte has the high bit. */
function number(header: Buffer, at: number, length: number): number {
  const raw = header.subarray(at, at + length);
  if ((raw[0] ?? 0) & 0x80) {
    let n = (raw[0] ?? 0) & 0x7f;
    for (let i = 1; i < raw.length; i++) n = n * 256 + (raw[i] ?? 0);
    return n;
  }
  const text = field(header, at, length).trim();
  return text === "" ? 0 : Number.parseInt(text, 8);
}

/** True when the header's checksum is right (bytes summed with the checksum field read as spaces). */
function checksumOk(header: Buffer): boolean {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : (header[i] ?? 0);
  return sum === number(header, 148, 8);
}

/** pax records: `<length> <key>=<value>\n`. */
function paxRecords(data: Buffer): Map<string, string> {
  const out = new Map<string, string>();
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    if (space === -1) break;
    const length = Number.parseInt(data.subarray(at, space).toString("ascii"), 10);
    if (!Number.isInteger(length) || length <= 0 || at + length > data.length) break;
    const record = data.subarray(space + 1, at + length - 1).toString("utf8");
    const eq = record.indexOf("=");
    if (eq > 0) out.set(record.slice(0, eq), record.slice(eq + 1));
    at += length;
  }
  return out;
}

/** The entry's path inside the folder, or undefined when it would leave it (absolute, `..`). */
function insidePath(name: string): string | undefined {
  if (name === "" || isAbsolute(name) || name.includes("\0")) return undefined;
  const normal = posix.normalize(name).replace(/\/+$/, "");
  if (normal === "." || normal === "") return ".";
  if (normal === ".." || normal.startsWith("../")) return undefined;
  return normal;
}

/**
 * A writable that takes the tar stream and writes its entries under `dest` (which must not exist: it is made, mode
 * 0700). `notCopied` lists what was left out once `finish` has been emitted.
 */
export class TarIntoFolder extends Writable {
  readonly notCopied: NotCopied[] = [];
  private buffer: Buffer = Buffer.alloc(0);
  private entry: (Entry & { left: number; fd?: number }) | undefined;
  private meta: { kind: "L" | "K" | "x" | "g"; left: number; padded: number; data: Buffer[] } | undefined;
  private pad = 0;
  private pending: { path?: string; link?: string; size?: number } = {};
  private budget: number;
  private readonly links: { path: string; target: string }[] = [];
  private ended = false;

  constructor(
    private readonly dest: string,
    private readonly maxBytes: number,
  ) {
    super();
    this.budget = maxBytes;
    mkdirSync(dest, { recursive: false, mode: 0o700 });
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (e?: Error | null) => void): void {
    try {
      this.take(chunk);
      done();
    } catch (e) {
      done(e as Error);
    }
  }

  override _final(done: (e?: Error | null) => void): void {
    this.closeEntry();
    for (const { path, target } of this.links) {
      try {
        symlinkSync(target, join(this.dest, path));
      } catch (e) {
        this.skip(path, `the link cannot be made (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
      }
    }
    done();
  }

  private skip(path: string, reason: string): void {
    this.notCopied.push({ path, reason });
  }

  private take(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    for (;;) {
      if (this.ended) {
        this.buffer = Buffer.alloc(0);
        return;
      }
      if (this.pad > 0) {
        const n = Math.min(this.pad, this.buffer.length);
        this.pad -= n;
        this.buffer = this.buffer.subarray(n);
        if (this.pad > 0) return;
      }
      if (this.meta !== undefined) {
        const n = Math.min(this.meta.left, this.buffer.length);
        this.meta.data.push(this.buffer.subarray(0, n));
        this.meta.left -= n;
        this.buffer = this.buffer.subarray(n);
        if (this.meta.left > 0) return;
        this.endMeta();
        continue;
      }
      if (this.entry !== undefined) {
        const n = Math.min(this.entry.left, this.buffer.length);
        this.writeData(this.buffer.subarray(0, n));
        this.entry.left -= n;
        this.buffer = this.buffer.subarray(n);
        if (this.entry.left > 0) return;
        this.pad = (BLOCK - (this.entry.size % BLOCK)) % BLOCK;
        this.closeEntry();
        continue;
      }
      if (this.buffer.length < BLOCK) return;
      const header = this.buffer.subarray(0, BLOCK);
      this.buffer = this.buffer.subarray(BLOCK);
      if (header.every((b) => b === 0)) {
        // The end of the archive (two zero blocks); anything after is ignored.
        this.ended = true;
        continue;
      }
      if (!checksumOk(header))
        throw new Error("the job folder's archive from the pod is damaged (a bad header)");
      this.header(header);
    }
  }

  private endMeta(): void {
    const meta = this.meta;
    if (meta === undefined) return;
    this.meta = undefined;
    this.pad = meta.padded - meta.data.reduce((n, d) => n + d.length, 0);
    const data = Buffer.concat(meta.data);
    if (meta.kind === "L") this.pending.path = field(data, 0, data.length);
    else if (meta.kind === "K") this.pending.link = field(data, 0, data.length);
    // A global pax header sets defaults for every later entry (times, owners): none that matters here.
    else if (meta.kind === "x") {
      const records = paxRecords(data);
      const path = records.get("path");
      const link = records.get("linkpath");
      const size = records.get("size");
      if (path !== undefined) this.pending.path = path;
      if (link !== undefined) this.pending.link = link;
      if (size !== undefined && /^\d+$/.test(size)) this.pending.size = Number(size);
    }
  }

  private header(header: Buffer): void {
    const type = String.fromCharCode(header[156] ?? 0);
    if (type === "L" || type === "K" || type === "x" || type === "g") {
      const size = number(header, 124, 12);
      const padded = Math.ceil(size / BLOCK) * BLOCK;
      if (size > 1024 * 1024)
        throw new Error("the job folder's archive from the pod has a header past 1 MiB");
      this.meta = { kind: type, left: size, padded, data: [] };
      if (size === 0) this.endMeta();
      return;
    }
    const size = this.pending.size ?? number(header, 124, 12);
    const prefix = field(header, 345, 155);
    const short = field(header, 0, 100);
    const name = this.pending.path ?? (prefix !== "" ? `${prefix}/${short}` : short);
    const link = this.pending.link ?? field(header, 157, 100);
    this.pending = {};
    const entry = { path: name, type, size, mode: number(header, 100, 8), link };
    const path = insidePath(name);
    const state: Entry & { left: number; fd?: number } = {
      ...entry,
      left: size,
    };
    this.entry = state;
    if (path === undefined) {
      this.skip(name, "a name that leaves the job folder");
      return;
    }
    if (path === ".") return;
    const target = join(this.dest, path);
    if (type === "5") {
      try {
        mkdirSync(target, { recursive: true, mode: 0o755 });
      } catch (e) {
        this.skip(path, `the folder cannot be made (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
      }
    } else if (type === "0" || type === "\0" || type === "7") {
      if (size > this.budget) {
        this.skip(
          path,
          `${size} bytes would pass the template's disk size of outputs (${this.maxBytes} bytes in all)`,
        );
        return;
      }
      try {
        mkdirSync(posix.dirname(target), { recursive: true, mode: 0o755 });
        state.fd = openSync(
          target,
          constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
          entry.mode & 0o111 ? 0o755 : 0o644,
        );
        this.budget -= size;
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        this.skip(path, code === "EEXIST" ? "listed twice" : `cannot be written (${code ?? String(e)})`);
      }
    } else if (type === "2") {
      const inside = posix.normalize(posix.join(posix.dirname(path), link));
      if (link === "" || isAbsolute(link) || inside === ".." || inside.startsWith("../"))
        this.skip(path, `a link out of the job folder (to ${JSON.stringify(link)})`);
      else this.links.push({ path, target: link });
    } else if (type === "1") this.skip(path, "a hard link (not brought back)");
    else if (type === "S") this.skip(path, "a sparse file (not brought back)");
    else this.skip(path, "not a file, folder or link (a FIFO, socket or device)");
  }

  private writeData(data: Buffer): void {
    const entry = this.entry;
    if (entry?.fd === undefined) return;
    let at = 0;
    while (at < data.length) at += writeSync(entry.fd, data, at, data.length - at);
  }

  private closeEntry(): void {
    const entry = this.entry;
    this.entry = undefined;
    if (entry?.fd !== undefined) closeSync(entry.fd);
  }
}
