import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import type Dockerode from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { witnessPath } from "../../runtime/ledger/witness";
import { offSwitch, projectLeftovers } from "../../runtime/offSwitch";
import { requireDocker, TEST_IMAGE } from "../helpers/docker";

// Ctrl-C during `run`, on the real engine: the front runs in its own process (signals are per process) with a stack
// of its own, so the test finds its task by its unique project name and touches nothing else.
const repo = join(__dirname, "../..");
let docker: Dockerode;
const name = `rs-${Math.random().toString(36).slice(2, 8)}`;
const root = mkdtempSync(join(tmpdir(), `${name}-root-`));
const jobRoot = join(root, "jobs");

beforeAll(async () => {
  docker = await requireDocker();
  mkdirSync(join(root, "stacks"));
  writeFileSync(
    join(root, "stacks", "Pulumi.rs.yaml"),
    `config:\n  sandbox:name: ${name}\n  sandbox:jobRoot: ${jobRoot}\n  sandbox:budget:\n    monthlyCapUsd: 100\n  sandbox:templates:\n    default:\n      image: ${TEST_IMAGE}\n`,
  );
  // The front's `main` against this root, as `cli/main.ts` runs it against the checkout.
  writeFileSync(
    join(root, "front.ts"),
    `import { main } from ${JSON.stringify(join(repo, "cli/main.ts"))};\n` +
      "main(process.argv.slice(2), { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) }, " +
      `${JSON.stringify(root)}).then((c) => { process.exitCode = c; });\n`,
  );
});
afterAll(async () => {
  if (docker) await offSwitch(docker, name, { jobRoot });
  rmSync(root, { recursive: true, force: true });
});

describe("Ctrl-C during run", () => {
  it("removes the task's container and job folder and exits 130", async () => {
    const child = spawn(
      join(repo, "node_modules/.bin/tsx"),
      [join(root, "front.ts"), "run", "rs", "default", "--", "sleep", "60"],
      {
        cwd: repo,
      },
    );
    let err = "";
    child.stderr.on("data", (d) => {
      err += String(d);
    });
    const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    let running = 0;
    for (let i = 0; i < 300 && running === 0; i++) {
      running = (
        await docker.listContainers({ filters: { label: [`sandbox.project=${name}`], status: ["running"] } })
      ).length;
      if (running === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(running).toBe(1);
    const folders = readdirSync(jobRoot)
      .filter((e) => e !== basename(witnessPath(jobRoot)))
      .sort();
    // The job folder, its marker and its disk image (where the launcher mounts one), and the watchdog's folder.
    const id = folders.find((e) => !e.startsWith("."));
    expect(id).toBeDefined();
    expect(folders).toEqual(expect.arrayContaining([`.${id}.sandbox-job`, id, ".sandbox-deadlines"]));
    child.kill("SIGINT");
    expect(await exit).toBe(130);
    expect(err).toMatch(new RegExp(`removed 1 task container\\(s\\): ${name}-task-[a-z0-9-]+\\n`));
    expect(await projectLeftovers(docker, name)).toEqual([]);
    expect(
      existsSync(jobRoot) ? readdirSync(jobRoot).filter((e) => e !== basename(witnessPath(jobRoot))) : [],
    ).toEqual([]);
  }, 60_000);
});
