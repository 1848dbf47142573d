import { describe, expect, it } from "vitest";
import { TemplateSchema, templateCommand, templateDrops } from "../../components/model";

describe("the default template", () => {
  it("is the hardened one when only an image is given", () => {
    expect(TemplateSchema.parse({ image: "sandbox-busybox:1" })).toEqual({
      image: "sandbox-busybox:1",
      broker: [],
      jobFolder: { containerPath: "/job" },
      resources: { vcpu: 1, memoryMb: 512, pids: 128, tmpfsMb: 64, diskMb: 1024 },
      timeoutSeconds: 600,
      user: "1000:1000",
      capDrop: "all",
      egress: { mode: "none", allow: [] },
      runtime: "runc",
      env: {},
    });
  });

  it("runs the job folder's script, or the template's command", () => {
    expect(templateCommand(TemplateSchema.parse({ image: "x:1" }))).toEqual(["sh", "/job/run.sh"]);
    expect(
      templateCommand(TemplateSchema.parse({ image: "x:1", jobFolder: { containerPath: "/work" } })),
    ).toEqual(["sh", "/work/run.sh"]);
    expect(
      templateCommand(TemplateSchema.parse({ image: "x:1", command: ["python3", "-c", "print(1)"] })),
    ).toEqual(["python3", "-c", "print(1)"]);
  });

  it("drops ALL and runs as 1000:1000", () => {
    const t = TemplateSchema.parse({ image: "x:1" });
    expect(templateDrops(t)).toEqual(["ALL"]);
    expect(t.user).toBe("1000:1000");
  });

  it("takes each loosening only as an explicit option", () => {
    const t = TemplateSchema.parse({
      image: "x:1",
      capDrop: "seed-six",
      egress: { mode: "proxy", allow: ["PyPI.org", "*.github.com:8443"] },
      runtime: "runsc",
      user: "2000:3000",
      env: { LANG: "C.UTF-8", TOKENIZERS_PARALLELISM: "false" },
    });
    expect(templateDrops(t)).toEqual(["NET_RAW", "MKNOD", "SYS_CHROOT", "SETFCAP", "SETPCAP", "NET_ADMIN"]);
    expect(t.egress).toEqual({ mode: "proxy", allow: ["pypi.org", "*.github.com:8443"] });
    expect(t.runtime).toBe("runsc");
    expect(t.user).toBe("2000:3000");
  });
});

describe("template refusals", () => {
  const refusal = (input: Record<string, unknown>) => {
    const r = TemplateSchema.safeParse({ image: "x:1", ...input });
    expect(r.success).toBe(false);
    return r.error?.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
  };

  it.each([
    [
      { image: "Not An Image" },
      "image: image must be an image reference such as sandbox-busybox:1 (lower case, no spaces)",
    ],
    [{ command: [] }, "command: command must have at least one element"],
    [{ command: "sh -c x" }, "command: command must be a list of strings such as [sh, /job/run.sh]"],
    [
      { resources: { memoryMb: "lots" } },
      "resources.memoryMb: memoryMb (megabytes) must be a whole number between 16 and 262144",
    ],
    [
      { resources: { memoryMb: 8 } },
      "resources.memoryMb: memoryMb (megabytes) must be a whole number between 16 and 262144",
    ],
    [{ resources: { vcpu: 0 } }, "resources.vcpu: vcpu must be a number of vCPUs between 0.01 and 64"],
    [{ resources: { pids: 0 } }, "resources.pids: pids must be a whole number between 8 and 32768"],
    [
      { resources: { tmpfsMb: 600 } },
      "resources.tmpfsMb: tmpfsMb must not exceed memoryMb (512): /tmp is memory",
    ],
    [
      { resources: { memoryMB: 512 } },
      "resources: unknown key; allowed keys: vcpu, memoryMb, pids, tmpfsMb, diskMb",
    ],
    [{ timeoutSeconds: 0 }, "timeoutSeconds: timeoutSeconds must be a whole number between 1 and 86400"],
    [{ timeoutSeconds: 90000 }, "timeoutSeconds: timeoutSeconds must be a whole number between 1 and 86400"],
    [
      { user: "0:0" },
      'user: root is not allowed; user must be "uid:gid" with numbers above 0, such as "1000:1000"',
    ],
    [
      { user: "1000:0" },
      'user: root is not allowed; user must be "uid:gid" with numbers above 0, such as "1000:1000"',
    ],
    [{ user: "root" }, 'user: user must be "uid:gid" with numbers above 0, such as "1000:1000"'],
    [{ user: "1000" }, 'user: user must be "uid:gid" with numbers above 0, such as "1000:1000"'],
    [
      { capDrop: ["NET_RAW"] },
      'capDrop: drop list [NET_RAW] leaves NET_ADMIN; allowed: "all", "seed-six", or a list that contains NET_ADMIN or ALL',
    ],
    [{ runtime: "docker" }, 'runtime: runtime must be "runc", "runsc" or "kata"'],
    [{ egress: { mode: "open" } }, 'egress.mode: egress mode must be "none" or "proxy"'],
    [
      { egress: { mode: "proxy" } },
      'egress.allow: egress mode "proxy" needs at least one allowed host; use mode "none" for no egress',
    ],
    [
      { egress: { allow: ["pypi.org"] } },
      'egress.allow: hosts are allowed only with egress mode "proxy"; with mode "none" the task has no network',
    ],
    [
      { egress: { mode: "proxy", allow: ["169.254.169.254"] } },
      "egress.allow.0: an IP address is not allowed; allowed: host names such as pypi.org or *.github.com",
    ],
    [
      { egress: { mode: "proxy", allow: ["[fd00:ec2::254]"] } },
      "egress.allow.0: an IP address is not allowed; allowed: host names such as pypi.org or *.github.com",
    ],
    [
      { egress: { mode: "proxy", allow: ["localhost"] } },
      "egress.allow.0: not a host name; allowed: pypi.org, *.github.com, or either with :port (1-65535)",
    ],
    [
      { egress: { mode: "proxy", allow: ["pypi.org:70000"] } },
      "egress.allow.0: not a host name; allowed: pypi.org, *.github.com, or either with :port (1-65535)",
    ],
    [
      { jobFolder: { containerPath: "job" } },
      "jobFolder.containerPath: must be an absolute path such as /job",
    ],
    [
      { jobFolder: { containerPath: "/job/../etc" } },
      "jobFolder.containerPath: must not contain .. segments",
    ],
    [
      { jobFolder: { containerPath: "/tmp/" } },
      "jobFolder.containerPath: must not be a system folder (/, /bin, /sbin, /lib, /lib64, /usr, /etc, /proc, /sys, /dev, /boot, /run, /var/run, /root, /tmp)",
    ],
    [
      { env: { HTTPS_PROXY: "http://elsewhere:3128" } },
      "env.HTTPS_PROXY: the proxy variables are set by the toolkit from the egress setting; remove this variable",
    ],
    [
      { env: { "1BAD": "x" } },
      "env.1BAD: not a valid variable name; allowed: letters, digits and _, not starting with a digit",
    ],
    [
      { runtime: "runsc", resources: { pids: 32 } },
      "resources.pids: under runtime runsc the process limit also counts gVisor's own threads (about 30): pids must be at least 64",
    ],
    [
      { privileged: true },
      ": unknown key; allowed keys: image, command, jobFolder, resources, timeoutSeconds, user, capDrop, egress, runtime, env, pool, broker",
    ],
  ])("%j", (input, message) => {
    expect(refusal(input)).toEqual([message]);
  });

  it("refuses a credential in env without printing it", () => {
    const issues = refusal({ env: { OPENAI_API_KEY: "sk-proj-abcdefghijklmnopqrstuvwxyz0123" } });
    expect(issues).toEqual([
      'env.OPENAI_API_KEY: refused because its name contains "KEY", which says it holds a credential; secrets never go into a task\'s environment (the value is not shown)',
    ]);
    expect(issues?.join()).not.toContain("abcdefghij");
  });
});
