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
  /** Attribute files the interrupted run left half-written (removed: the backend reads a missing one as default). */
  readonly tornFiles: readonly string[];
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

/**
 * The file backend writes each blob atomically (a temporary file renamed into place) but the blob's `.attrs` file
 * beside it in place: an engine killed in between leaves an empty or cut `.attrs`, and every later command on the
 * stack then fails with "failed to load checkpoint: EOF". Returns the torn `.attrs` files of `stack`.
 */
export function tornAttrs(stateDir: string, project: string, stack: string): string[] {
  const root = join(stateDir, ".pulumi");
  const dirs: { dir: string; mine: (name: string) => boolean }[] = [
    { dir: join(root, "stacks", project), mine: (n) => n.startsWith(`${stack}.json`) },
    { dir: join(root, "stacks"), mine: (n) => n.startsWith(`${stack}.json`) },
    { dir: join(root, "history", project, stack), mine: () => true },
    { dir: join(root, "history", stack), mine: () => true },
  ];
  const locks = join(root, "locks");
  if (existsSync(locks)) {
    for (const org of readdirSync(locks))
      dirs.push({ dir: join(locks, org, project, stack), mine: () => true });
  }
  const torn: string[] = [];
  for (const { dir, mine } of dirs) {
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      if (!name.endsWith(".attrs") || !mine(name)) continue;
      const file = join(dir, name);
      try {
        JSON.parse(readFileSync(file, "utf8"));
      } catch {
        torn.push(file);
      }
    }
  }
  return torn;
}

/** Removes the torn `.attrs` files of `stack` (a missing one is read as the default attributes); returns them. */
export function removeTornAttrs(stateDir: string, project: string, stack: string): string[] {
  const torn = tornAttrs(stateDir, project, stack);
  for (const file of torn) rmSync(file, { force: true });
  return torn;
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
  const torn = removeTornAttrs(stateDir, project, stack.name);
  if (torn.length > 0) {
    print(
      `recovering: the last run of ${stack.name} left ${torn.length} half-written state file(s); removing them\n`,
    );
  }
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
  return { staleLocks: locks, pendingOperations: pending, tornFiles: torn };
}
