import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import type Dockerode from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../cli/main";
import { isMountPoint, jobDiskSupport } from "../../runtime/job-disk";
import { witnessPath } from "../../runtime/ledger/witness";
import { projectLeftovers } from "../../runtime/offSwitch";

const WITNESS = basename(witnessPath("/"));

import { requireDocker, TEST_IMAGE } from "../helpers/docker";
import { frontStack } from "../helpers/front-stack";

// `./sandbox run` through the front, on the real engine, with a stack of its own.
let docker: Dockerode;
const stack = frontStack("rv", "rv", [
  "  sandbox:budget:",
  "    monthlyCapUsd: 100",
  "  sandbox:templates:",
  "    default:",
  `      image: ${TEST_IMAGE}`,
  "    short:",
  `      image: ${TEST_IMAGE}`,
  "      timeoutSeconds: 2",
  "    ghost:",
  "      image: sandbox-no-such-image:0",
]);
const { name, root, jobRoot, front } = stack;
const host = mkdtempSync(join(tmpdir(), `${name}-host-`));

beforeAll(async () => {
  docker = await requireDocker();
});
afterAll(async () => {
  await stack.cleanup(docker);
  rmSync(host, { recursive: true, force: true });
});

/** A file on the host to seed a job folder with. */
function hostFile(file: string, content: string): string {
  const path = join(host, file);
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, content);
  return path;
}

/** The job root's entries but the ledger's witness, which stays (runtime/ledger/witness.ts). */
const jobEntries = () =>
  existsSync(jobRoot)
    ? readdirSync(jobRoot)
        .filter((e) => e !== WITNESS)
        .sort()
    : [];

describe("run: seeding the job folder, the task's exit code, the result folder", () => {
  it("runs the default command on a --file run.sh and exits with the task's own code", async () => {
    const script = hostFile("task.sh", 'echo "hello $(id -u)"; echo result > out.txt; exit 7\n');
    const out = join(host, "result-1");
    const r = await front("run", "rv", "default", "--file", `run.sh=${script}`, "--out", out);
    expect(r.out).toBe("hello 1000\n");
    expect(r.code).toBe(7);
    expect(r.err).toMatch(
      new RegExp(
        `task [a-z0-9-]+: exit 7; outputs copied to ${out}; job folder ${jobRoot}/[a-z0-9-]+ removed; charged \\$[0-9.]+\\n$`,
      ),
    );
    expect(readFileSync(join(out, "out.txt"), "utf8")).toBe("result\n");
    expect(readFileSync(join(out, "run.sh"), "utf8")).toContain("exit 7");
    // The job folder and its marker are gone; nothing of the task is left on the engine.
    expect(jobEntries()).toEqual([]);
    expect(await projectLeftovers(docker, name)).toEqual([]);
  });

  it("seeds a whole --dir, keeps the job folder with --keep, and runs the command after --", async () => {
    const dir = join(host, "input");
    hostFile("input/data/a.txt", "A\n");
    hostFile("input/b.txt", "B\n");
    const r = await front(
      "run",
      "rv",
      "default",
      "--dir",
      dir,
      "--keep",
      "--",
      "sh",
      "-c",
      "cat data/a.txt b.txt; touch made",
    );
    expect(r.code).toBe(0);
    expect(r.out).toBe("A\nB\n");
    const kept = new RegExp(`job folder (${jobRoot}/[a-z0-9-]+) kept`).exec(r.err)?.[1] ?? "";
    expect(readdirSync(kept).sort()).toEqual(["b.txt", "data", "made"]);
    // The seeded files belong to the task's user, so the task could read and write beside them.
    expect(lstatSync(join(kept, "data", "a.txt")).uid).toBe(1000);
    const id = kept.slice(jobRoot.length + 1);
    const disk = jobDiskSupport().bounded ? [`.${id}.sandbox-disk`] : []; // kept mounted, its image beside it
    expect(isMountPoint(kept)).toBe(disk.length > 0);
    expect(jobEntries()).toEqual([...disk, `.${id}.sandbox-job`, id]);
  });

  it("writes one JSON document with --json, and copies no link out of the job folder", async () => {
    const out = join(host, "result-json");
    const r = await front(
      "run",
      "rv",
      "default",
      "--json",
      "--out",
      out,
      "--",
      "sh",
      "-c",
      "ln -s /etc/shadow leak; echo hi; exit 5",
    );
    expect(r.code).toBe(5);
    const doc = JSON.parse(r.out) as Record<string, unknown> & { task: Record<string, unknown> };
    expect(doc).toMatchObject({
      verb: "run",
      ok: false,
      exitCode: 5,
      out,
      skipped: [{ path: "leak", reason: 'a link out of the job folder (to "/etc/shadow")' }],
    });
    expect(doc.task).toMatchObject({
      template: "default",
      exitCode: 5,
      stdout: "hi\n",
      stderr: "",
      limits: [],
    });
    expect(doc.jobFolder).toMatchObject({ kept: false });
    expect(existsSync(join(out, "leak"))).toBe(false);
  });

  it("--out brings back plain data: no setuid bit, no sparse gigabytes, no link out, no FIFO", async () => {
    const out = join(host, "result-attack");
    const r = await front(
      "run",
      "rv",
      "default",
      "--keep",
      "--out",
      out,
      "--",
      "sh",
      "-c",
      [
        "cp /bin/busybox tool && chmod 4755 tool",
        "truncate -s 3G big",
        "echo in > inside.txt && ln -s inside.txt ok && ln -s /etc/shadow leak",
        "mkfifo \"$(printf 'p\\033]0;pwned\\007')\"",
        "ls -l tool big",
      ].join("; "),
    );
    expect(r.code).toBe(0);
    // The task really made them (the kept job folder): a setuid file and a 3 GB file.
    const kept = new RegExp(`job folder (${jobRoot}/[a-z0-9-]+) kept`).exec(r.err)?.[1] ?? "";
    expect(lstatSync(join(kept, "tool")).mode & 0o4000).toBe(0o4000);
    expect(lstatSync(join(kept, "big")).size).toBe(3 * 1024 ** 3);
    // The copy: plain data within the template's 1024 MB disk.
    expect(lstatSync(join(out, "tool")).mode & 0o7000).toBe(0);
    expect(existsSync(join(out, "big"))).toBe(false);
    expect(readlinkSync(join(out, "ok"))).toBe("inside.txt");
    expect(existsSync(join(out, "leak"))).toBe(false);
    expect(readdirSync(out).sort()).toEqual(["inside.txt", "ok", "tool"]);
    // The summary names what was left out, the task's file name written out, never passed to the terminal.
    expect(r.err).toContain('"big" (3221225472 bytes would pass the template\'s disk size of outputs');
    expect(r.err).toContain('"p\\u001b]0;pwned\\u0007" (not a file, folder or link');
    expect(r.err).not.toContain("\u001b");
  });

  it("on a terminal shows a task's output behind a gutter with its escape sequences written out; to a pipe, as written", async () => {
    const printf =
      "printf 'fine\\n\\033[2J\\033]52;c;cHduZWQ=\\007task x: exit 0\\rfake\\n'; printf 'oops\\033[31m\\n' >&2";
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(
      ["run", "rv", "default", "--", "sh", "-c", printf],
      { out: (t) => out.push(t), err: (t) => err.push(t), terminal: { out: true, err: true } },
      root,
    );
    expect(code).toBe(0);
    expect(out.join("")).toBe(
      "\u2502 fine\n\u2502 \\x1b[2J\\x1b]52;c;cHduZWQ=\\x07task x: exit 0\\x0dfake\n",
    );
    // Shown as it was written (live), then the summary.
    expect(err.join("")).toContain("\n\u2502 oops\\x1b[31m\n");
    expect(err.join("")).toMatch(/\ntask [a-z0-9-]+: exit 0; job folder /);
    const shown = `${out.join("")}${err.join("")}`;
    for (const c of ["\u001b", "\u0007", "\r"]) expect(shown).not.toContain(c);
    // Not a terminal: the bytes as the task wrote them (a script reading the output gets them unchanged).
    const piped = await front("run", "rv", "default", "--", "sh", "-c", printf);
    expect(piped.out).toBe("fine\n\u001b[2J\u001b]52;c;cHduZWQ=\u0007task x: exit 0\rfake\n");
  });

  it("a flood of output neither ends the launcher nor grows its memory: the engine keeps the last 16 MiB", async () => {
    let peak = 0;
    const before = process.memoryUsage().rss;
    const sample = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss - before);
    }, 20);
    let r: Awaited<ReturnType<typeof front>>;
    try {
      r = await front(
        "run",
        "rv",
        "default",
        "--json",
        "--",
        "sh",
        "-c",
        "dd if=/dev/zero bs=1M count=300 2>/dev/null | tr '\\0' x; echo; echo END",
      );
    } finally {
      clearInterval(sample);
    }
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.out) as { task: { stdout: string } };
    expect(doc.task.stdout.length).toBeLessThanOrEqual(16 * 1024 * 1024);
    expect(doc.task.stdout.length).toBeGreaterThan(1024 * 1024);
    expect(doc.task.stdout.endsWith("x\nEND\n")).toBe(true);
    // 300 MB read whole would take well over a gigabyte here (buffer, frames, text); the bound keeps it small.
    expect(peak).toBeLessThan(400 * 1024 * 1024);
  });

  it("exits 124 when the template's deadline kills the task", async () => {
    const r = await front("run", "rv", "short", "--", "sleep", "30");
    expect(r.code).toBe(124);
    expect(r.err).toContain("(killed at its 2 s deadline: exit 124), limits hit: timeout;");
  });
});

describe("run: what it refuses, once, in the user's terms", () => {
  it("gives exit 3 and one message naming a missing image and how to build it; nothing is created", async () => {
    const before = jobEntries();
    const r = await front("run", "rv", "ghost", "--", "true");
    expect(r.code).toBe(3);
    expect(r.out).toBe("");
    expect(r.err).toBe(
      'image "sandbox-no-such-image:0" of template "ghost" is not on the local Docker engine, and the toolkit never pulls one. Build the offline images with `bash toolchain/docker.sh`, or build or load your own image and name it in the template (sandbox:templates.ghost.image). Nothing was started.\n',
    );
    expect(jobEntries()).toEqual(before);
    const json = await front("run", "rv", "ghost", "--json");
    expect(json.code).toBe(3);
    expect(JSON.parse(json.out)).toMatchObject({
      verb: "run",
      ok: false,
      exitCode: 3,
      error: { kind: "image-missing" },
    });
    expect(json.err).toBe("");
    expect(await projectLeftovers(docker, name)).toEqual([]);
  });

  it.each([
    [
      ["--bogus"],
      'unknown option "--bogus" for run; allowed: --file name=path, --dir path, --out dir, --keep, --agent name, --env NAME=value, --timeout seconds, --wait[=seconds], -i, --json (a task\'s own arguments go after --)',
    ],
    [
      ["--file", "run.sh"],
      '--file "run.sh": expected name=path (the name in the job folder, then the host file), e.g. --file run.sh=./task.sh',
    ],
    [
      ["--file", "../x=/etc/hostname"],
      '--file "../x=/etc/hostname": the name "../x" must be a relative path inside the job folder (no leading /, no ..)',
    ],
    [
      ["--file", "a=/nonexistent/file"],
      '--file "a=/nonexistent/file": /nonexistent/file is not a readable file',
    ],
    [["--dir", "/nonexistent"], '--dir "/nonexistent": /nonexistent is not a folder'],
    [
      ["--out"],
      "--out needs a value: run <stack> <template> [--file name=path]... [--dir path]... [--out dir] [--keep] [--agent name] [--env NAME=value]... [--timeout seconds] [--wait[=seconds]] [-i] [--json] [-- command...]",
    ],
  ])("refuses %j with exit 2 and one message", async (args, message) => {
    const r = await front("run", "rv", "default", ...args);
    expect(r.code).toBe(2);
    expect(r.err).toBe(`${message}\n`);
    expect(r.out).toBe("");
  });

  it("never writes into a result folder that holds files", async () => {
    const full = join(host, "full");
    hostFile("full/keep.txt", "mine\n");
    const r = await front("run", "rv", "default", "--out", full, "--", "true");
    expect(r.code).toBe(2);
    expect(r.err).toBe(`--out "${full}": ${full} exists and is not an empty folder; name a new one\n`);
    expect(readdirSync(full)).toEqual(["keep.txt"]);
  });
});

describe("off removes the project's job folders and nothing else", () => {
  it("removes marked folders of this project only, follows no link, and removes nothing the second time", async () => {
    const kept = await front(
      "run",
      "rv",
      "default",
      "--keep",
      "--",
      "sh",
      "-c",
      "mkdir -p deep/er && echo x > deep/er/f",
    );
    const id = new RegExp(`job folder ${jobRoot}/([a-z0-9-]+) kept`).exec(kept.err)?.[1] ?? "";
    expect(id).not.toBe("");
    // Every folder the earlier tests kept is this project's too.
    const ours = jobEntries()
      .filter((e) => !e.startsWith("."))
      .map((e) => join(jobRoot, e));
    expect(ours).toContain(join(jobRoot, id));
    // What off must leave: a folder without a marker, another project's marked folder, and a link named like a
    // job folder (with a forged marker) that points at a folder outside the root.
    const outside = mkdtempSync(join(tmpdir(), `${name}-outside-`));
    writeFileSync(join(outside, "precious"), "keep me\n");
    mkdirSync(join(jobRoot, "by-hand"));
    mkdirSync(join(jobRoot, "other-task"));
    writeFileSync(
      join(jobRoot, ".other-task.sandbox-job"),
      JSON.stringify({ managedBy: "sandbox-projects", project: "someone-else", id: "other-task" }),
    );
    symlinkSync(outside, join(jobRoot, "linked"));
    writeFileSync(
      join(jobRoot, ".linked.sandbox-job"),
      JSON.stringify({ managedBy: "sandbox-projects", project: name, id: "linked" }),
    );

    // Help never acts, and a person who answers no changes nothing: the folders are still there.
    const before = jobEntries();
    for (const argv of [
      ["off", "rv", "--help"],
      ["off", "--help", "--json"],
      ["help", "off"],
    ]) {
      const help = await front(...argv);
      expect(help.code).toBe(0);
      expect(help.out).toMatch(/^usage: sandbox off <stack>/);
    }
    const declined = await main(
      ["off", "rv"],
      { out: () => undefined, err: () => undefined, ask: async () => "no" },
      root,
    );
    expect(declined).toBe(2);
    expect(jobEntries()).toEqual(before);

    // --yes on a terminal: no question, and the off switch runs.
    const r = await (async () => {
      const out: string[] = [];
      const code = await main(
        ["off", "rv", "--json", "--yes"],
        {
          out: (t) => out.push(t),
          err: () => undefined,
          ask: async () => {
            throw new Error("asked");
          },
        },
        root,
      );
      return { code, out: out.join("") };
    })();
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ verb: "off", ok: true, project: name, jobFolders: ours });
    expect(jobEntries()).toEqual([
      ".linked.sandbox-job",
      ".other-task.sandbox-job",
      "by-hand",
      "linked",
      "other-task",
    ]);
    expect(readFileSync(join(outside, "precious"), "utf8")).toBe("keep me\n");

    const again = await front("off", "rv");
    expect(again.code).toBe(0);
    expect(again.out).toBe(
      `off switch for ${name}: removed 0 container(s), 0 network(s), 0 volume(s), 0 job folder(s)\n`,
    );
    rmSync(outside, { recursive: true, force: true });
    for (const e of jobEntries()) rmSync(join(jobRoot, e), { recursive: true, force: true });
  });
});
