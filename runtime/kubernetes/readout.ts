/**
 * Reading a finished task out of its pod, through the pod's holder (components/kubernetes/pod.ts) while the pod is
 * still there: one exec that writes the task's stderr file on the exec's stderr and, when the job folder is asked
 * for, a tar of it on the exec's stdout (unpacked by runtime/kubernetes/tar-in.ts). Both bounded: stderr to the bound
 * of a task's output, the folder to the template's disk size.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { Writable } from "node:stream";
import { HOLDER, STDERR_FILE } from "../../components/kubernetes/pod";
import { TASK_OUTPUT_MAX_BYTES } from "../../components/model";
import type { NotCopied } from "../outputs";
import type { KubeApis } from "./api";
import { TarIntoFolder } from "./tar-in";

/** The longest a readout may take (a job folder of the template's disk size, read at the holder's CPU limit). */
export const READOUT_SECONDS = 300;

/** What came out of the pod. */
export interface Readout {
  readonly stderr: string;
  /** Bytes of stderr past the bound, not read. */
  readonly stderrDropped: number;
  /** With a folder asked for: the entries not brought back, and why. */
  readonly notCopied?: readonly NotCopied[];
  /** Why the job folder could not be read (no `tar` in the image, the exec refused), when it could not. */
  readonly problem?: string;
}

/** Keeps the first `max` bytes written to it and counts the rest. */
class Bounded extends Writable {
  private readonly parts: Buffer[] = [];
  kept = 0;
  dropped = 0;
  constructor(private readonly max: number) {
    super();
  }
  override _write(chunk: Buffer, _e: BufferEncoding, done: () => void): void {
    const room = Math.max(0, this.max - this.kept);
    if (room > 0) this.parts.push(chunk.subarray(0, room));
    this.kept += Math.min(room, chunk.length);
    this.dropped += Math.max(0, chunk.length - room);
    done();
  }
  text(): string {
    return Buffer.concat(this.parts).toString("utf8");
  }
}

/** The script the holder runs: stderr first, then (when asked) the folder as a tar stream. */
const SCRIPT = [
  `cat ${STDERR_FILE} >&2 2>/dev/null`,
  '[ "$1" = folder ] || exit 0',
  'cd "$2" || exit 3',
  "command -v tar >/dev/null 2>&1 || exit 4",
  "exec tar -cf - .",
].join("\n");

/**
 * Reads the task's stderr and, with `folder`, its job folder into `folder.dest` (made here). Never throws for what
 * the pod sends; an exec the API server refuses is a problem in the answer.
 */
export async function readOut(
  apis: KubeApis,
  namespace: string,
  pod: string,
  folder?: { readonly containerPath: string; readonly dest: string; readonly maxBytes: number },
): Promise<Readout> {
  const k8s = await import("@kubernetes/client-node");
  const stderr = new Bounded(TASK_OUTPUT_MAX_BYTES);
  let tar: TarIntoFolder | null = null;
  let cannot: string | undefined;
  if (folder !== undefined) {
    try {
      mkdirSync(dirname(folder.dest), { recursive: true, mode: 0o700 });
      tar = new TarIntoFolder(folder.dest, folder.maxBytes);
    } catch (e) {
      // The folder cannot be made on this machine: the task's stderr is still read.
      cannot = `the job folder cannot be made on this machine: ${e instanceof Error ? e.message : String(e)}`;
    }
  }
  let exitCode: number | undefined;
  let problem: string | undefined = cannot;
  // A damaged archive stops the unpacking; what came before it stays.
  tar?.on("error", (e) => {
    problem ??= e.message;
  });
  apis.count();
  try {
    const ws = await new k8s.Exec(apis.config).exec(
      namespace,
      pod,
      HOLDER,
      ["sh", "-c", SCRIPT, "sh", tar === null ? "none" : "folder", folder?.containerPath ?? ""],
      // Both streams attached, always: an exec without stdout is one the node's runtime may serve differently.
      tar ?? new Bounded(0),
      stderr,
      null,
      false,
      (status) => {
        const cause = status.details?.causes?.find((c) => c.reason === "ExitCode")?.message;
        exitCode = status.status === "Success" ? 0 : cause === undefined ? -1 : Number(cause);
      },
    );
    // Bounded: a pod that stops answering mid-way leaves what came so far.
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        problem ??= `the pod stopped answering after ${READOUT_SECONDS} s of reading it out`;
        ws.close();
        resolve();
      }, READOUT_SECONDS * 1000);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      ws.on("close", done);
      ws.on("error", done);
    });
  } catch (e) {
    problem = `the pod could not be read (exec into its ${HOLDER} container): ${e instanceof Error ? e.message : String(e)}`;
  }
  if (tar !== null && !tar.writableFinished && !tar.destroyed) {
    await new Promise<void>((resolve) => {
      tar.once("finish", () => resolve());
      tar.once("close", () => resolve());
      if (!tar.writableEnded) tar.end();
    });
  }
  if (problem === undefined && tar !== null && exitCode !== 0) {
    problem =
      exitCode === 4
        ? "the task's image has no `tar`, which brings its job folder back from the pod"
        : `the job folder could not be read from the pod (exit ${exitCode ?? "unknown"})`;
  }
  return {
    stderr: stderr.text(),
    stderrDropped: stderr.dropped,
    ...(tar === null ? {} : { notCopied: tar.notCopied }),
    ...(problem === undefined ? {} : { problem }),
  };
}

// biome-ignore lint/suspicious/noExplicitAny: pod objects as the client returns them, read field by field
type Obj = any;

/** A pod's container status by name. */
function status(pod: Obj | undefined, name: string): Obj | undefined {
  return (pod?.status?.containerStatuses ?? []).find((s: Obj) => s.name === name);
}

/**
 * True when the pod's task container has ended and its holder is no longer waiting to start (the node starts it
 * after the task's, and a short task may end before it is up): the pod can be read out now, or never.
 */
export function readyToRead(pod: Obj | undefined): boolean {
  return (
    status(pod, "task")?.state?.terminated !== undefined && status(pod, HOLDER)?.state?.waiting === undefined
  );
}

/**
 * Reads a task out of its pod ({@link readOut}) when its task container ended and its holder runs; a problem when
 * the holder does not run; nothing when the task never ended in the pod (the pod went first).
 */
export async function readOutPod(
  apis: KubeApis,
  namespace: string,
  pod: Obj | undefined,
  folder?: { readonly containerPath: string; readonly dest: string; readonly maxBytes: number },
): Promise<Readout | undefined> {
  if (status(pod, "task")?.state?.terminated === undefined) return undefined;
  // A pod without a holder (gVisor, Kata) keeps its task's stderr in its log: nothing to read out.
  if ((pod?.spec?.containers ?? []).every((c: Obj) => c.name !== HOLDER)) return undefined;
  const holder = status(pod, HOLDER)?.state;
  if (holder?.running !== undefined) return readOut(apis, namespace, pod.metadata.name, folder);
  return {
    stderr: "",
    stderrDropped: 0,
    problem: `the pod's ${HOLDER} container was not running (${JSON.stringify(holder ?? "absent")})`,
  };
}
