// The front's stack verbs on a bad day, through the real Pulumi engine and the real Docker engine: the off switches
// with a broken config, `up` after objects were removed behind the stack's back, one message per failure, `--json`
// on every verb, and Ctrl-C in the middle of `up`. Everything runs in a throwaway root (front-root.ts) with a
// project name of its own, removed at the end.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import type Dockerode from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../cli/main";
import { offSwitch, projectLeftovers } from "../../runtime/offSwitch";
import { requireDocker } from "../helpers/docker";
import { type FrontRoot, frontRoot, processesWithMark } from "./front-root";

let docker: Dockerode;
let f: FrontRoot;
const stack = `fr${Math.random().toString(36).slice(2, 6)}`;

beforeAll(async () => {
  docker = await requireDocker();
  f = frontRoot("front");
  f.writeStack(stack);
});

afterAll(async () => {
  if (f !== undefined) {
    await f.run("destroy", stack);
    if (docker) await offSwitch(docker, f.project, { jobRoot: `${f.root}/jobs` });
    f.cleanup();
  }
});

const names = async (kind: "network" | "container") =>
  kind === "network"
    ? (await docker.listNetworks({ filters: { label: [`sandbox.project=${f.project}`] } })).map((n) => n.Name)
    : (await docker.listContainers({ all: true, filters: { label: [`sandbox.project=${f.project}`] } })).map(
        (c) => c.Labels["sandbox.template"],
      );

describe("--json on every stack verb", () => {
  it("writes exactly one JSON document to stdout, for check, preview, up, refresh and destroy", async () => {
    for (const verb of ["check", "preview", "up", "refresh", "destroy"]) {
      const r = await f.run(verb, stack, "--json");
      // One line, one document: nothing else on stdout.
      expect(r.out.endsWith("\n") && r.out.indexOf("\n") === r.out.length - 1).toBe(true);
      const doc = JSON.parse(r.out) as Record<string, unknown>;
      expect(doc).toMatchObject({ verb, stack, ok: true, exitCode: 0 });
      expect(r.code).toBe(0);
      if (verb === "up") {
        expect(doc.project).toBe(f.project);
        expect((doc.walls as Record<string, { passed: boolean }>).default?.passed).toBe(true);
        expect(doc.changes).toEqual({ create: 6 });
      }
      if (verb === "destroy") expect(doc.changes).toEqual({ delete: 6 });
    }
    expect(await projectLeftovers(docker, f.project)).toEqual([]);
  });

  it("check --json writes a bad config's problems to stdout, exit 2", async () => {
    f.writeStack(stack, { maxConcurrentTasks: 9 });
    try {
      const r = await f.run("check", stack, "--json");
      expect(r.code).toBe(2);
      expect(r.err).toBe("");
      const doc = JSON.parse(r.out) as { problems: { key: string }[]; error: { kind: string } };
      expect(doc).toMatchObject({
        verb: "check",
        stack,
        ok: false,
        exitCode: 2,
        error: { kind: "bad-input" },
      });
      expect(doc.problems.map((p) => p.key)).toEqual(["sandbox:budget.maxConcurrentTasks"]);
    } finally {
      f.writeStack(stack);
    }
  });
});

describe("up after objects were removed behind the stack's back", () => {
  it("re-creates them, says what drifted, prints the walls table and the provider warning once", async () => {
    expect((await f.run("up", stack)).code).toBe(0);
    const off = await f.run("off", stack);
    expect(off.code).toBe(0);
    expect(await projectLeftovers(docker, f.project)).toEqual([]);

    const preview = await f.run("preview", stack);
    expect(preview.code).toBe(0);
    expect(preview.out).toContain(`preview of ${stack}: 3 to create`);
    expect(preview.out).toContain(
      `  drift: ${f.project}-net (docker Network) was removed outside the stack; \`up\` re-creates it`,
    );

    const up = await f.run("up", stack);
    expect(up.code).toBe(0);
    const lines = up.out.split("\n");
    expect(lines[0]).toBe(`${stack} is up: 3 created, 3 unchanged`);
    expect(lines.slice(1, 4).sort()).toEqual(
      [
        `  drift: ${f.project}-default-probe (docker Container) was removed outside the stack; re-created`,
        `  drift: ${f.project}-default-probe-job (docker Volume) was removed outside the stack; re-created`,
        `  drift: ${f.project}-net (docker Network) was removed outside the stack; re-created`,
      ].sort(),
    );
    // The same table `./sandbox probe` prints, not the engine's nested outputs.
    expect(lines[4]).toBe("template default: every wall held");
    expect(lines[5]).toMatch(
      /^ {2}ok {3}kernel {8}declared the host's \(runc\); observed the host's \(release .+\)$/,
    );
    expect(lines[6]).toBe("  ok   user          declared 1000:1000; observed 1000:1000");
    expect(up.out).not.toContain("Outputs:");
    expect(await names("network")).toEqual([`${f.project}-net`]);
    expect(await names("container")).toEqual(["default"]);
    expect(up.err.split("using pulumi-resource-docker from $PATH").length - 1).toBe(1);
  });
});

describe("the off switches with a config that no longer passes", () => {
  it("off and destroy run from the state, say the config is invalid, and leave nothing", async () => {
    f.writeStack(stack, { maxConcurrentTasks: 9 });
    try {
      const up = await f.run("up", stack);
      expect(up.code).toBe(2);
      expect(up.err).toContain("sandbox:budget.maxConcurrentTasks = 9");

      const off = await f.run("off", stack);
      expect(off.code).toBe(0);
      expect(off.err).toContain(
        `the config of stack ${stack} is invalid (\`./sandbox check ${stack}\` lists the problems); the off switch runs for project ${f.project}, named by the stack's state`,
      );
      expect(off.out).toContain(
        `off switch for ${f.project}: removed 1 container(s), 1 network(s), 1 volume(s)`,
      );

      const destroy = await f.run("destroy", stack, "--json");
      expect(destroy.code).toBe(0);
      expect(destroy.err).toContain(
        `the config of stack ${stack} is invalid (\`./sandbox check ${stack}\` lists the problems); destroy works from the stack's state alone`,
      );
      expect(JSON.parse(destroy.out)).toMatchObject({ verb: "destroy", ok: true, changes: { delete: 6 } });
      expect(await projectLeftovers(docker, f.project)).toEqual([]);
    } finally {
      f.writeStack(stack);
    }
  });

  it("destroy of a stack never created is a clean no-op with a message", async () => {
    const r = await f.run("destroy", "never-made");
    expect(r.code).toBe(0);
    expect(r.out).toBe("stack never-made was never created here: nothing to destroy\n");
    expect(r.err).toBe("stack never-made has no config file; destroy works from the stack's state alone\n");
  });
});

describe("one failure, one message", () => {
  it("a missing image is named once, with the object and what to do; the engine's detail only with --verbose", async () => {
    const bad = `${stack}img`;
    f.writeStack(bad, { image: "sandbox-busybox:does-not-exist" });
    try {
      const r = await f.run("up", bad);
      expect(r.code).toBe(1);
      const message = 'image "sandbox-busybox:does-not-exist" is not present on the Docker engine';
      expect(r.err.split(message).length - 1).toBe(1);
      expect(r.err).toContain(
        `up of stack ${bad} failed: creating ${f.project}-default-probe (docker Container): ${message}`,
      );
      expect(r.err.split("what to do:").length - 1).toBe(1);
      expect(r.err).toContain("what to do: build the offline images with `bash toolchain/docker.sh`");
      expect(r.err).not.toContain("Command failed with exit code");
      expect(r.err).not.toContain("update failed");
      expect(r.out).toBe("");

      const json = await f.run("up", bad, "--json");
      expect(json.code).toBe(1);
      expect(JSON.parse(json.out)).toMatchObject({
        verb: "up",
        ok: false,
        exitCode: 1,
        error: { kind: "engine", object: `${f.project}-default-probe` },
      });

      const verbose = await f.run("up", bad, "--verbose");
      expect(verbose.err).toContain("Command failed with exit code");
    } finally {
      await f.run("destroy", bad);
    }
  });
});

describe("Ctrl-C during up", () => {
  it("cancels the engine's operation, waits for it, and leaves no process and no lock", async () => {
    const mark = `sig-${Math.random().toString(36).slice(2, 8)}`;
    const child = f.spawn(mark, "up", stack);
    let err = "";
    child.stderr?.on("data", (d: Buffer) => {
      err += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    // Mid-up: the first object of the project exists on the engine.
    for (let i = 0; i < 600 && (await projectLeftovers(docker, f.project)).length === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await projectLeftovers(docker, f.project)).not.toEqual([]);
    child.kill("SIGINT");
    expect(await exited).toBe(130);
    expect(err).toContain(
      `SIGINT: cancelling the engine's up of ${stack}; waiting for the steps it started to finish`,
    );
    expect(err).toContain(`up of stack ${stack} was cancelled (SIGINT)`);
    expect(processesWithMark(mark)).toEqual([]);
    expect(f.locks(stack)).toEqual([]);
    // Nothing to recover: the next up neither removes a lock nor clears pending operations.
    const next = await f.run("up", stack);
    expect(next.code).toBe(0);
    expect(next.err).not.toContain("recovering:");
    expect(await names("container")).toEqual(["default"]);
  }, 180_000);
});

describe("destroy while another run holds the stack", () => {
  it("says who holds it, once, deletes nothing, and finishes once the lock is gone", async () => {
    expect((await f.run("up", stack)).code).toBe(0);
    const dir = join(f.root, ".sandbox", "state", ".pulumi", "locks", "organization", "sandbox", stack);
    mkdirSync(dir, { recursive: true });
    const lock = join(dir, "held-by-a-live-run.json");
    // A run of this machine whose process lives (this test's own): not stale, so nothing recovers it away.
    writeFileSync(
      lock,
      JSON.stringify({
        pid: process.pid,
        username: "other",
        hostname: hostname(),
        timestamp: new Date().toISOString(),
      }),
    );
    try {
      const r = await f.run("destroy", stack);
      expect(r.code).toBe(1);
      expect(r.err).toContain(`destroy of stack ${stack} did not start: another run on this stack`);
      expect(r.err).toContain(`(pid ${process.pid})`);
      expect(r.err.split("what to do:").length - 1).toBe(1);
      expect(r.out).toBe("");
      const json = await f.run("destroy", stack, "--json");
      expect(JSON.parse(json.out)).toMatchObject({
        verb: "destroy",
        ok: false,
        exitCode: 1,
        error: { kind: "locked" },
      });
      expect(await names("container")).toEqual(["default"]);
    } finally {
      rmSync(lock, { force: true });
    }
    const done = await f.run("destroy", stack, "--json");
    expect(done.code).toBe(0);
    expect(JSON.parse(done.out)).toMatchObject({ verb: "destroy", ok: true, changes: { delete: 6 } });
    expect(await projectLeftovers(docker, f.project)).toEqual([]);
  }, 180_000);
});

describe("progress and the plan's steps", () => {
  it("preview --json lists each step with its reason, --diff prints them, and up shows a live line on a terminal", async () => {
    f.writeStack(stack);
    expect((await f.run("up", stack)).code).toBe(0);
    // A second template: its objects are new in the program.
    const file = join(f.root, "stacks", `Pulumi.${stack}.yaml`);
    writeFileSync(
      file,
      // The engine keeps its salt at the end of the file: the template goes in under templates.
      readFileSync(file, "utf8").replace(
        "      timeoutSeconds: 120\n",
        "      timeoutSeconds: 120\n    second:\n      image: sandbox-busybox:1\n      timeoutSeconds: 60\n",
      ),
    );
    try {
      const json = await f.run("preview", stack, "--json");
      expect(json.code, json.out).toBe(0);
      const doc = JSON.parse(json.out) as {
        steps: { op: string; name: string; type: string; reason: string }[];
      };
      const created = doc.steps.filter((s) => s.op === "create").map((s) => s.name);
      expect(created).toEqual(expect.arrayContaining([`${f.project}-second-probe`]));
      for (const s of doc.steps.filter((x) => x.op === "create"))
        expect(s.reason).toBe("new in the program (not in the stack's state)");
      expect(doc.steps.every((s) => s.op !== "same")).toBe(true);

      const diff = await f.run("preview", stack, "--diff");
      expect(diff.code, diff.err).toBe(0);
      expect(diff.out).toContain(
        `  + ${f.project}-second-probe (docker Container): new in the program (not in the stack's state)`,
      );
      const plain = await f.run("preview", stack);
      expect(plain.out).not.toContain("new in the program");
      const wrong = await f.run("up", stack, "--diff");
      expect(wrong.code).toBe(2);
      expect(wrong.err).toContain("--diff is a flag of preview only");

      // On a terminal: a live line names the object being worked on, then gives way to its done line.
      const err: string[] = [];
      const io = {
        out: () => undefined,
        err: (t: string) => err.push(t),
        terminal: { out: false, err: true },
      };
      const up = await main(["up", stack], io, f.root, f.env);
      expect(up, err.join("")).toBe(0);
      const text = err.join("");
      expect(text).toMatch(new RegExp(`\\r\\x1b\\[2K[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] creating ${f.project}-second-probe`));
      expect(text).toContain(`  created ${f.project}-second-probe (docker Container)\n`);
      // Off a terminal, no control characters at all.
      const logged = await f.run("preview", stack);
      expect([logged.err.includes("\u001b"), logged.err.includes("\r")]).toEqual([false, false]);
    } finally {
      f.writeStack(stack);
    }
  });
});

describe("run runs what is deployed", () => {
  it("refuses a template changed or added since the last up, naming the difference, and runs it once deployed", async () => {
    f.writeStack(stack);
    expect((await f.run("up", stack)).code).toBe(0);
    const ran = await f.run("run", stack, "default", "--", "echo", "deployed");
    expect(ran.code, ran.err).toBe(0);
    expect(ran.out).toBe("deployed\n");

    const file = join(f.root, "stacks", `Pulumi.${stack}.yaml`);
    const original = readFileSync(file, "utf8");
    try {
      writeFileSync(
        file,
        original.replace(
          "      timeoutSeconds: 120\n",
          "      timeoutSeconds: 60\n    second:\n      image: sandbox-busybox:1\n      timeoutSeconds: 60\n",
        ),
      );
      const changed = await f.run("run", stack, "default", "--", "echo", "changed");
      expect(changed.code).toBe(2);
      expect(changed.out).toBe("");
      expect(changed.err).toContain(`template "default" differs from what the last \`up\` deployed`);
      expect(changed.err).toContain("  - timeoutSeconds: 120 → 60");
      expect(changed.err).toContain("run `up` first");
      const added = await f.run("run", stack, "second", "--json", "--", "true");
      expect(added.code).toBe(2);
      expect(JSON.parse(added.out)).toMatchObject({
        ok: false,
        error: {
          kind: "not-deployed",
          message: expect.stringContaining(
            'template "second" is in the config but was not deployed (the last `up` deployed: default)',
          ),
        },
      });
      // No task container was made for either.
      const tasks = await docker.listContainers({
        all: true,
        filters: { label: [`sandbox.project=${f.project}`, "sandbox.task"] },
      });
      expect(tasks).toEqual([]);

      expect((await f.run("up", stack)).code).toBe(0);
      const now = await f.run("run", stack, "second", "--", "echo", "now deployed");
      expect(now.code, now.err).toBe(0);
      expect(now.out).toBe("now deployed\n");
    } finally {
      writeFileSync(file, original);
      expect((await f.run("up", stack)).code).toBe(0);
    }
  });
});
