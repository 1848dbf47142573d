import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Dockerode from "dockerode";
import {
  type LaunchSpec,
  launchSpec,
  type ProjectInput,
  type ResolvedProject,
  resolveProject,
} from "../../components/model";
import { dockerClient } from "../../runtime/docker/client";

/** The offline image the project's set-up builds (toolchain/docker.sh). */
export const TEST_IMAGE = process.env.SANDBOX_TEST_IMAGE ?? "sandbox-busybox:1";

/** The local engine, or a failure that says how to get one: these tests never skip silently. */
export async function requireDocker(): Promise<Dockerode> {
  const docker = dockerClient();
  try {
    await docker.ping();
  } catch (e) {
    throw new Error(
      `no Docker engine answers (${String(e)}); run toolchain/docker.sh (./sandbox test does) and retry`,
    );
  }
  try {
    await docker.getImage(TEST_IMAGE).inspect();
  } catch {
    throw new Error(
      `the offline test image ${TEST_IMAGE} is missing; run toolchain/docker.sh (./sandbox test does)`,
    );
  }
  return docker;
}

/** A project with a unique name and a throwaway job root, so test files never see each other's objects. */
export function testProject(
  prefix: string,
  templates: ProjectInput["templates"],
  budget: ProjectInput["budget"] = { monthlyCapUsd: 100 },
): ResolvedProject {
  const name = `${prefix}-${Math.random().toString(36).slice(2, 8)}`;
  const jobRoot = mkdtempSync(join(tmpdir(), `${name}-jobs-`));
  return resolveProject({ name, budget, templates, jobRoot });
}

/** The launch spec of one template of a test project (tasks with egress none have no network). */
export function specOf(project: ResolvedProject, template: string): LaunchSpec {
  return launchSpec(project, template, `${project.spec.name}-net`);
}
