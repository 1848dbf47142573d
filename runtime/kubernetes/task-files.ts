/**
 * A Kubernetes task's files: gathered from the request (inline files and seeds from the host), carried in one
 * ConfigMap of the task (entries f0, f1, …), and copied into the job folder by the task's init step.
 */
import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import type { LaunchSpec } from "../../components/model";
import { isSafeJobName } from "../jobs";
import type { TaskRequest } from "../launcher";
import type { KubeApis } from "./api";

/** The most a task's files may come to: one ConfigMap holds them (the API server's limit is 1 MiB). */
export const MAX_TASK_FILES_BYTES = 1_000_000;

/** Where the init container sees the task's ConfigMap. */
export const SEED_MOUNT = "/.sandbox-seed";

/** A file for the job folder: its path inside the folder, its bytes and whether it is executable. */
export interface TaskFile {
  readonly path: string;
  readonly data: Buffer;
  readonly executable: boolean;
}

/** The task's files from `files` and `seeds`; symbolic links, sockets and devices are not carried (named). */
export function collectTaskFiles(request: TaskRequest): { files: TaskFile[]; skipped: string[] } {
  const files: TaskFile[] = [];
  const skipped: string[] = [];
  const add = (path: string, source: string) => {
    const st = lstatSync(source);
    if (!st.isFile()) {
      skipped.push(path);
      return;
    }
    files.push({ path, data: readFileSync(source), executable: (st.mode & 0o111) !== 0 });
  };
  for (const seed of request.seeds ?? []) {
    if (seed.kind === "file") {
      if (!isSafeJobName(seed.name)) throw new Error(`job file "${seed.name}" must be a relative path`);
      add(seed.name, seed.source);
      continue;
    }
    const walk = (dir: string) => {
      for (const name of readdirSync(dir).sort()) {
        const full = join(dir, name);
        const st = lstatSync(full);
        if (st.isDirectory()) walk(full);
        else add(relative(seed.source, full), full);
      }
    };
    walk(seed.source);
  }
  for (const [path, content] of Object.entries(request.files ?? {})) {
    if (!isSafeJobName(path)) throw new Error(`job file "${path}" must be a relative path`);
    files.push({ path, data: Buffer.from(content), executable: false });
  }
  // A later file of the same path wins, as it does in a job folder on the host.
  const byPath = new Map(files.map((f) => [f.path, f]));
  return { files: [...byPath.values()], skipped };
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The init step that copies the ConfigMap's entries (f0, f1, …) to their paths in the job folder. */
export function seedScript(files: readonly TaskFile[], jobFolder: string): string {
  const lines = ["set -e"];
  files.forEach((f, i) => {
    const dest = `${jobFolder}/${f.path}`;
    const dir = dest.slice(0, dest.lastIndexOf("/"));
    lines.push(`mkdir -p ${quote(dir)}`, `cp ${SEED_MOUNT}/f${i} ${quote(dest)}`);
    if (f.executable) lines.push(`chmod 755 ${quote(dest)}`);
  });
  return lines.join("\n");
}

/**
 * Puts the task's files in its job folder: an init container hardened like the task (after the policy gate, so once
 * its network policy holds) copies them from a ConfigMap of the task, made here, into the folder.
 */
export async function seedTaskFiles(
  apis: KubeApis,
  namespace: string,
  spec: LaunchSpec,
  // biome-ignore lint/suspicious/noExplicitAny: the Job's pod spec as taskJob() made it, extended in place
  podSpec: any,
  jobName: string,
  labels: Record<string, string>,
  files: readonly TaskFile[],
): Promise<void> {
  // biome-ignore lint/suspicious/noExplicitAny: the pod spec's containers, as above
  const task = podSpec.containers.find((c: any) => c.name === "task");
  podSpec.initContainers = [
    ...(podSpec.initContainers ?? []),
    {
      name: "seed",
      image: spec.image,
      command: ["sh", "-c", seedScript(files, spec.jobFolder.containerPath)],
      securityContext: task.securityContext,
      resources: task.resources,
      volumeMounts: [
        { name: "job", mountPath: spec.jobFolder.containerPath },
        { name: "seed", mountPath: SEED_MOUNT, readOnly: true },
      ],
    },
  ];
  podSpec.volumes.push({ name: "seed", configMap: { name: jobName, defaultMode: 0o444 } });
  await apis.core.createNamespacedConfigMap({
    namespace,
    body: {
      metadata: { name: jobName, namespace, labels },
      binaryData: Object.fromEntries(files.map((f, i) => [`f${i}`, f.data.toString("base64")])),
    },
  });
}
