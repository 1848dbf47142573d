/**
 * The policy gate of Kubernetes task pods (components/kubernetes/policy-gate.ts), run as the pod runs it: the script
 * in the task's image, against a listener standing in for the cluster's API server, on the real Docker engine with no
 * network but the container's own loopback. The gate lets the task start only once nothing answers there (the pod's
 * default deny holds), waits while something does, and fails the pod when it keeps answering.
 */
import type Dockerode from "dockerode";
import { beforeAll, describe, expect, it } from "vitest";
import { POLICY_GATE_FAILED, policyGateScript } from "../../components/kubernetes/policy-gate";
import { demuxLogs } from "../../runtime/docker/client";
import { requireDocker, TEST_IMAGE } from "../helpers/docker";

let docker: Dockerode;

beforeAll(async () => {
  docker = await requireDocker();
});

/**
 * Runs `before` (e.g. a listener in the background), then the gate with `seconds`, in one container on its own
 * loopback; returns the gate's exit code, what it wrote, and the marks `before` printed.
 */
async function gate(
  before: string,
  seconds: number,
  env: string[] = ["KUBERNETES_SERVICE_HOST=127.0.0.1", "KUBERNETES_SERVICE_PORT=6443"],
): Promise<{ code: number; out: string }> {
  const script = [before, `( ${policyGateScript(seconds)} )`, 'echo "gate=$? ended at $(date +%s)"'].join(
    "\n",
  );
  const c = await docker.createContainer({
    Image: TEST_IMAGE,
    User: "1000:1000",
    Cmd: ["sh", "-c", script],
    Env: env,
    HostConfig: { NetworkMode: "none", CapDrop: ["ALL"], SecurityOpt: ["no-new-privileges:true"] },
  });
  try {
    await c.start();
    await c.wait();
    const logs = demuxLogs((await c.logs({ stdout: true, stderr: true })) as Buffer);
    const out = `${logs.stdout}${logs.stderr}`;
    const code = Number(/gate=(\d+)/.exec(out)?.[1] ?? Number.NaN);
    return { code, out };
  } finally {
    await c.remove({ force: true });
  }
}

/** A listener on 127.0.0.1:6443 that answers every connection, stopped after `seconds` (never when undefined). */
const listener = (seconds?: number) =>
  [
    "mkdir -p /tmp/www && echo api > /tmp/www/index.html",
    "httpd -f -p 127.0.0.1:6443 -h /tmp/www & pid=$!",
    "sleep 1",
    seconds === undefined ? "" : `( sleep ${seconds}; kill $pid; echo "stopped at $(date +%s)" ) &`,
  ].join("\n");

describe("the policy gate", () => {
  it("lets the task start at once when nothing answers (the default deny holds)", async () => {
    const r = await gate("", 10);
    expect(r.code, r.out).toBe(0);
    expect(r.out).not.toContain(POLICY_GATE_FAILED);
  });

  it("waits while the API server answers, and lets the task start once it stops answering", async () => {
    const r = await gate(listener(3), 30);
    expect(r.code, r.out).toBe(0);
    const stopped = Number(/stopped at (\d+)/.exec(r.out)?.[1]);
    const ended = Number(/ended at (\d+)/.exec(r.out)?.[1]);
    // It was still waiting when the listener stopped: it did not pass while something answered.
    expect(Number.isFinite(stopped) && Number.isFinite(ended), r.out).toBe(true);
    expect(ended).toBeGreaterThanOrEqual(stopped);
  });

  it("fails the pod, saying why, when the API server keeps answering (no policy holds)", async () => {
    const r = await gate(listener(), 3);
    expect(r.code, r.out).toBe(1);
    expect(r.out).toContain(`${POLICY_GATE_FAILED} within 3 s`);
  });

  it("has nothing to wait on without the API server's address", async () => {
    const r = await gate(listener(), 3, []);
    expect(r.code, r.out).toBe(0);
  });
});
