// A task's job folder on Docker is a disk of its own of the template's diskMb, mounted nosuid,nodev,noexec
// (runtime/job-disk.ts): a task that writes past it gets ENOSPC, the host-side image never grows past it, nothing in
// it can be executed, and the off switch unmounts and deletes what a killed launcher left. Each wall is checked
// beside its negative control, the same attempt with the wall down (SANDBOX_JOB_DISK=plain), which succeeds.
import { readFileSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type Dockerode from "dockerode";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { jobDiskImagePath, jobDiskSupport, mountPoints, unescapeMountPath } from "../../runtime/job-disk";
import { jobMarkerPath, prepareJobFolder, removeJobFolder } from "../../runtime/jobs";
import { Launcher, LaunchRefused } from "../../runtime/launcher";
import { offSwitch } from "../../runtime/offSwitch";
import { policyPreflight } from "../../runtime/preflight";
import { runProbe } from "../../runtime/walls";
import { requireDocker, specOf, TEST_IMAGE, testProject } from "../helpers/docker";

const MIB = 1024 * 1024;
const DISK_MB = 64;
let docker: Dockerode;
const project = testProject("jd", {
  small: { image: TEST_IMAGE, resources: { diskMb: DISK_MB } },
});
const jobRoot = project.jobRoot;
const spec = specOf(project, "small");
const launcher = () => new Launcher(docker, { ledger: false, preflight: policyPreflight() });

/** The mount table's entry for `path`, as the host's kernel shows it (its options), or undefined. */
function hostMount(path: string): string | undefined {
  return readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .find((l) => unescapeMountPath(l.split(" ")[4] ?? "") === path);
}

/** Tries a setuid copy of busybox and a script from the job folder directly, then writes 200 MB into it. */
const ATTEMPT = [
  "cp /bin/busybox /job/bb && chmod 4755 /job/bb && /job/bb true; echo bb=$?",
  "chmod 755 /job/x.sh; /job/x.sh; echo script=$?",
  "sh /job/x.sh",
  "dd if=/dev/zero of=/job/big bs=1M count=200 2>/tmp/dd.err; echo dd=$?; cat /tmp/dd.err >&2",
].join("\n");

beforeAll(async () => {
  docker = await requireDocker();
  // This suite proves the wall where it can stand: a host that cannot mount one says so here, not by skipping.
  const support = jobDiskSupport();
  if (!support.bounded) throw new Error(`this host cannot give a job folder its own disk: ${support.reason}`);
});
afterEach(() => {
  delete process.env.SANDBOX_JOB_DISK;
});
afterAll(async () => {
  if (docker) await offSwitch(docker, project.spec.name, { jobRoot });
  rmSync(jobRoot, { recursive: true, force: true });
});

describe("a job folder with a disk of its own (diskMb 64)", () => {
  it("refuses a write past diskMb with ENOSPC inside the task; the image on the host stays within diskMb", async () => {
    const r = await launcher().run(spec, {
      id: "full",
      command: ["sh", "-c", ATTEMPT],
      files: { "x.sh": "#!/bin/sh\necho ran\n" },
    });
    expect(r.jobDisk).toEqual({ bounded: true });
    expect(r.stdout).toMatch(/^dd=1$/m);
    expect(r.stderr).toMatch(/No space left on device/);
    const image = statSync(jobDiskImagePath(jobRoot, "full"));
    expect(image.size).toBe(DISK_MB * MIB);
    expect(image.blocks * 512).toBeLessThanOrEqual(DISK_MB * MIB);
    expect(statSync(join(r.jobDir, "big")).size).toBeLessThan(DISK_MB * MIB);
    // noexec: neither the setuid copy nor the script runs from the folder; `sh script` still does.
    expect(r.stdout).toMatch(/^bb=126$/m);
    expect(r.stdout).toMatch(/^script=126$/m);
    expect(r.stdout).toMatch(/^ran$/m);
    expect(statSync(join(r.jobDir, "bb")).mode & 0o4000).toBe(0o4000); // the bit is there; the mount voids it
    const options = hostMount(r.jobDir)?.split(" ")[5]?.split(",") ?? [];
    expect(options).toEqual(expect.arrayContaining(["nosuid", "nodev", "noexec"]));
    // Owned as the plain folder was: by the task's user, mode 750, nothing but what the task made.
    const root = statSync(r.jobDir);
    expect([root.uid, root.gid, root.mode & 0o7777]).toEqual([1000, 1000, 0o750]);
    removeJobFolder(jobRoot, "full");
    expect(hostMount(r.jobDir)).toBeUndefined();
    expect(() => statSync(jobDiskImagePath(jobRoot, "full"))).toThrow(/ENOENT/);
    expect(() => statSync(r.jobDir)).toThrow(/ENOENT/);
  });

  it("negative control: with SANDBOX_JOB_DISK=plain the same write passes diskMb and the script runs", async () => {
    process.env.SANDBOX_JOB_DISK = "plain";
    const r = await launcher().run(spec, {
      id: "plain",
      command: ["sh", "-c", ATTEMPT],
      files: { "x.sh": "#!/bin/sh\necho ran\n" },
    });
    try {
      expect(r.jobDisk).toEqual({ bounded: false, reason: "SANDBOX_JOB_DISK=plain" });
      expect(r.stdout).toMatch(/^dd=0$/m);
      expect(statSync(join(r.jobDir, "big")).size).toBe(200 * MIB);
      expect(r.stdout).toMatch(/^script=0$/m);
      expect(hostMount(r.jobDir)).toBeUndefined();
    } finally {
      removeJobFolder(jobRoot, "plain");
    }
  });

  it("the probe judges the folder's size and mount options, and says when they are not bounded here", async () => {
    const t = project.spec.templates.small;
    if (t === undefined) throw new Error("no template");
    const bounded = (await runProbe(launcher(), spec, t)).report;
    expect(bounded.walls.filter((w) => w.ok !== true)).toEqual([]);
    expect(bounded.walls.find((w) => w.wall === "jobDisk")?.declared).toBe("65536 KiB or less (diskMb 64)");
    expect(bounded.walls.find((w) => w.wall === "jobMount")?.observed).toBe("nosuid,nodev,noexec");
    process.env.SANDBOX_JOB_DISK = "plain";
    const plain = (await runProbe(launcher(), spec, t)).report;
    expect(plain.passed).toBe(true); // not a failed launch: the host never promised it
    expect(plain.walls.find((w) => w.wall === "jobDisk")).toMatchObject({ ok: null });
    expect(plain.walls.find((w) => w.wall === "jobDisk")?.observed).toMatch(
      /not bounded on this host \(SANDBOX_JOB_DISK=plain\)/,
    );
    expect(plain.walls.find((w) => w.wall === "jobMount")).toMatchObject({ ok: null });
  });

  it("refuses seeds larger than diskMb, naming the template, the size and diskMb; nothing stays mounted", async () => {
    const big = join(jobRoot, "..", `${project.spec.name}-seed`);
    writeFileSync(big, "");
    truncateSync(big, 70 * MIB);
    // Within diskMb, but past what the filesystem's own bookkeeping leaves of it: refused when the copy runs out.
    const almost = `${big}-almost`;
    writeFileSync(almost, Buffer.alloc(63 * MIB, 1));
    try {
      for (const [id, source, size] of [
        ["seed-big", big, "70.0"],
        ["seed-almost", almost, "63.0"],
      ] as const) {
        const launch = launcher().run(spec, { id, seeds: [{ kind: "file", name: "in", source }] });
        await expect(launch).rejects.toBeInstanceOf(LaunchRefused);
        await expect(launch).rejects.toThrow(
          new RegExp(`template "small".*\\(${size} MiB\\).*diskMb is 64.*template "small"`, "s"),
        );
        expect(hostMount(join(jobRoot, id))).toBeUndefined();
        expect(() => statSync(jobDiskImagePath(jobRoot, id))).toThrow(/ENOENT/);
        removeJobFolder(jobRoot, id);
      }
      expect(
        await docker.listContainers({
          all: true,
          filters: { label: [`sandbox.project=${project.spec.name}`] },
        }),
      ).toEqual([]);
    } finally {
      rmSync(big, { force: true });
      rmSync(almost, { force: true });
    }
  });

  it("the off switch unmounts and deletes a disk a killed launcher left, following no link the task made", async () => {
    const victim = join(jobRoot, "..", `${project.spec.name}-victim`);
    writeFileSync(victim, "precious");
    try {
      const dir = prepareJobFolder(jobRoot, "killed", project.spec.name, "1000:1000", { "a.txt": "A" }, [], {
        template: "small",
        diskMb: DISK_MB,
      });
      // What the task could leave: links out of its folder, to a host file and to the folder above.
      symlinkSync(victim, join(dir, "victim"));
      symlinkSync("..", join(dir, "up"));
      expect(hostMount(dir)).toBeDefined();
      const report = await offSwitch(docker, project.spec.name, { jobRoot });
      expect(report.jobFolders).toEqual([dir]);
      expect(hostMount(dir)).toBeUndefined();
      expect(readFileSync("/proc/mounts", "utf8")).not.toContain(dir);
      expect(() => statSync(jobDiskImagePath(jobRoot, "killed"))).toThrow(/ENOENT/);
      expect(() => statSync(jobMarkerPath(jobRoot, "killed"))).toThrow(/ENOENT/);
      expect(readFileSync(victim, "utf8")).toBe("precious");
      expect(statSync(jobRoot).isDirectory()).toBe(true);
    } finally {
      rmSync(victim, { force: true });
    }
  });
});

describe("reading the mount table", () => {
  it("unescapes the kernel's octal escapes and reads the fifth field of each line", () => {
    expect(unescapeMountPath("/a\\040b\\011c\\012d\\134e")).toBe("/a b\tc\nd\\e");
    expect(
      mountPoints(
        "22 1 8:1 / / rw,relatime - ext4 /dev/vda rw\n46 22 7:0 / /jobs/a\\040b rw,nosuid,nodev,noexec - ext4 /dev/loop0 rw\n",
      ),
    ).toEqual(["/", "/jobs/a b"]);
  });
});
