// A task's outputs as `run --out` copies them (runtime/outputs.ts), on the host's file system: each attack is
// checked against a source that really carries it (a setuid bit, a 3 GB sparse file, links out), then against the copy.
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { copyOutputs } from "../../runtime/outputs";

const MB = 1024 * 1024;
let dirs: string[] = [];
const fresh = () => {
  const d = mkdtempSync(join(tmpdir(), "sandbox-outputs-"));
  dirs.push(d);
  return { job: join(d, "job"), out: join(d, "out"), root: d };
};
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

describe("copyOutputs", () => {
  it("copies files and folders as plain data: contents kept, setuid, setgid and sticky bits dropped", () => {
    const { job, out } = fresh();
    mkdirSync(join(job, "sub"), { recursive: true });
    writeFileSync(join(job, "a.txt"), "A");
    writeFileSync(join(job, "sub", "tool"), "#!/bin/sh\n");
    chmodSync(join(job, "sub", "tool"), 0o6755);
    writeFileSync(join(job, "sticky"), "s");
    chmodSync(join(job, "sticky"), 0o1644);
    expect(statSync(join(job, "sub", "tool")).mode & 0o6000).toBe(0o6000); // the source really is setuid+setgid
    expect(copyOutputs(job, out, 10 * MB)).toEqual([]);
    expect(readFileSync(join(out, "a.txt"), "utf8")).toBe("A");
    expect(readFileSync(join(out, "sub", "tool"), "utf8")).toBe("#!/bin/sh\n");
    expect(statSync(join(out, "sub", "tool")).mode & 0o7000).toBe(0);
    expect(statSync(join(out, "sub", "tool")).mode & 0o100).toBe(0o100);
    expect(statSync(join(out, "sticky")).mode & 0o7777).toBe(0o644 & ~process.umask());
  });

  it("gives the copies to whoever runs the launcher, never the task's account", () => {
    const { job, out } = fresh();
    mkdirSync(job);
    writeFileSync(join(job, "mine.txt"), "m");
    // As a task leaves it: owned by the task's user (1000 in the images here), when the launcher may say so.
    const me = process.getuid?.() ?? 0;
    if (me === 0) chownSync(join(job, "mine.txt"), 1000, 1000);
    expect(statSync(join(job, "mine.txt")).uid).toBe(me === 0 ? 1000 : me);
    expect(copyOutputs(job, out, MB)).toEqual([]);
    expect(statSync(join(out, "mine.txt")).uid).toBe(me);
    expect(statSync(join(out, "mine.txt")).gid).toBe(process.getgid?.() ?? 0);
  });

  it("leaves out a sparse file larger than the template's disk size, and stops at the bound in all", () => {
    const { job, out } = fresh();
    mkdirSync(job);
    writeFileSync(join(job, "0-big"), "");
    truncateSync(join(job, "0-big"), 3 * 1024 * MB);
    expect(statSync(join(job, "0-big")).size).toBe(3 * 1024 * MB); // 3 GB as the task sees it, no blocks
    writeFileSync(join(job, "1-first"), Buffer.alloc(600 * 1024, 1));
    writeFileSync(join(job, "2-second"), Buffer.alloc(600 * 1024, 2));
    const left = copyOutputs(job, out, MB);
    expect(left.map((l) => l.path).sort()).toEqual(["0-big", "2-second"]);
    expect(left.find((l) => l.path === "0-big")?.reason).toMatch(/would pass the template's disk size/);
    expect(existsSync(join(out, "0-big"))).toBe(false);
    expect(statSync(join(out, "1-first")).size).toBe(600 * 1024);
  });

  it("copies a link only when it points inside the outputs; FIFOs and sockets are left out", () => {
    const { job, out } = fresh();
    mkdirSync(join(job, "d"), { recursive: true });
    writeFileSync(join(job, "inside.txt"), "in");
    symlinkSync("inside.txt", join(job, "ok"));
    symlinkSync("../inside.txt", join(job, "d", "up-ok"));
    symlinkSync("/etc/shadow", join(job, "leak"));
    symlinkSync("../../../../../../etc/passwd", join(job, "d", "climb"));
    execFileSync("mkfifo", [join(job, "pipe")]);
    const left = copyOutputs(job, out, MB);
    expect(left).toEqual(
      expect.arrayContaining([
        { path: "leak", reason: 'a link out of the job folder (to "/etc/shadow")' },
        { path: "d/climb", reason: 'a link out of the job folder (to "../../../../../../etc/passwd")' },
        { path: "pipe", reason: "not a file, folder or link (a FIFO, socket or device)" },
      ]),
    );
    expect(left).toHaveLength(3);
    expect(readlinkSync(join(out, "ok"))).toBe("inside.txt");
    expect(readFileSync(join(out, "d", "up-ok"), "utf8")).toBe("in");
    expect(existsSync(join(out, "leak"))).toBe(false);
  });

  it("never writes through a link already in the operator's folder", () => {
    const { job, out, root } = fresh();
    mkdirSync(job);
    mkdirSync(out);
    const victim = join(root, "victim");
    writeFileSync(victim, "precious");
    symlinkSync(victim, join(out, "report.txt"));
    symlinkSync(root, join(out, "dir"));
    writeFileSync(join(job, "report.txt"), "overwritten");
    mkdirSync(join(job, "dir"));
    writeFileSync(join(job, "dir", "victim"), "overwritten");
    const left = copyOutputs(job, out, MB);
    expect(left.map((l) => l.path).sort()).toEqual(["dir", "report.txt"]);
    expect(readFileSync(victim, "utf8")).toBe("precious");
    expect(lstatSync(join(out, "report.txt")).isSymbolicLink()).toBe(true);
  });
});
