// A Kubernetes task's files: gathered from the request as a job folder on the host would hold them, and the init
// step's script that copies them from the ConfigMap into the job folder.
import { chmodSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { collectTaskFiles, SEED_MOUNT, seedScript } from "../../runtime/kubernetes/task-files";

describe("a Kubernetes task's files", () => {
  it("takes seeds (a file, a folder walked in order) and inline files, the later of one path winning", () => {
    const dir = mkdtempSync(join(tmpdir(), "sandbox-task-files-"));
    mkdirSync(join(dir, "tree", "sub"), { recursive: true });
    writeFileSync(join(dir, "tree", "b.txt"), "b");
    writeFileSync(join(dir, "tree", "sub", "a.sh"), "echo a");
    chmodSync(join(dir, "tree", "sub", "a.sh"), 0o755);
    symlinkSync("/etc/passwd", join(dir, "tree", "link"));
    writeFileSync(join(dir, "one"), "from the host");
    const { files, skipped } = collectTaskFiles({
      seeds: [
        { kind: "dir", source: join(dir, "tree") },
        { kind: "file", name: "run.sh", source: join(dir, "one") },
      ],
      files: { "run.sh": "inline wins", "notes/x.txt": "x" },
    });
    expect(files.map((f) => [f.path, f.data.toString(), f.executable])).toEqual([
      ["b.txt", "b", false],
      ["sub/a.sh", "echo a", true],
      ["run.sh", "inline wins", false],
      ["notes/x.txt", "x", false],
    ]);
    // A symbolic link is not carried: it could name anything on the host.
    expect(skipped).toEqual(["link"]);
  });

  it("refuses a path that leaves the job folder", () => {
    expect(() => collectTaskFiles({ files: { "../escape": "x" } })).toThrow(
      /"\.\.\/escape" must be a relative path/,
    );
    expect(() => collectTaskFiles({ files: { "/etc/x": "x" } })).toThrow(/must be a relative path/);
  });

  it("copies each entry to its path, quoted, and makes executables executable", () => {
    const script = seedScript(
      [
        { path: "it's here/a.sh", data: Buffer.from(""), executable: true },
        { path: "b", data: Buffer.from(""), executable: false },
      ],
      "/job",
    );
    expect(script.split("\n")).toEqual([
      "set -e",
      `mkdir -p '/job/it'\\''s here'`,
      `cp ${SEED_MOUNT}/f0 '/job/it'\\''s here/a.sh'`,
      `chmod 755 '/job/it'\\''s here/a.sh'`,
      "mkdir -p '/job'",
      `cp ${SEED_MOUNT}/f1 '/job/b'`,
    ]);
  });
});
