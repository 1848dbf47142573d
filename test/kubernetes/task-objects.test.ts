// What the ledger charges a Kubernetes task: the task container's run on the node, by the kubelet's clock.
import { describe, expect, it } from "vitest";
import { ranSeconds, taskTimes } from "../../runtime/kubernetes/task-objects";

const pod = (state: Record<string, unknown>, name = "task") => ({
  status: { containerStatuses: [{ name, state }] },
});

describe("a task pod's run, for the ledger", () => {
  it("is the task container's start to its end", () => {
    const done = pod({
      terminated: { startedAt: "2026-12-05T10:00:00Z", finishedAt: "2026-12-05T10:00:07Z", exitCode: 0 },
    });
    expect(taskTimes(done)).toEqual({
      startedAt: Date.parse("2026-12-05T10:00:00Z"),
      finishedAt: Date.parse("2026-12-05T10:00:07Z"),
    });
    expect(ranSeconds(done, Date.parse("2026-12-05T11:00:00Z"))).toBe(7);
  });

  it("runs to now while the container runs, and is nothing when it never started", () => {
    const running = pod({ running: { startedAt: "2026-12-05T10:00:00Z" } });
    expect(ranSeconds(running, Date.parse("2026-12-05T10:00:12Z"))).toBe(12);
    expect(ranSeconds(pod({ waiting: { reason: "ContainerCreating" } }), Date.now())).toBe(0);
    expect(ranSeconds(undefined, Date.now())).toBe(0);
    // Another container's times (the policy gate, the seed step) are not the task's.
    expect(
      ranSeconds(pod({ running: { startedAt: "2026-12-05T10:00:00Z" } }, "policy-gate"), Date.now()),
    ).toBe(0);
  });
});
