import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import type { Stack } from "@pulumi/pulumi/automation";

/** What recovery found and did after an interrupted run on a local file backend. */
export interface Recovery {
  /** Locks left by a process of this machine that no longer runs (removed with `pulumi cancel`). */
  readonly staleLocks: readonly { pid: number; file: string }[];
  /** Operations the interrupted run had started but not recorded (cleared by a refresh). */
  readonly pendingOperations: readonly { type: string; urn: string }[];
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Removes the lock files of `stack` whose process is gone (after the front killed its own engine). */
export function removeStaleLocks(stateDir: string, project: string, stack: string): number {
  const locks = staleLocks(stateDir, project, stack);
  for (const l of locks) {
    rmSync(l.file, { force: true });
    // The file backend's blob store keeps each file's attributes beside it.
    rmSync(`${l.file}.attrs`, { force: true });
  }
  return locks.length;
}

/** Lock files of `stack` in a file backend folder whose owner was a process of this machine that is gone. */
export function staleLocks(
  stateDir: string,
  project: string,
  stack: string,
): { pid: number; file: string }[] {
  const locks = join(stateDir, ".pulumi", "locks");
  if (!existsSync(locks)) return [];
  const out: { pid: number; file: string }[] = [];
  for (const org of readdirSync(locks)) {
    const dir = join(locks, org, project, stack);
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir).filter((n) => n.endsWith(".json"))) {
      try {
        const lock = JSON.parse(readFileSync(join(dir, f), "utf8")) as { pid?: number; hostname?: string };
        if (lock.hostname === hostname() && typeof lock.pid === "number" && !alive(lock.pid)) {
          out.push({ pid: lock.pid, file: join(dir, f) });
        }
      } catch {
        // a lock being written right now is not stale
      }
    }
  }
  return out;
}

/** The pending operations recorded in a file backend's checkpoint of `stack`. */
export function pendingOperations(
  stateDir: string,
  project: string,
  stack: string,
): { type: string; urn: string }[] {
  const stacks = join(stateDir, ".pulumi", "stacks");
  for (const candidate of [join(stacks, project, `${stack}.json`), join(stacks, `${stack}.json`)]) {
    if (!existsSync(candidate)) continue;
    const checkpoint = JSON.parse(readFileSync(candidate, "utf8")) as {
      checkpoint?: { latest?: { pending_operations?: { type: string; resource: { urn: string } }[] } };
    };
    return (checkpoint.checkpoint?.latest?.pending_operations ?? []).map((p) => ({
      type: p.type,
      urn: p.resource.urn,
    }));
  }
  return [];
}

/**
 * Makes a stack whose last run was killed part-way usable again: removes a lock whose process is gone, and clears
 * the operations that run left pending with a refresh. What those operations created is left for the next `up`:
 * the local Docker provider finds it by its resource label and adopts or replaces it, so nothing is duplicated.
 */
export async function recoverInterruptedRun(
  stack: Stack,
  stateDir: string,
  project: string,
  print: (text: string) => void,
  /** Where the engine's own output of the clearing refresh goes (the front shows it only with --verbose). */
  engineOutput: (text: string) => void = print,
): Promise<Recovery> {
  const locks = staleLocks(stateDir, project, stack.name);
  if (locks.length > 0) {
    print(
      `recovering: the last run of ${stack.name} was interrupted (pid ${locks.map((l) => l.pid).join(", ")} is gone); removing its lock\n`,
    );
    await stack.cancel();
  }
  const pending = pendingOperations(stateDir, project, stack.name);
  if (pending.length > 0) {
    print(
      `recovering: ${pending.length} operation(s) of the interrupted run were left pending; refreshing\n`,
    );
    await stack.refresh({ clearPendingCreates: true, onOutput: engineOutput });
  }
  return { staleLocks: locks, pendingOperations: pending };
}
