// The off switch on a real engine: running, created and exited containers of a project, its networks, volumes and job
// folders all go, in one call, and another project's objects stay; a second run removes nothing; an object the
// engine refuses to remove is named once while everything else still goes.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Dockerode from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jobMarkerPath } from "../../runtime/jobs";
import { OffSwitchError, offSwitch, projectLeftovers } from "../../runtime/offSwitch";
import { requireDocker, TEST_IMAGE } from "../helpers/docker";

let docker: Dockerode;
const suffix = Math.random().toString(36).slice(2, 8);
const project = `off-${suffix}`;
const other = `offq-${suffix}`;
const jobRoot = mkdtempSync(join(tmpdir(), `${project}-jobs-`));
const labels = (p: string) => ({ "sandbox.project": p, "sandbox.managed-by": "sandbox-projects" });

async function container(
  p: string,
  name: string,
  state: "running" | "created" | "exited",
  host: Dockerode.HostConfig = { NetworkMode: "none" },
): Promise<Dockerode.Container> {
  const c = await docker.createContainer({
    name,
    Image: TEST_IMAGE,
    Cmd: state === "exited" ? ["true"] : ["sleep", "300"],
    Labels: labels(p),
    HostConfig: host,
  });
  if (state !== "created") await c.start();
  if (state === "exited") await c.wait();
  return c;
}

beforeAll(async () => {
  docker = await requireDocker();
});
afterAll(async () => {
  if (docker) {
    await offSwitch(docker, project, { jobRoot }).catch(() => undefined);
    await offSwitch(docker, other);
  }
  rmSync(jobRoot, { recursive: true, force: true });
});

describe("the off switch on a real engine", () => {
  it("removes running, created and exited containers, networks, volumes and job folders; leaves other projects", async () => {
    await docker.createNetwork({ Name: `${project}-net`, Internal: true, Labels: labels(project) });
    await docker.createVolume({ Name: `${project}-vol`, Labels: labels(project) });
    await container(project, `${project}-task-run1`, "running", { NetworkMode: `${project}-net` });
    await container(project, `${project}-task-run2`, "running");
    await container(project, `${project}-pool-c1`, "created", {
      NetworkMode: "none",
      Mounts: [{ Type: "volume", Source: `${project}-vol`, Target: "/data" }],
    });
    await container(project, `${project}-pool-c2`, "created");
    await container(project, `${project}-task-done`, "exited");
    mkdirSync(join(jobRoot, "run1"));
    writeFileSync(
      jobMarkerPath(jobRoot, "run1"),
      JSON.stringify({ managedBy: "sandbox-projects", project, id: "run1" }),
    );
    await docker.createNetwork({ Name: `${other}-net`, Internal: true, Labels: labels(other) });
    await docker.createVolume({ Name: `${other}-vol`, Labels: labels(other) });
    await container(other, `${other}-task-run1`, "running");
    await container(other, `${other}-pool-c1`, "created");
    const before = await projectLeftovers(docker, other);
    expect(before).toHaveLength(4);

    expect(await offSwitch(docker, project, { jobRoot })).toEqual({
      project,
      containers: [
        `${project}-pool-c1`,
        `${project}-pool-c2`,
        `${project}-task-done`,
        `${project}-task-run1`,
        `${project}-task-run2`,
      ],
      networks: [`${project}-net`],
      volumes: [`${project}-vol`],
      jobFolders: [join(jobRoot, "run1")],
    });
    expect(await projectLeftovers(docker, project)).toEqual([]);
    expect(existsSync(join(jobRoot, "run1"))).toBe(false);
    expect(await projectLeftovers(docker, other)).toEqual(before);

    expect(await offSwitch(docker, project, { jobRoot })).toEqual({
      project,
      containers: [],
      networks: [],
      volumes: [],
      jobFolders: [],
    });
    expect(await projectLeftovers(docker, other)).toEqual(before);
  });

  it("names a network the engine refuses to remove, once, and still removes the rest", async () => {
    await docker.createNetwork({ Name: `${project}-net`, Internal: true, Labels: labels(project) });
    await container(project, `${project}-task-a`, "running");
    // Another project's task holds the network: the engine refuses to remove it while the endpoint is there.
    await container(other, `${other}-task-holder`, "running", { NetworkMode: `${project}-net` });
    const err = await offSwitch(docker, project).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OffSwitchError);
    const off = err as OffSwitchError;
    expect(off.report.containers).toEqual([`${project}-task-a`]);
    expect(off.failures).toHaveLength(1);
    expect(off.failures[0]).toMatchObject({ kind: "network", name: `${project}-net` });
    expect(off.failures[0]?.message).toMatch(/active endpoints/);
    expect(off.message).toMatch(new RegExp(`^the off switch of project ${project} left 1 object\\(s\\)`));
    expect(await projectLeftovers(docker, project)).toEqual([`network ${project}-net`]);
    // Once the other project's task is gone, the next run finishes the job.
    await offSwitch(docker, other);
    expect(await offSwitch(docker, project)).toMatchObject({ containers: [], networks: [`${project}-net`] });
    expect(await projectLeftovers(docker, project)).toEqual([]);
  });
});
