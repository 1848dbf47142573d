import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, symlinkSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const execFileAsync = promisify(execFile);

import { HTTP_GET, judgeProbe, parseProbeOutput, probeScript, TemplateSchema } from "../../components/model";
import { HARDENED_PROBE_LOGS } from "../helpers/probeLogs";

const script = probeScript({ jobFolder: "/job", egressUrl: "http://169.254.169.254/latest/meta-data/" });

const hardenedLogs = HARDENED_PROBE_LOGS;

describe("the probe script", () => {
  it("is valid POSIX shell", () => {
    const r = spawnSync("sh", ["-n", "-c", script], { encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });

  it.each([
    "/proc/self/status",
    "pids.max",
    "/.probe-write",
    "/tmp/.probe-write",
    "'/job'/.probe-write",
    "ping -c 1",
    "mknod",
    "chroot /",
    "ip link add probe0 type dummy",
    "http_get 'http://169.254.169.254/latest/meta-data/'",
    "nc -w 3",
  ])("checks %s", (fragment) => {
    expect(script).toContain(fragment);
  });

  it("quotes the job folder and URL for the shell", () => {
    expect(probeScript({ jobFolder: "/it's", egressUrl: "http://x/" })).toContain(`'/it'\\''s'/.probe-write`);
  });
});

describe("http_get: a real HTTP answer, not just a connect", () => {
  /** Runs the probe's http_get in a POSIX shell with busybox's nc, against a server on loopback. */
  async function httpGet(url: string, env: Record<string, string> = {}): Promise<string> {
    const bin = mkdtempSync(join(tmpdir(), "probe-nc-"));
    symlinkSync("/bin/busybox", join(bin, "nc"));
    const { stdout } = await execFileAsync("sh", ["-c", `${HTTP_GET}\nhttp_get "$1"`, "sh", url], {
      env: { PATH: `${bin}:/usr/bin:/bin`, ...env },
    });
    return stdout.trim();
  }

  let server: Server;
  let port = 0;
  const requests: string[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      requests.push(`${req.method} ${req.url} host=${req.headers.host}`);
      res.writeHead(req.url?.startsWith("http://") ? 203 : 200).end("ok");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => server.close());

  it("prints the status line of a server that answers", async () => {
    expect(await httpGet(`http://127.0.0.1:${port}/latest/meta-data/`)).toBe("HTTP/1.1 200 OK");
    expect(requests.at(-1)).toBe(`GET /latest/meta-data/ host=127.0.0.1:${port}`);
  });

  it("goes through http_proxy with the absolute URL when one is set", async () => {
    const status = await httpGet("http://example.invalid/path", { http_proxy: `http://127.0.0.1:${port}` });
    expect(status).toBe("HTTP/1.1 203 Non-Authoritative Information");
    expect(requests.at(-1)).toBe("GET http://example.invalid/path host=example.invalid");
  });

  it("prints nothing when nothing answers", async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    expect(await httpGet(`http://127.0.0.1:${closedPort}/`)).toBe("");
  });
});

describe("parseProbeOutput", () => {
  it("reads probe lines and ignores everything else", () => {
    expect(parseProbeOutput("noise\nprobe.id=1000:1000\r\n  probe.Seccomp=2  \nprobe.bad key=x\n")).toEqual({
      id: "1000:1000",
      Seccomp: "2",
    });
  });
});

describe("judgeProbe", () => {
  const template = TemplateSchema.parse({ image: "x:1" });

  it("on Kubernetes judges the pod's process limit by the fork count: refused before the template's limit", () => {
    const onPod = (forks: string | undefined) =>
      judgeProbe(
        template,
        parseProbeOutput(
          hardenedLogs.replace(
            "probe.pidsMax=128",
            `probe.pidsMax=max${forks === undefined ? "" : `\nprobe.forks=${forks}`}`,
          ),
        ),
        { podLimit: true },
      ).walls.find((w) => w.wall === "pidsMax");
    expect(onPod("123")?.ok).toBe(true);
    expect(onPod("128")?.ok).toBe(false);
    expect(onPod("144")?.ok).toBe(false);
    expect(onPod(undefined)?.ok).toBeNull();
    expect(onPod("many")?.ok).toBeNull();
  });

  it("passes every wall of the hardened default template", () => {
    const report = judgeProbe(template, parseProbeOutput(hardenedLogs));
    expect(report.passed).toBe(true);
    expect(report.walls.map((w) => [w.wall, w.declared, w.observed, w.ok])).toEqual([
      ["kernel", "the host's (runc)", "the host's (release 6.1.0-28-amd64)", true],
      ["user", "1000:1000", "1000:1000", true],
      ["capEff", "(none)", "(none)", true],
      ["capBnd", "(none)", "(none)", true],
      ["noNewPrivs", "1", "1", true],
      ["seccomp", "2", "2", true],
      ["pidsMax", "128", "128", true],
      ["tmpSize", "65536 KiB or less", "65536 KiB", true],
      ["rootReadOnly", "denied", "denied", true],
      ["tmpWritable", "allowed", "allowed", true],
      ["jobWritable", "allowed", "allowed", true],
      ["mknod", "denied", "denied", true],
      ["chroot", "denied", "denied", true],
      ["ipLinkAdd", "denied", "denied", true],
      ["ping", "denied", "denied", true],
      ["egress", "denied", "denied", true],
    ]);
  });

  it.each([
    ["probe.NoNewPrivs=1", "probe.NoNewPrivs=0", "noNewPrivs"],
    ["probe.Seccomp=2", "probe.Seccomp=0", "seccomp"],
    ["probe.pidsMax=128", "probe.pidsMax=max", "pidsMax"],
    ["probe.tmpSizeKb=65536", "probe.tmpSizeKb=131072", "tmpSize"],
    ["probe.tmpSizeKb=65536", "probe.tmpSizeKb=unknown", "tmpSize"],
    ["probe.rootWrite=denied", "probe.rootWrite=allowed", "rootReadOnly"],
    ["probe.id=1000:1000", "probe.id=0:0", "user"],
    ["probe.CapBnd=0000000000000000", "probe.CapBnd=0000000000001000", "capBnd"],
    ["probe.CapEff=0000000000000000", "probe.CapEff=00000000a80425fb", "capEff"],
    ["probe.mknod=denied", "probe.mknod=allowed", "mknod"],
    ["probe.chroot=denied", "probe.chroot=allowed", "chroot"],
    ["probe.ipLinkAdd=denied", "probe.ipLinkAdd=allowed", "ipLinkAdd"],
    ["probe.egress=denied", "probe.egress=allowed", "egress"],
    ["probe.jobWrite=allowed", "probe.jobWrite=denied", "jobWritable"],
  ])("fails when %s becomes %s (%s broken)", (from, to, wall) => {
    const report = judgeProbe(template, parseProbeOutput(hardenedLogs.replace(from, to)));
    expect(report.passed).toBe(false);
    expect(report.walls.filter((w) => w.ok === false).map((w) => w.wall)).toEqual([wall]);
  });

  it("does not pass a probe that did not finish, and marks what it never reported", () => {
    const report = judgeProbe(template, parseProbeOutput("probe.id=1000:1000"));
    expect(report.passed).toBe(false);
    expect(report.walls.find((w) => w.wall === "seccomp")).toEqual({
      wall: "seccomp",
      declared: "2",
      observed: "(not reported)",
      ok: null,
    });
  });

  it("accepts the seed-six bounding set and refuses NET_ADMIN in it", () => {
    const seedSix = TemplateSchema.parse({ image: "x:1", capDrop: "seed-six" });
    // Docker's defaults minus the seed six: CHOWN DAC_OVERRIDE FOWNER FSETID KILL SETGID SETUID NET_BIND_SERVICE AUDIT_WRITE
    const ok = hardenedLogs.replace("probe.CapBnd=0000000000000000", "probe.CapBnd=00000000200004fb");
    expect(judgeProbe(seedSix, parseProbeOutput(ok)).passed).toBe(true);
    const bad = hardenedLogs.replace("probe.CapBnd=0000000000000000", "probe.CapBnd=00000000200014fb");
    expect(judgeProbe(seedSix, parseProbeOutput(bad)).walls.find((w) => w.wall === "capBnd")?.ok).toBe(false);
  });

  it("reports an unlimited pids.max as not observable when the probe ran in a container @pulumi/docker made", () => {
    const logs = hardenedLogs.replace("probe.pidsMax=128", "probe.pidsMax=max");
    const report = judgeProbe(template, parseProbeOutput(logs), { pidsLimitApplied: false });
    expect(report.passed).toBe(true);
    expect(report.walls.find((w) => w.wall === "pidsMax")).toEqual({
      wall: "pidsMax",
      declared: "128 (set on every task by the launcher; @pulumi/docker cannot express it)",
      observed: "max",
      ok: null,
    });
    // A launched task must show the limit itself.
    expect(judgeProbe(template, parseProbeOutput(logs)).passed).toBe(false);
  });

  it("says which kernel answered, and under gVisor says NoNewPrivs and Seccomp are not observable", () => {
    const gvisor = TemplateSchema.parse({ image: "x:1", runtime: "runsc" });
    const logs = hardenedLogs
      .replace("probe.NoNewPrivs=1\n", "")
      .replace("probe.Seccomp=2", "probe.Seccomp=0")
      .replace("probe.kernel=host", "probe.kernel=gVisor\nprobe.banner=[    0.000000] Starting gVisor...")
      .replace("probe.release=6.1.0-28-amd64", "probe.release=4.4.0");
    const report = judgeProbe(gvisor, parseProbeOutput(logs));
    expect(report.passed).toBe(true);
    expect(report.walls.slice(0, 1)).toEqual([
      {
        wall: "kernel",
        declared: "gVisor (runsc)",
        observed: "gVisor (Starting gVisor..., release 4.4.0)",
        ok: true,
      },
    ]);
    expect(report.walls.filter((w) => w.wall === "noNewPrivs" || w.wall === "seccomp")).toEqual([
      {
        wall: "noNewPrivs",
        declared: "1",
        observed: "not observable under gVisor (no NoNewPrivs line)",
        ok: null,
      },
      { wall: "seccomp", declared: "2", observed: "not observable under gVisor (Seccomp: 0)", ok: null },
    ]);
    // gVisor's cgroup files show no process limit: the limit sits on the sandbox's host cgroup.
    const pids = judgeProbe(gvisor, parseProbeOutput(logs.replace("probe.pidsMax=128", "probe.pidsMax=max")));
    expect(pids.walls.find((w) => w.wall === "pidsMax")).toEqual({
      wall: "pidsMax",
      declared: "128",
      observed:
        "not observable under gVisor (its pids.max shows max; the limit is on the sandbox's host cgroup, which gVisor's own threads share)",
      ok: null,
    });
    // On Kubernetes the pod's cgroup holds it (the node's podPidsLimit); a fork count, when taken, is the evidence.
    const inPod = judgeProbe(
      gvisor,
      parseProbeOutput(logs.replace("probe.pidsMax=128", "probe.pidsMax=max")),
      {
        podLimit: true,
      },
    );
    expect(inPod.walls.find((w) => w.wall === "pidsMax")).toMatchObject({
      declared: "128 (the node's podPidsLimit, on the pod's cgroup)",
      ok: null,
    });
    const counted = judgeProbe(
      gvisor,
      parseProbeOutput(`${logs.replace("probe.pidsMax=128", "probe.pidsMax=max")}\nprobe.forks=40`),
      { podLimit: true },
    );
    expect(counted.walls.find((w) => w.wall === "pidsMax")).toMatchObject({ ok: true });
    // A release that shows NoNewPrivs is judged on it.
    const shown = judgeProbe(gvisor, parseProbeOutput(`${logs}\nprobe.NoNewPrivs=0`));
    expect(shown.walls.find((w) => w.wall === "noNewPrivs")).toEqual({
      wall: "noNewPrivs",
      declared: "1",
      observed: "0",
      ok: false,
    });
    expect(shown.passed).toBe(false);
  });

  it("fails a runsc template that ran under the host's kernel, and judges its walls as the host shows them", () => {
    const gvisor = TemplateSchema.parse({ image: "x:1", runtime: "runsc" });
    const report = judgeProbe(gvisor, parseProbeOutput(hardenedLogs));
    expect(report.passed).toBe(false);
    expect(report.walls.filter((w) => w.ok === false)).toEqual([
      {
        wall: "kernel",
        declared: "gVisor (runsc)",
        observed: "the host's (release 6.1.0-28-amd64)",
        ok: false,
      },
    ]);
    expect(report.walls.find((w) => w.wall === "noNewPrivs")).toEqual({
      wall: "noNewPrivs",
      declared: "1",
      observed: "1",
      ok: true,
    });
  });

  it("reports a runc template's kernel as observed, and judges nothing of it", () => {
    const runc = TemplateSchema.parse({ image: "x:1" });
    expect(judgeProbe(runc, parseProbeOutput(hardenedLogs)).walls[0]).toEqual({
      wall: "kernel",
      declared: "the host's (runc)",
      observed: "the host's (release 6.1.0-28-amd64)",
      ok: true,
    });
  });
});
