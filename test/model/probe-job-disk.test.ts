// The job folder's walls in the probe (components/model/probe-job-disk.ts): its size against diskMb and its mount's
// options, judged only where the launcher says whether it gave the folder a disk of its own.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import {
  type JobDiskState,
  judgeProbe,
  parseProbeOutput,
  probeScript,
  TemplateSchema,
} from "../../components/model";
import { HARDENED_PROBE_LOGS } from "../helpers/probeLogs";

const template = TemplateSchema.parse({ image: "x:1", resources: { diskMb: 64 } });
const logs = (size: string, mount: string) =>
  `${HARDENED_PROBE_LOGS}\nprobe.jobSizeKb=${size}\nprobe.jobMount=${mount}`;
const BOUNDED_MOUNT = "rw,nosuid,nodev,noexec,relatime";
const jobWalls = (l: string, jobDisk?: JobDiskState) =>
  judgeProbe(template, parseProbeOutput(l), jobDisk === undefined ? {} : { jobDisk }).walls.filter(
    (w) => w.wall.startsWith("jobD") || w.wall === "jobMount",
  );

describe("the probe's job folder lines", () => {
  it("reads the folder's size with df -P and its options from /proc/mounts, quoting the path as the kernel writes it", () => {
    const script = probeScript({ jobFolder: "/my job/", egressUrl: "http://x/" });
    expect(script).toContain("df -Pk '/my job/'");
    expect(script).toContain(`[ "$m" = '/my\\040job' ]`);
    const r = spawnSync("sh", ["-n", "-c", script], { encoding: "utf8" });
    expect(r.status).toBe(0);
  });

  it("finds the folder's own mount in a mount table and prints its options", () => {
    const script = probeScript({ jobFolder: "/job", egressUrl: "http://x/" });
    const line = script.split("\n").find((l) => l.includes("/proc/mounts")) ?? "";
    const table = "overlay / overlay rw 0 0\n/dev/loop3 /job ext4 rw,nosuid,nodev,noexec,relatime 0 0\n";
    const r = spawnSync(
      "sh",
      ["-c", `say() { echo "probe.$1=$2"; }\n${line.replace("< /proc/mounts", "")}`],
      {
        input: table,
        encoding: "utf8",
      },
    );
    expect(r.stdout).toBe("probe.jobMount=rw,nosuid,nodev,noexec,relatime\n");
  });
});

describe("judging the job folder", () => {
  it("adds no job folder wall unless the launcher says what it did (Kubernetes, @pulumi/docker's probe)", () => {
    expect(jobWalls(logs("56037", BOUNDED_MOUNT))).toEqual([]);
  });

  it("passes a disk of diskMb or less mounted nosuid,nodev,noexec", () => {
    const report = judgeProbe(template, parseProbeOutput(logs("56037", BOUNDED_MOUNT)), {
      jobDisk: { bounded: true },
    });
    expect(report.passed).toBe(true);
    expect(report.walls.filter((w) => w.wall === "jobDisk" || w.wall === "jobMount")).toEqual([
      { wall: "jobDisk", declared: "65536 KiB or less (diskMb 64)", observed: "56037 KiB", ok: true },
      { wall: "jobMount", declared: "nosuid,nodev,noexec", observed: "nosuid,nodev,noexec", ok: true },
    ]);
  });

  it.each([
    ["the host's disk", "263174212", BOUNDED_MOUNT, "jobDisk"],
    ["a size that is no number", "unknown", BOUNDED_MOUNT, "jobDisk"],
    ["a size of 0", "0", BOUNDED_MOUNT, "jobDisk"],
    ["no noexec", "56037", "rw,nosuid,nodev,relatime", "jobMount"],
    ["no mount of its own", "56037", "unknown", "jobMount"],
  ])("fails a bounded folder with %s", (_, size, mount, wall) => {
    const report = judgeProbe(template, parseProbeOutput(logs(size, mount)), { jobDisk: { bounded: true } });
    expect(report.passed).toBe(false);
    expect(report.walls.filter((w) => w.ok === false).map((w) => w.wall)).toEqual([wall]);
  });

  it("says a plain folder is not bounded on this host, and why, without failing the probe", () => {
    const report = judgeProbe(template, parseProbeOutput(logs("263174212", "rw,relatime")), {
      jobDisk: { bounded: false, reason: "the launcher is not root" },
    });
    expect(report.passed).toBe(true);
    expect(report.walls.filter((w) => w.wall === "jobDisk" || w.wall === "jobMount")).toEqual([
      {
        wall: "jobDisk",
        declared: "65536 KiB or less (diskMb 64)",
        observed:
          "263174212 KiB; not bounded on this host (the launcher is not root): a plain host folder, a task can fill the host's disk",
        ok: null,
      },
      {
        wall: "jobMount",
        declared: "nosuid,nodev,noexec",
        observed: "none of nosuid,nodev,noexec; not applied on this host (the launcher is not root)",
        ok: null,
      },
    ]);
  });

  it("under gVisor judges the size and says the mount's options are out of sight and noexec does not hold", () => {
    const gv = logs("56037", "rw,trans=fd,directfs").replace("probe.kernel=host", "probe.kernel=gVisor");
    const walls = jobWalls(gv, { bounded: true });
    expect(walls.map((w) => [w.wall, w.ok])).toEqual([
      ["jobDisk", true],
      ["jobMount", null],
    ]);
    expect(walls[1]?.observed).toMatch(/^not observable under gVisor .*noexec does not hold inside$/);
  });
});
