import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Dockerode from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runOff } from "../../cli/runtime";
import { jobMarkerPath } from "../../runtime/jobs";
import { offSwitch, projectLeftovers } from "../../runtime/offSwitch";
import { configMapFromStackYaml, offTargetFromConfig, projectFromConfig } from "../../stacks/config";
import { requireDocker } from "../helpers/docker";

// The off switch needs only the project's name and job root: a config that no longer passes (here a budget that no
// longer fits) must not keep it from running.
let docker: Dockerode;
const name = `ob-${Math.random().toString(36).slice(2, 8)}`;
const jobRoot = mkdtempSync(join(tmpdir(), `${name}-jobs-`));
const broken = [
  "config:",
  `  sandbox:name: ${name}`,
  `  sandbox:jobRoot: ${jobRoot}`,
  "  sandbox:budget:",
  "    monthlyCapUsd: 1",
  "    maxConcurrentTasks: 5",
  "  sandbox:templates:",
  "    default:",
  "      image: sandbox-busybox:1",
  "",
].join("\n");

beforeAll(async () => {
  docker = await requireDocker();
});
afterAll(async () => {
  if (docker) await offSwitch(docker, name, { jobRoot });
  rmSync(jobRoot, { recursive: true, force: true });
});

describe("off with a config that no longer passes", () => {
  it("reads the name and job root anyway, falling back to the defaults for unusable values", () => {
    const all = configMapFromStackYaml(broken, "stacks/Pulumi.ob.yaml");
    expect(() => projectFromConfig(all, "ob")).toThrow("worst case 5 tasks");
    expect(offTargetFromConfig(all, "ob")).toEqual({ name, jobRoot });
    expect(offTargetFromConfig({ "sandbox:name": "Not A Name", "sandbox:jobRoot": "../x" }, "team")).toEqual({
      name: "sandbox-team",
      jobRoot: "/var/lib/sandbox-projects/sandbox-team",
    });
  });

  it("removes the project's objects and job folders and says the config is invalid", async () => {
    const labels = { "sandbox.project": name, "sandbox.managed-by": "sandbox-projects" };
    await docker.createNetwork({ Name: `${name}-net`, Internal: true, Labels: labels });
    mkdirSync(join(jobRoot, "t1"));
    writeFileSync(
      jobMarkerPath(jobRoot, "t1"),
      JSON.stringify({ managedBy: "sandbox-projects", project: name, id: "t1" }),
    );
    const out: string[] = [];
    const err: string[] = [];
    const target = offTargetFromConfig(configMapFromStackYaml(broken, "f"), "ob");
    const code = await runOff(
      target,
      { out: (t) => out.push(t), err: (t) => err.push(t) },
      true,
      "the config of stack ob is invalid; the off switch runs from the labels alone",
    );
    expect(code).toBe(0);
    expect(JSON.parse(out.join(""))).toEqual({
      verb: "off",
      ok: true,
      exitCode: 0,
      project: name,
      containers: [],
      networks: [`${name}-net`],
      volumes: [],
      jobFolders: [join(jobRoot, "t1")],
    });
    expect(err.join("")).toBe(
      "the config of stack ob is invalid; the off switch runs from the labels alone\n",
    );
    expect(await projectLeftovers(docker, name)).toEqual([]);
    expect(existsSync(join(jobRoot, "t1"))).toBe(false);
  });
});
