/**
 * The engine the front is told to use: with `DOCKER_HOST` naming a socket where nothing answers, a task verb and a
 * stack verb each end at once with exit 3 and one message naming that address (one JSON document under `--json`),
 * and the set-up script starts no daemon in its place and leaves the running engine's log alone. The running engine
 * of this machine is the negative control: the same verbs reach it without `DOCKER_HOST`. With the engine answering
 * and no Pulumi anywhere, a stack verb stops before deploying with what is missing.
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, statSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { main } from "../../cli/main";
import { frontStackOnEngine, oneTemplate } from "../helpers/front-stack";

const ROOT = join(__dirname, "../..");
const stack = frontStackOnEngine("eh", "eh", oneTemplate());
const nowhere = `unix://${join(mkdtempSync(join(tmpdir(), "no-engine-")), "docker.sock")}`;

async function frontWith(env: NodeJS.ProcessEnv, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t) }, stack.root, env);
  return { code, out: out.join(""), err: err.join("") };
}

describe("DOCKER_HOST naming a socket where nothing answers", () => {
  it("ends run and up at once with exit 3 and a JSON document naming the address; without it they reach the engine", async () => {
    const env = { ...process.env, DOCKER_HOST: nowhere };
    const saved = process.env.DOCKER_HOST;
    process.env.DOCKER_HOST = nowhere;
    try {
      const run = await frontWith(env, "run", "eh", "default", "--json", "--", "true");
      expect(run.code).toBe(3);
      const doc = JSON.parse(run.out) as { ok: boolean; error: { kind: string; message: string } };
      expect(doc.ok).toBe(false);
      expect(doc.error.kind).toBe("no-engine");
      expect(doc.error.message).toContain(`no Docker engine answers at ${nowhere}`);
      const up = await frontWith(env, "up", "eh", "--json");
      expect(up.code).toBe(3);
      const upDoc = JSON.parse(up.out) as { error: { kind: string; message: string } };
      expect(upDoc.error).toMatchObject({ kind: "no-engine" });
      expect(upDoc.error.message).toContain(nowhere);
    } finally {
      if (saved === undefined) delete process.env.DOCKER_HOST;
      else process.env.DOCKER_HOST = saved;
    }
    // The control: the machine's engine answers the same verb.
    const reached = await frontWith(process.env, "run", "eh", "default", "--json", "--", "true");
    expect(reached.code, reached.err).toBe(0);
  }, 120_000);

  it("the set-up starts no daemon in place of the one named, and leaves the running engine's log alone", () => {
    const log = join(
      process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"),
      "sandbox-projects",
      "dockerd.log",
    );
    const before = existsSync(log) ? statSync(log).size : undefined;
    const daemons = () =>
      spawnSync("pgrep", ["-x", "dockerd"], { encoding: "utf8" }).stdout.trim().split("\n");
    const running = daemons();
    const r = spawnSync("bash", [join(ROOT, "toolchain/docker.sh"), "engine"], {
      env: { ...process.env, DOCKER_HOST: nowhere },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.status).toBe(3);
    expect(r.stderr).toContain(`no Docker engine answers at ${nowhere}`);
    expect(r.stderr).toContain("Nothing was started here.");
    expect(daemons()).toEqual(running);
    // The log of an engine the set-up started (none where the engine was there before it) is never cut.
    if (before !== undefined) expect(statSync(log).size).toBeGreaterThanOrEqual(before);
  });
});

describe("./sandbox up with the engine answering and without the Pulumi toolchain", () => {
  /** The project's dev stack config in a temp root, and an environment with no Pulumi anywhere. */
  async function bare(verb: string) {
    const root = mkdtempSync(join(tmpdir(), "sandbox-cli-"));
    mkdirSync(join(root, "stacks"));
    cpSync(join(ROOT, "stacks", "Pulumi.dev.yaml"), join(root, "stacks", "Pulumi.dev.yaml"));
    const empty = mkdtempSync(join(tmpdir(), "sandbox-empty-"));
    const env: NodeJS.ProcessEnv = { PATH: empty, XDG_CACHE_HOME: empty, PULUMI_HOME: empty };
    if (process.env.DOCKER_HOST !== undefined) env.DOCKER_HOST = process.env.DOCKER_HOST;
    const out: string[] = [];
    const err: string[] = [];
    const code = await main([verb, "dev"], { out: (t) => out.push(t), err: (t) => err.push(t) }, root, env);
    return { code, err: err.join("") };
  }

  it("stops before deploying with what is missing and how to get it, exit code 3", async () => {
    const r = await bare("up");
    expect(r.code).toBe(3);
    expect(r.err).toContain('cannot up stack "dev": the Pulumi engine is not available on this machine.');
    expect(r.err).toContain("  missing: the Pulumi CLI: no `pulumi` on PATH and none cached at ");
    expect(r.err).toContain(
      "  missing: the Pulumi docker resource plugin: no `pulumi-resource-docker` on PATH",
    );
    expect(r.err).toContain("`pulumi plugin install resource docker`");
    expect(r.err.trimEnd().endsWith("Nothing was deployed.")).toBe(true);
    expect(r.err).not.toMatch(/\n\s+at .*\(.*:\d+:\d+\)/);
  });

  it.each(["preview", "refresh", "destroy"])("%s stops the same way", async (verb) => {
    const r = await bare(verb);
    expect(r.code).toBe(3);
    expect(r.err).toContain(`cannot ${verb} stack "dev"`);
  });
});
