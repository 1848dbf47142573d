// A Kubernetes task's job folder comes back from its pod as a tar stream written by code nobody reviewed: these
// archives are made by the machine's own `tar` (as the pod's would be) and by hand (what no honest tar writes), and
// unpacked by runtime/kubernetes/tar-in.ts into a fresh folder.
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TarIntoFolder } from "../../runtime/kubernetes/tar-in";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function scratch(): string {
  const d = mkdtempSync(join(tmpdir(), "tar-in-"));
  dirs.push(d);
  return d;
}

/** The machine's tar of `src`, as `tar -cf - .` in the pod writes it. */
function tarOf(src: string, format = "gnu"): Buffer {
  const r = spawnSync("tar", [`--format=${format}`, "-cf", "-", "."], { cwd: src, maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(String(r.stderr));
  return r.stdout;
}

async function unpack(archive: Buffer, maxBytes = 1 << 20, chunk = 700) {
  const dest = join(scratch(), "out");
  const t = new TarIntoFolder(dest, maxBytes);
  const done = new Promise<Error | undefined>((resolve) => {
    t.on("finish", () => resolve(undefined));
    t.on("error", (e) => resolve(e));
  });
  // Odd-sized pieces: headers and data cross chunk edges, as they do on a socket.
  for (let i = 0; i < archive.length; i += chunk) t.write(archive.subarray(i, i + chunk));
  t.end();
  return { dest, error: await done, notCopied: t.notCopied };
}

/** A ustar header block for `name` of `type` with `size` bytes (the checksum right unless `badSum`). */
function header(name: string, type: string, size: number, link = "", badSum = false): Buffer {
  const h = Buffer.alloc(512);
  h.write(name, 0, 100, "utf8");
  h.write("0000644\0", 100);
  h.write("0001750\0", 108);
  h.write("0001750\0", 116);
  h.write(`${size.toString(8).padStart(11, "0")}\0`, 124);
  h.write("00000000000\0", 136);
  h.write(type, 156);
  h.write(link, 157, 100, "utf8");
  h.write("ustar\0", 257);
  h.write("00", 263);
  let sum = 0;
  for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 32 : (h[i] ?? 0);
  h.write(`${(badSum ? sum + 1 : sum).toString(8).padStart(6, "0")}\0 `, 148);
  return h;
}

function entry(name: string, type: string, data = "", link = ""): Buffer {
  const body = Buffer.from(data);
  const pad = Buffer.alloc((512 - (body.length % 512)) % 512);
  return Buffer.concat([header(name, type, body.length, link), body, pad]);
}

const END = Buffer.alloc(1024);

describe("a job folder from a pod", () => {
  it("comes back file for file: folders, long names, modes reduced, an inside link kept", async () => {
    const src = scratch();
    mkdirSync(join(src, "sub", "deeper"), { recursive: true });
    writeFileSync(join(src, "result.txt"), "forty-two\n");
    const long = `${"n".repeat(120)}.json`;
    writeFileSync(join(src, "sub", long), '{"ok":true}');
    writeFileSync(join(src, "run.sh"), "#!/bin/sh\n");
    chmodSync(join(src, "run.sh"), 0o4755);
    writeFileSync(join(src, "sub", "deeper", "empty"), "");
    symlinkSync("../result.txt", join(src, "sub", "link"));
    for (const format of ["gnu", "pax", "ustar"]) {
      if (format === "ustar") rmSync(join(src, "sub", long));
      const { dest, error, notCopied } = await unpack(tarOf(src, format));
      expect(error).toBeUndefined();
      expect(notCopied).toEqual([]);
      expect(readFileSync(join(dest, "result.txt"), "utf8")).toBe("forty-two\n");
      if (format !== "ustar") expect(readFileSync(join(dest, "sub", long), "utf8")).toBe('{"ok":true}');
      expect(lstatSync(join(dest, "run.sh")).mode & 0o7777).toBe(0o755);
      expect(lstatSync(join(dest, "result.txt")).mode & 0o7777).toBe(0o644);
      expect(readFileSync(join(dest, "sub", "deeper", "empty"), "utf8")).toBe("");
      expect(readlinkSync(join(dest, "sub", "link"))).toBe("../result.txt");
    }
  });

  it("leaves out what is not plain data, each with why, and keeps the rest", async () => {
    const src = scratch();
    writeFileSync(join(src, "a"), "a");
    linkSync(join(src, "a"), join(src, "hard"));
    symlinkSync("/etc/passwd", join(src, "abs"));
    symlinkSync("../../outside", join(src, "up"));
    spawnSync("mkfifo", [join(src, "pipe")]);
    const { dest, error, notCopied } = await unpack(tarOf(src));
    expect(error).toBeUndefined();
    const why = Object.fromEntries(notCopied.map((n) => [n.path, n.reason]));
    expect(why.hard ?? why.a).toMatch(/hard link/);
    expect(why.abs).toMatch(/link out of the job folder/);
    expect(why.up).toMatch(/link out of the job folder/);
    expect(why.pipe).toMatch(/FIFO/);
    expect(existsSync(join(dest, "abs"))).toBe(false);
    expect(existsSync(join(dest, "up"))).toBe(false);
    expect(existsSync(join(dest, "pipe"))).toBe(false);
  });

  it("never writes outside the folder or through a link, whatever the names say", async () => {
    const archive = Buffer.concat([
      entry("../escape", "0", "x"),
      entry("/etc/escape", "0", "x"),
      entry("./ok/../../escape2", "0", "x"),
      // A link to a folder inside, then a file "through" it: the file lands in a real folder, the link is refused.
      entry("l", "2", "", "."),
      entry("l/through", "0", "t"),
      // The same name twice: the first stays.
      entry("twice", "0", "first"),
      entry("twice", "0", "second"),
      entry("fine", "0", "fine"),
      END,
    ]);
    const { dest, error, notCopied } = await unpack(archive);
    expect(error).toBeUndefined();
    expect(existsSync(join(dest, "..", "escape"))).toBe(false);
    expect(existsSync(join(dest, "..", "escape2"))).toBe(false);
    expect(readFileSync(join(dest, "fine"), "utf8")).toBe("fine");
    expect(readFileSync(join(dest, "twice"), "utf8")).toBe("first");
    expect(lstatSync(join(dest, "l")).isDirectory()).toBe(true);
    const why = Object.fromEntries(notCopied.map((n) => [n.path, n.reason]));
    expect(why["../escape"]).toMatch(/leaves the job folder/);
    expect(why["/etc/escape"]).toMatch(/leaves the job folder/);
    expect(why["./ok/../../escape2"]).toMatch(/leaves the job folder/);
    expect(why.twice).toBe("listed twice");
    expect(why.l).toMatch(/link cannot be made/);
  });

  it("holds the template's disk size: a file past it is left out whole, the rest come", async () => {
    const archive = Buffer.concat([
      entry("small", "0", "x".repeat(100)),
      entry("big", "0", "y".repeat(2000)),
      entry("after", "0", "z".repeat(100)),
      END,
    ]);
    const { dest, notCopied } = await unpack(archive, 1000);
    expect(readFileSync(join(dest, "small"), "utf8")).toHaveLength(100);
    expect(readFileSync(join(dest, "after"), "utf8")).toHaveLength(100);
    expect(existsSync(join(dest, "big"))).toBe(false);
    expect(notCopied).toEqual([
      { path: "big", reason: expect.stringMatching(/would pass the template's disk/) },
    ]);
  });

  it("stops at a damaged header with an error, keeping what came before", async () => {
    const archive = Buffer.concat([entry("first", "0", "1"), header("second", "0", 1, "", true), END]);
    const { dest, error } = await unpack(archive);
    expect(error?.message).toMatch(/damaged/);
    expect(readFileSync(join(dest, "first"), "utf8")).toBe("1");
    expect(existsSync(join(dest, "second"))).toBe(false);
  });

  it("refuses to unpack into a folder that is already there", () => {
    const d = scratch();
    expect(() => new TarIntoFolder(d, 10)).toThrow(/EEXIST/);
  });
});
