import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { EXIT, main } from "../../cli/main";

const repo = join(__dirname, "../..");
let root: string;
let env: NodeJS.ProcessEnv;

/**
 * A copy of the project's stack configs in a temp root, and an environment with no Pulumi anywhere. A stack verb asks
 * the Docker engine first: the verbs that reach it are tested with one (test/runtime/engine-host.test.ts).
 */
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "sandbox-cli-"));
  mkdirSync(join(root, "stacks"));
  cpSync(join(repo, "stacks", "Pulumi.dev.yaml"), join(root, "stacks", "Pulumi.dev.yaml"));
  const empty = mkdtempSync(join(tmpdir(), "sandbox-empty-"));
  env = { PATH: empty, XDG_CACHE_HOME: empty, PULUMI_HOME: empty };
});

async function run(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t) }, root, env);
  return { code, out: out.join(""), err: err.join("") };
}

describe("./sandbox check", () => {
  it("prints the plan of the dev stack and deploys nothing", async () => {
    const r = await run("check", "dev");
    expect(r.code).toBe(EXIT.ok);
    expect(r.out).toContain("stack dev: project sandbox-dev on docker");
    expect(r.out).toContain(
      "budget: 2 tasks × (1 vCPU × $0.004 + 0.5 GB × $0.002) × 730 h = $7.30 ≤ cap $10.00",
    );
    expect(r.out).toContain(
      "template default: sandbox-busybox:1, user 1000:1000, drop ALL, 1 vCPU, 512 MB, 128 pids, /tmp 64 MB, 600 s, egress none, runtime runc",
    );
  });

  it("answers in JSON with --json", async () => {
    const r = await run("check", "dev", "--json");
    expect(JSON.parse(r.out)).toMatchObject({ ok: true, project: "sandbox-dev", budget: { concurrency: 2 } });
  });

  it("refuses a malformed config with one message and exit code 2", async () => {
    const file = join(root, "stacks", "Pulumi.dev.yaml");
    writeFileSync(file, readFileSync(file, "utf8").replace("memoryMb: 512", "memoryMb: lots"));
    const r = await run("up", "dev");
    expect(r.code).toBe(EXIT.badInput);
    expect(r.err).toBe(
      'invalid sandbox project config:\n  - sandbox:templates.default.resources.memoryMb = "lots": memoryMb (megabytes) must be a whole number between 16 and 262144\nNothing was deployed.\n',
    );
    const json = await run("check", "dev", "--json");
    expect(JSON.parse(json.out)).toMatchObject({
      verb: "check",
      exitCode: 2,
      ok: false,
      problems: [
        {
          key: "sandbox:templates.default.resources.memoryMb",
          value: '"lots"',
          message: "memoryMb (megabytes) must be a whole number between 16 and 262144",
        },
      ],
    });
  });

  it("names a stack that has no config file", async () => {
    const r = await run("check", "staging");
    expect(r.code).toBe(EXIT.badInput);
    expect(r.err).toBe(
      "invalid stack:\n  - stacks/Pulumi.staging.yaml: no such stack config file; create it (see stacks/Pulumi.dev.yaml)\nNothing was deployed.\n",
    );
  });

  it("refuses a stack name that could escape the stacks folder", async () => {
    const r = await run("check", "../etc/passwd");
    expect(r.code).toBe(EXIT.badInput);
    expect(r.err).toContain('stack = "../etc/passwd": a stack name uses letters, digits, _, . and - only');
  });
});

describe("usage", () => {
  it("prints help", async () => {
    const r = await run("help");
    expect(r.code).toBe(EXIT.ok);
    expect(r.out).toContain("usage: sandbox <verb> [stack] [--json]");
  });

  it("refuses an unknown verb with exit code 2, naming the nearest", async () => {
    const r = await run("launch", "dev");
    expect(r.code).toBe(EXIT.badInput);
    expect(r.err).toBe('unknown command "launch" (`sandbox help` lists every verb)\n');
    expect((await run("destory", "dev")).err).toBe(
      'unknown command "destory"; did you mean "destroy"? (`sandbox help` lists every verb)\n',
    );
  });
});
