import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type Dockerode from "dockerode";
import { LABELS } from "../components/model";

/** The Pulumi project every stack of the toolkit belongs to (Pulumi.yaml's `name`). */
export const PULUMI_PROJECT = "sandbox";

/** What the off switch needs, and where it was learned. */
export interface FoundTarget {
  readonly name: string;
  /** The job root, when the source holds it. */
  readonly jobRoot?: string;
  readonly source: "state" | "labels";
}

interface CheckpointResource {
  type?: string;
  outputs?: Record<string, unknown>;
}

/** The checkpoint file of `stack` in a local file backend folder, or undefined when the stack was never created. */
export function checkpointFile(stateDir: string, stack: string): string | undefined {
  const stacks = join(stateDir, ".pulumi", "stacks");
  return [join(stacks, PULUMI_PROJECT, `${stack}.json`), join(stacks, `${stack}.json`)].find((f) =>
    existsSync(f),
  );
}

/** The resources of the stack's last checkpoint (empty when it has none, or it cannot be read). */
export function checkpointResources(stateDir: string, stack: string): CheckpointResource[] {
  const file = checkpointFile(stateDir, stack);
  if (file === undefined) return [];
  try {
    const doc = JSON.parse(readFileSync(file, "utf8")) as {
      checkpoint?: { latest?: { resources?: CheckpointResource[] } };
    };
    return doc.checkpoint?.latest?.resources ?? [];
  } catch {
    return [];
  }
}

/**
 * The project's name and job root as the stack's last deployment exported them (outputs `project` and each
 * template's `jobFolder.hostRoot`): what was actually deployed, whatever the config says now.
 */
export function targetFromState(stateDir: string, stack: string): FoundTarget | undefined {
  const root = checkpointResources(stateDir, stack).find((r) => r.type === "pulumi:pulumi:Stack");
  const outputs = root?.outputs ?? {};
  const name = outputs.project;
  if (typeof name !== "string" || name === "") return undefined;
  const templates = outputs.templates;
  let jobRoot: string | undefined;
  if (typeof templates === "object" && templates !== null) {
    for (const t of Object.values(templates as Record<string, { jobFolder?: { hostRoot?: unknown } }>)) {
      const hostRoot = t?.jobFolder?.hostRoot;
      if (typeof hostRoot === "string") jobRoot = hostRoot;
    }
  }
  return jobRoot === undefined ? { name, source: "state" } : { name, jobRoot, source: "state" };
}

/**
 * The project's name from the labels of what the stack made: every object the Docker provider creates carries
 * `sandbox.pulumi-urn` (which names the stack) beside `sandbox.project`. Works with no state at all.
 */
export async function targetFromLabels(docker: Dockerode, stack: string): Promise<FoundTarget | undefined> {
  const prefix = `urn:pulumi:${stack}::${PULUMI_PROJECT}::`;
  const filters = { label: [LABELS.pulumiUrn] };
  const labelled: Record<string, string>[] = [
    ...(await docker.listContainers({ all: true, filters })).map((c) => c.Labels ?? {}),
    ...(await docker.listNetworks({ filters })).map((n) => n.Labels ?? {}),
    ...((await docker.listVolumes({ filters })).Volumes ?? []).map((v) => v.Labels ?? {}),
  ];
  for (const labels of labelled) {
    const project = labels["sandbox.project"];
    if (labels[LABELS.pulumiUrn]?.startsWith(prefix) && project) return { name: project, source: "labels" };
  }
  return undefined;
}
