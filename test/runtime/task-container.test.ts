/**
 * The task-container recipe (runtime/docker/taskContainer.ts) that the launcher sends, its preflight judges and
 * `scan` judges for a launch spec. No Docker engine: the body is compared with the Engine API body the launcher has
 * always sent, key order included.
 */
import { describe, expect, it } from "vitest";
import { launchSpec, resolveProject } from "../../components/model";
import { taskContainer } from "../../runtime/docker/taskContainer";
import { policyPreflight } from "../../runtime/preflight";

const project = resolveProject({
  name: "gold",
  budget: { monthlyCapUsd: 100 },
  templates: {
    six: {
      image: "runner:1",
      capDrop: "seed-six",
      runtime: "runsc",
      user: "2000:3000",
      resources: { vcpu: 0.5, memoryMb: 256, pids: 64, tmpfsMb: 32 },
      env: { A: "1", B: "two" },
    },
    web: { image: "runner:1", egress: { mode: "proxy", allow: ["pypi.org"] } },
  },
});
const six = launchSpec(project, "six", "gold-net");
const web = launchSpec(project, "web", "gold-net");

/** The body the launcher sent for task `x1` of `six` with a command of its own, before the recipe was shared. */
const SIX_X1 = {
  Image: "runner:1",
  Cmd: ["timeout", "-s", "KILL", "600", "python", "-c", "print(1)"],
  User: "2000:3000",
  Env: ["A=1", "B=two"],
  WorkingDir: "/job",
  Labels: {
    "sandbox.managed-by": "sandbox-projects",
    "sandbox.project": "gold",
    "sandbox.role": "task",
    "sandbox.spec-hash": "0af961fff2eb47ec",
    "sandbox.task": "x1",
    "sandbox.template": "six",
  },
  ExposedPorts: {},
  Tty: false,
  OpenStdin: false,
  HostConfig: {
    CapAdd: [],
    CapDrop: ["NET_RAW", "MKNOD", "SYS_CHROOT", "SETFCAP", "SETPCAP", "NET_ADMIN"],
    SecurityOpt: ["no-new-privileges:true"],
    Privileged: false,
    ReadonlyRootfs: true,
    Tmpfs: { "/tmp": "rw,noexec,nosuid,nodev,size=32m,mode=1777" },
    NetworkMode: "none",
    IpcMode: "private",
    PublishAllPorts: false,
    RestartPolicy: { Name: "no" },
    LogConfig: { Type: "json-file", Config: { "max-size": "8m", "max-file": "2" } },
    Mounts: [{ Type: "bind", Source: "/var/lib/sandbox-projects/gold/x1", Target: "/job", ReadOnly: false }],
    Binds: [],
    PortBindings: {},
    Devices: [],
    Runtime: "runsc",
    Init: true,
    Memory: 268435456,
    MemorySwap: 268435456,
    NanoCpus: 500000000,
    PidsLimit: 64,
  },
  name: "gold-task-x1",
};

describe("a task's container", () => {
  it("is the body the launcher has always sent, byte for byte", () => {
    const task = taskContainer(six, "x1", { command: ["python", "-c", "print(1)"] });
    expect(JSON.stringify(task.body)).toBe(JSON.stringify(SIX_X1));
    expect(task).toMatchObject({ name: "gold-task-x1", jobDir: "/var/lib/sandbox-projects/gold/x1" });
    expect(task.network).toBeUndefined();
  });

  it("runs the template's command when the task names none", () => {
    expect(taskContainer(six, "x1").body.Cmd).toEqual(six.commandWithDeadline);
  });

  it("in proxy mode joins the task's own network, named after the task", () => {
    const task = taskContainer(web, "abc");
    expect(task.network).toBe("gold-task-abc-net");
    expect(task.body.HostConfig?.NetworkMode).toBe("gold-task-abc-net");
  });

  it("mounts its job folder under the host root given, as scan gives one for a spec that names none", () => {
    const task = taskContainer(six, "task", { hostRoot: "/" });
    expect(task.jobDir).toBe("/task");
    expect(task.body.HostConfig?.Mounts?.[0]?.Source).toBe("/task");
  });

  it("passes the preflight, which refuses the same body without its process cap", () => {
    const preflight = policyPreflight();
    const { body } = taskContainer(six, "x1");
    expect(preflight(body, six)).toEqual([]);
    const uncapped = taskContainer(
      { ...six, resources: { ...six.resources, pids: undefined as never } },
      "x1",
    );
    expect(uncapped.body.HostConfig?.PidsLimit).toBeUndefined();
    expect(preflight(uncapped.body, six).join("\n")).toMatch(/^sandbox-require-resource-limits: /m);
  });
});
