import { type ChildProcess, spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import type Dockerode from "dockerode";
import { beforeAll, describe, expect, it } from "vitest";
import { requireDocker } from "../helpers/docker";

const root = join(__dirname, "../..");
let docker: Dockerode;

beforeAll(async () => {
  docker = await requireDocker();
});

/** Runs the front (`cli/main.ts`) as a user would, with the project's Node and tsx. */
function front(args: string[]): {
  child: ChildProcess;
  done: Promise<{ code: number | null; out: string; err: string }>;
} {
  const child = spawn(join(root, "node_modules/.bin/tsx"), [join(root, "cli/main.ts"), ...args], {
    cwd: root,
    env: { ...process.env, PATH: `${join(root, "node_modules/.bin")}:${process.env.PATH ?? ""}` },
  });
  let out = "";
  let err = "";
  child.stdout?.on("data", (d) => {
    out += String(d);
  });
  child.stderr?.on("data", (d) => {
    err += String(d);
  });
  const done = new Promise<{ code: number | null; out: string; err: string }>((resolve) =>
    child.on("exit", (code) => resolve({ code, out, err })),
  );
  return { child, done };
}

const devTasks = (id: string) =>
  docker.listContainers({
    all: true,
    filters: { label: ["sandbox.project=sandbox-dev", `sandbox.task=${id}`] },
  });

describe("the task verbs of the front", () => {
  it("runs a task and prints its output and exit code", async () => {
    const { done } = front(["run", "dev", "default", "--", "sh", "-c", "echo hello from $(id -u)"]);
    const r = await done;
    expect(r.out).toBe("hello from 1000\n");
    const jobDir = /job folder (\/var\/lib\/sandbox-projects\/sandbox-dev\/[a-z0-9-]+)/.exec(r.err)?.[1];
    expect(jobDir).toBeDefined();
    expect(r.code).toBe(0);
    if (jobDir) rmSync(jobDir, { recursive: true, force: true });
  });

  it("removes a running task's container when the launcher is interrupted (SIGTERM)", async () => {
    // Its own task, told apart by its command: other test files may run tasks of the same stack meanwhile.
    const marker = `interrupted-${Math.random().toString(36).slice(2, 10)}`;
    const { child, done } = front(["run", "dev", "default", "--", "sh", "-c", `sleep 60 # ${marker}`]);
    let id = "";
    for (let i = 0; i < 600 && id === ""; i++) {
      const running = await docker.listContainers({
        filters: { label: ["sandbox.project=sandbox-dev", "sandbox.role=task"], status: ["running"] },
      });
      id = running.find((c) => c.Command.includes(marker))?.Labels["sandbox.task"] ?? "";
      if (id === "") await new Promise((r) => setTimeout(r, 100));
    }
    expect(id).not.toBe("");
    child.kill("SIGTERM");
    const r = await done;
    expect(r.code).toBe(143);
    expect(r.err).toContain(`removed 1 task container(s): sandbox-dev-task-${id}`);
    expect(await devTasks(id)).toEqual([]);
    rmSync(`/var/lib/sandbox-projects/sandbox-dev/${id}`, { recursive: true, force: true });
  });

  it("answers probe with every wall held, in JSON", async () => {
    const r = await front(["probe", "dev", "default", "--json"]).done;
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.out) as {
      verb: string;
      ok: boolean;
      exitCode: number;
      templates: { default: { passed: boolean; walls: { wall: string; ok: boolean }[] } };
    };
    expect({ verb: doc.verb, ok: doc.ok, exitCode: doc.exitCode }).toEqual({
      verb: "probe",
      ok: true,
      exitCode: 0,
    });
    expect(doc.templates.default.passed).toBe(true);
    expect(doc.templates.default.walls.map((w) => w.wall)).toContain("pidsMax");
  });

  it("refuses an unknown template with exit code 2", async () => {
    const r = await front(["run", "dev", "nope"]).done;
    expect(r.code).toBe(2);
    expect(r.err).toContain('no template "nope" in this stack; it has: default, seed-six');
  });
});
