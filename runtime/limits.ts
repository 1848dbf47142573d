/** The limits a launcher holds a task to while it runs: its slot, and what its pids cgroup says of its forks. */
import { readFileSync } from "node:fs";

/** A counting semaphore: tasks beyond the limit wait in order; none is refused or started over the limit. */
export class Slots {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new Error(`concurrency ${limit} must be a whole number ≥ 1`);
  }
  get active(): number {
    return this.running;
  }
  /** Takes a slot when one is free now; never waits. */
  tryAcquire(): boolean {
    if (this.running >= this.limit) return false;
    this.running++;
    return true;
  }
  async acquire(): Promise<void> {
    if (this.running < this.limit) {
      this.running++;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }
  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }
}

/** Paths where an engine may keep a container's pids cgroup, for cgroup v1 and v2 with either driver. */
function pidsEventsPaths(id: string): string[] {
  return [
    `/sys/fs/cgroup/pids/docker/${id}/pids.events`,
    `/sys/fs/cgroup/pids/system.slice/docker-${id}.scope/pids.events`,
    `/sys/fs/cgroup/docker/${id}/pids.events`,
    `/sys/fs/cgroup/system.slice/docker-${id}.scope/pids.events`,
  ];
}

/** How often the container's pids cgroup refused a fork (`max` in pids.events), or undefined if unreadable. */
export function pidsLimitHits(id: string): number | undefined {
  for (const p of pidsEventsPaths(id)) {
    try {
      const m = /^max (\d+)/m.exec(readFileSync(p, "utf8"));
      if (m?.[1] !== undefined) return Number(m[1]);
    } catch {
      // not this layout
    }
  }
  return undefined;
}
