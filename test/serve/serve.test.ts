// The launch service (`sandbox serve`) on the real engine, in a process of its own (signals are per process), with a
// stack of its own: it launches real tasks of the offline image and streams their output, refuses bad and hostile
// requests with JSON errors, knows agents by their keys, and stops cleanly on SIGTERM. `run` goes through it while
// it answers, and launches directly otherwise.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { connect } from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { serveSocketPath } from "../../cli/serve-run";
import { projectLeftovers } from "../../runtime/offSwitch";
import { SandboxClient, SandboxConnectionError, SandboxServiceError } from "../../runtime/serve/client";
import { frontStackOnEngine, oneTemplate } from "../helpers/front-stack";

const repo = join(__dirname, "../..");
const stack = frontStackOnEngine("sv", "sv", [
  ...oneTemplate({
    timeoutSeconds: 300,
    budget: ["    maxConcurrentTasks: 3"],
    more: ["  sandbox:agents:", "    ci: {}", "    broke:", "      monthlyCapUsd: 0"],
  }),
]);
const { name, root, jobRoot } = stack;
const socket = serveSocketPath(root, "sv");

/** The service, started as `sandbox serve` is: the front's `main` in a Node process of its own. */
interface Service {
  readonly child: ChildProcess;
  readonly exit: Promise<number | null>;
  /** Everything it wrote on stderr so far. */
  err(): string;
  /** Everything it wrote on stdout so far. */
  out(): string;
  /** Its loopback TCP address, when it listens there. */
  readonly url?: string;
}

async function startService(...args: string[]): Promise<Service> {
  const front = join(root, "front.ts");
  writeFileSync(
    front,
    `import { main } from ${JSON.stringify(join(repo, "cli/main.ts"))};\n` +
      "main(process.argv.slice(2), { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) }, " +
      `${JSON.stringify(root)}).then((c) => { process.exitCode = c; });\n`,
  );
  // Node itself with tsx's loader: one process, which the signals reach directly.
  const child = spawn(process.execPath, ["--import", "tsx", front, "serve", "sv", ...args], { cwd: repo });
  let err = "";
  let out = "";
  child.stderr?.on("data", (d) => {
    err += String(d);
  });
  child.stdout?.on("data", (d) => {
    out += String(d);
  });
  const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const up = () => / answers on |"event":"listening"/.test(err + out);
  for (let i = 0; i < 1200 && !up() && child.exitCode === null; i++)
    await new Promise((r) => setTimeout(r, 100));
  if (!up()) throw new Error(`the service did not start:\n${err}`);
  const url = /(http:\/\/127\.0\.0\.1:\d+)/.exec(err)?.[1];
  return { child, exit, err: () => err, out: () => out, ...(url === undefined ? {} : { url }) };
}

/** The task folders in the job root (not the markers, disks or the ledger's witness). */
const jobFolders = () => (existsSync(jobRoot) ? readdirSync(jobRoot).filter((e) => !e.startsWith(".")) : []);

/** Lets the running task that waits in its job folder (it holds `waiting`) go on: puts `go` beside it. */
function letGo(): void {
  const id = jobFolders().find((f) => existsSync(join(jobRoot, f, "waiting")));
  if (id === undefined) throw new Error("no task is waiting");
  writeFileSync(join(jobRoot, id, "go"), "", { mode: 0o644 });
}

/** A shell line that waits until the test lets it go (after `touch waiting`). */
const WAIT = "while [ ! -f go ]; do sleep 0.1; done; rm waiting";

/**
 * One raw request on the socket: the status and the body as text. Written on a plain connection whose write errors
 * are ignored: the service may answer a body it refuses before it is all sent, and close.
 */
function raw(
  body: Buffer | string,
  headers: Record<string, string> = { "content-type": "application/json" },
): Promise<{ status: number; text: string }> {
  return new Promise((resolve) => {
    const payload = Buffer.from(body);
    const head = Object.entries({ ...headers, "content-length": String(payload.length), connection: "close" })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join("");
    const conn = connect(socket);
    const got: Buffer[] = [];
    conn.on("data", (d) => got.push(d));
    conn.on("error", () => undefined);
    conn.on("close", () => {
      const answer = Buffer.concat(got).toString("utf8");
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);
      resolve({ status, text: answer.slice(answer.indexOf("\r\n\r\n") + 4) });
    });
    conn.write(`POST /v1/runs HTTP/1.1\r\nhost: localhost\r\n${head}\r\n`);
    conn.end(payload);
  });
}

/** Waits (a bounded while) until the service's log says `what`. */
async function logged(service: Service, what: RegExp): Promise<string> {
  for (let i = 0; i < 300 && !what.test(service.err()); i++) await new Promise((r) => setTimeout(r, 100));
  return service.err();
}

/** What a launch refused with: its status and the service's JSON error. */
async function refusal(
  p: Promise<unknown>,
): Promise<{ status: number; error: SandboxServiceError["error"] }> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  if (!(e instanceof SandboxServiceError)) throw new Error(`expected a refusal, got ${String(e)}`);
  return { status: e.status, error: e.error };
}

describe("sandbox serve", () => {
  let service!: Service;
  const operator = new SandboxClient({ socket });
  // A service a failed test left running is stopped now (SIGKILL: its tasks go with the stack's off switch).
  afterAll(() => {
    if (service !== undefined && service.child.exitCode === null) service.child.kill("SIGKILL");
  });

  it("refuses to listen anywhere but loopback, before anything starts", async () => {
    for (const address of ["0.0.0.0:7070", "10.1.2.3:80", "[::]:80", "example.com:80", "127.0.0.1"]) {
      const r = await stack.front("serve", "sv", "--listen", address);
      expect({ address, code: r.code }).toEqual({ address, code: 2 });
      expect(r.err).toContain(`--listen ${JSON.stringify(address)}`);
      expect(r.err).toMatch(/allowed: a loopback address and a port/);
    }
    expect(existsSync(socket)).toBe(false);
  });

  it("starts on a socket only its owner can use, and answers its health there", async () => {
    service = await startService("--listen", "127.0.0.1:0", "--pool", "1");
    const st = statSync(socket);
    expect(st.isSocket()).toBe(true);
    expect(st.mode & 0o777).toBe(0o600);
    expect(await operator.health()).toMatchObject({ ok: true, stack: "sv", project: name, pool: 1 });
  }, 180_000);

  it("launches a real task, streams its output as it is written, and returns what it left", async () => {
    const seen: string[] = [];
    const r = await operator.run({
      template: "default",
      // The task goes on only once the test has seen its first line and put /job/go there.
      command: ["sh", "-c", `touch waiting; echo one; ${WAIT}; echo two > out.txt; cat in.txt; echo bye >&2`],
      files: { "in.txt": "input\n" },
      onStdout: (t) => {
        seen.push(t);
        if (t.startsWith("one")) letGo();
      },
    });
    expect(seen[0]).toBe("one\n");
    expect(r).toMatchObject({
      exitCode: 0,
      reason: "exit",
      stdout: "one\ninput\n",
      stderr: "bye\n",
      agent: null,
    });
    // in.txt came back unchanged: not returned.
    expect(r.results).toEqual({ "out.txt": "two\n", go: "" });
    expect(r.chargeUsd).toBeGreaterThan(0);
    expect(jobFolders()).not.toContain(r.id);
    const line = new RegExp(`200 run ${r.id} template=default agent=- exit=0 reason=exit`);
    expect(await logged(service, line)).toMatch(line);
  }, 120_000);

  it("refuses a bad request with a 400 naming the field, the value and what is allowed", async () => {
    expect(await refusal(operator.run({ template: "nope" }))).toEqual({
      status: 400,
      error: expect.objectContaining({
        kind: "bad-input",
        field: "template",
        value: '"nope"',
        allowed: "one of the stack's templates: default",
      }),
    });
    const bad = await refusal(operator.run({ template: "default", command: "ls" as unknown as string[] }));
    expect(bad.error).toMatchObject({ field: "command", value: '"ls"' });
    const unknown = await raw(JSON.stringify({ template: "default", image: "alpine" }));
    expect(unknown.status).toBe(400);
    expect(JSON.parse(unknown.text).error).toMatchObject({
      field: "image",
      allowed: expect.stringContaining("template, command"),
    });
  });

  it("answers hostile bodies with a 4xx, never a crash or a hang", async () => {
    const deep = `{"template":"default","command":${"[".repeat(200_000)}${"]".repeat(200_000)}}`;
    const cases: [string, Buffer | string, number][] = [
      ["binary", Buffer.from([0xff, 0xfe, 0x00, 0x81]), 400],
      ["not JSON", "{template:", 400],
      ["deep JSON", deep, 400],
      ["a list", "[1,2]", 400],
      ["huge", Buffer.alloc(17 * 1024 * 1024, 0x20), 413],
    ];
    for (const [what, body, status] of cases) {
      const r = await raw(body);
      expect({ what, status: r.status }).toEqual({ what, status });
      expect(JSON.parse(r.text).error.message, what).toEqual(expect.any(String));
    }
    expect((await raw("{}", { "content-type": "text/plain" })).status).toBe(400);
    expect((await operator.health()).ok).toBe(true);
  });

  it("answers 401 to an unknown key, and knows an agent by its own", async () => {
    const stranger = new SandboxClient({ socket, token: "sbx_agent_not-a-key" });
    expect(await refusal(stranger.run({ template: "default", command: ["true"] }))).toEqual({
      status: 401,
      error: expect.objectContaining({ kind: "unauthorized" }),
    });
    const key = (await stack.front("agent-key", "sv", "ci")).out.trim();
    const url = service.url ?? "";
    // Over TCP a launch without a key is refused; with the agent's, it is the agent's.
    const noKey = await new Promise<number>((resolve, reject) => {
      const req = request(
        `${url}/v1/runs`,
        { method: "POST", headers: { "content-type": "application/json" } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on("error", reject);
      req.end(JSON.stringify({ template: "default", command: ["true"] }));
    });
    expect(noKey).toBe(401);
    const ci = await new SandboxClient({ url, token: key }).run({
      template: "default",
      command: ["echo", "hi"],
    });
    expect(ci).toMatchObject({ exitCode: 0, stdout: "hi\n", agent: "ci" });
    expect(
      await refusal(new SandboxClient({ url, token: key }).run({ template: "default", agent: "broke" })),
    ).toEqual({
      status: 403,
      error: expect.objectContaining({ kind: "refused", field: "agent" }),
    });
  }, 60_000);

  it("gives a launch the ledger refuses the ledger's reason", async () => {
    const key = (await stack.front("agent-key", "sv", "broke")).out.trim();
    const r = await refusal(
      new SandboxClient({ socket, token: key }).run({ template: "default", command: ["true"] }),
    );
    expect(r.status).toBe(403);
    expect(r.error).toMatchObject({ kind: "refused", reason: "agent" });
    expect(r.error.message).toMatch(/agent "broke": month-to-date spend .* > its cap \$0/);
  });

  it("stops the task of a client that went away", async () => {
    const abort = new AbortController();
    const gone = operator.run({
      template: "default",
      command: ["sh", "-c", "echo started; sleep 250"],
      signal: abort.signal,
      onStdout: () => abort.abort(),
    });
    await expect(gone).rejects.toBeInstanceOf(SandboxConnectionError);
    const docker = stack.docker();
    let running = 1;
    for (let i = 0; i < 600 && running > 0; i++) {
      // Tasks only: the pool's members wait started too.
      running = (
        await docker.listContainers({ filters: { label: [`sandbox.project=${name}`], status: ["running"] } })
      ).filter((c) => !(c.Names[0] ?? "").startsWith(`/${name}-pool-`)).length;
      if (running > 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(running).toBe(0);
    expect(await logged(service, /the client went away/)).toMatch(
      /exit=137 reason=exit \d+ ms charged \$[0-9.]+ \(the client went away: stopped\)/,
    );
  }, 120_000);

  it("takes `run` while it answers (--verbose says so)", async () => {
    const before = (service.err().match(/ 200 run /g) ?? []).length;
    const r = await stack.front(
      "run",
      "sv",
      "default",
      "--verbose",
      "--",
      "sh",
      "-c",
      "echo through; exit 3",
    );
    expect(r.out).toBe("through\n");
    expect(r.code).toBe(3);
    expect(r.err).toContain(`run: through the launch service at ${socket}`);
    expect(r.err).toMatch(/task [a-z0-9-]+: exit 3; job folder .* removed; charged \$/);
    const id = /task ([a-z0-9-]+): exit 3/.exec(r.err)?.[1] ?? "";
    expect(await logged(service, new RegExp(`200 run ${id} `))).toMatch(
      new RegExp(`200 run ${id} template=default agent=- exit=3`),
    );
    expect((service.err().match(/ 200 run /g) ?? []).length).toBe(before + 1);
  }, 60_000);

  it("on SIGTERM lets the task in flight finish, removes its socket, its pool and every container", async () => {
    // A launch of the template's own command warms the pool: a member waits on the engine for the next one.
    const pooled = await operator.run({ template: "default", files: { "run.sh": "echo pooled\n" } });
    expect(pooled.stdout).toBe("pooled\n");
    // Its output is in hand before the service has closed it (charged, logged, its container removed): on a loaded
    // machine that can come after the signal below, and it would be a second launch in flight. The service's own
    // count says when it is closed.
    await logged(service, new RegExp(`200 run ${pooled.id} `));
    for (let i = 0; i < 600 && (await operator.health()).running > 0; i++)
      await new Promise((r) => setTimeout(r, 100));
    expect((await operator.health()).running).toBe(0);
    let members: string[] = [];
    for (let i = 0; i < 600 && members.length === 0; i++) {
      members = await projectLeftovers(stack.docker(), name);
      if (members.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(members.length).toBeGreaterThan(0);
    let signalled = false;
    const inFlight = operator.run({
      template: "default",
      command: ["sh", "-c", `touch waiting; echo ready; ${WAIT}; echo done`],
      onStdout: (t) => {
        if (!t.startsWith("ready")) return;
        signalled = true;
        service.child.kill("SIGTERM");
      },
    });
    for (let i = 0; i < 600 && (!signalled || existsSync(socket)); i++)
      await new Promise((r) => setTimeout(r, 100));
    // The socket is gone while the task still runs: no new launch, the claimed one goes on.
    expect(existsSync(socket)).toBe(false);
    letGo();
    expect(await inFlight).toMatchObject({ exitCode: 0, stdout: "ready\ndone\n" });
    expect(await service.exit).toBe(0);
    expect(service.err()).toMatch(/SIGTERM: stopping; no new launches; waiting for 1 launch/);
    expect(await projectLeftovers(stack.docker(), name)).toEqual([]);
  }, 120_000);

  it("on a second signal stops the running tasks at once; --json logs one document a launch", async () => {
    service = await startService("--json");
    expect(JSON.parse(service.out().split("\n")[0] ?? "")).toMatchObject({
      event: "listening",
      stack: "sv",
      pool: null,
    });
    let signals = 0;
    const stopped = operator.run({
      template: "default",
      command: ["sh", "-c", "echo sleeping; sleep 250"],
      onStdout: () => {
        signals = 1;
        service.child.kill("SIGTERM");
      },
    });
    for (let i = 0; i < 600 && (signals === 0 || !/waiting for 1 launch/.test(service.err())); i++)
      await new Promise((r) => setTimeout(r, 100));
    service.child.kill("SIGTERM");
    expect(await stopped).toMatchObject({ reason: "off", removed: true, stdout: "sleeping\n" });
    expect(await service.exit).toBe(0);
    expect(service.err()).toContain("SIGTERM again: stopping the running tasks now");
    const logged = service
      .out()
      .trim()
      .split("\n")
      .slice(1)
      .map((l) => JSON.parse(l));
    expect(logged).toEqual([expect.objectContaining({ status: 200, template: "default", reason: "off" })]);
    expect(await projectLeftovers(stack.docker(), name)).toEqual([]);
  }, 120_000);

  it("leaves `run` to launch directly when no service answers (--verbose says so)", async () => {
    const r = await stack.front("run", "sv", "default", "--verbose", "--", "echo", "direct");
    expect(r.out).toBe("direct\n");
    expect(r.code).toBe(0);
    expect(r.err).toContain(
      `run: launching directly: no launch service answers for stack sv (no socket at ${socket})`,
    );
    expect(r.err).toMatch(/\[start\] task /);
  }, 60_000);
});
