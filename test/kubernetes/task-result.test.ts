// What a Kubernetes task's result says when its container never started, read from pod statuses as the node reports
// them (the first is the one the test node gave for a gVisor pod whose process limit was too small for its threads).
import { describe, expect, it } from "vitest";
import { launchSpec, resolveProject } from "../../components/model";
import type { KubeApis } from "../../runtime/kubernetes/api";
import { taskResult } from "../../runtime/kubernetes/task-result";

const project = resolveProject({
  name: "starts",
  backend: "kubernetes",
  budget: { monthlyCapUsd: 100 },
  templates: { plain: { image: "runner:1" }, gvisor: { image: "runner:1", runtime: "runsc" } },
});

// The pod's log is empty; nothing else may be asked (no proxy, no broker, and no Job read for an exit that no kill made).
const apis = {
  core: { readNamespacedPodLog: async () => "" },
  batch: {
    readNamespacedJob: async () => {
      throw new Error("the Job was read");
    },
  },
} as unknown as KubeApis;

const ended = (exitCode: number, reason = "Error") => ({
  terminated: { exitCode, reason, startedAt: "2026-12-06T05:31:10Z", finishedAt: "2026-12-06T05:31:10Z" },
});
const pod = (task: object, holder: object) => ({
  metadata: { name: "starts-x" },
  status: {
    containerStatuses: [
      { name: "results", state: holder },
      { name: "task", state: task },
    ],
  },
});

async function result(template: string, p: object, pidsHits = 0) {
  return taskResult(apis, "starts", launchSpec(project, template, "none"), {
    id: "x",
    jobName: "starts-x",
    pod: p,
    started: Date.now(),
    killedByLauncher: false,
    stoppedByCap: false,
    pidsHits,
    readout: { stderr: "", problem: "the pod's results container was not running" } as never,
    dest: undefined,
  });
}

describe("a task container that never started", () => {
  it("under gVisor, the sandbox gone at once (task and holder both exit 128): says so and names the process limit", async () => {
    const r = await result("gvisor", pod(ended(128), ended(128)), 3);
    expect(r.exitCode).toBe(128);
    expect(r.limits).toEqual(["pids"]);
    expect(r.stderr).toBe(
      "sandbox: the task's container never started (Error, exit 128); under gVisor the pod's process limit (the node's podPidsLimit) also holds gVisor's own threads for the task and its results holder, and the pod reached it: the template declares 128, is the node's limit as large?\n",
    );
  });

  it("on runc, containerd's StartError: its message, and no gVisor advice", async () => {
    const r = await result("plain", pod(ended(128, "StartError"), { running: {} }));
    expect(r.stderr).toMatch(/^sandbox: the task's container never started \(StartError, exit 128\)\n/);
    expect(r.stderr).not.toMatch(/gVisor/);
  });

  it("a task that exits 128 itself, its holder still running, is a plain exit (nothing added)", async () => {
    for (const template of ["plain", "gvisor"]) {
      const r = await result(template, pod(ended(128), { running: {} }));
      expect(r.exitCode).toBe(128);
      expect(r.stderr).toBe(
        "sandbox: the task's stderr could not be read from its pod: the pod's results container was not running\n",
      );
    }
  });
});
