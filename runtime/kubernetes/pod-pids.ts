/** A task pod's process limit as the node's kubelet holds it, read from the pod's cgroup on this machine. */
import { readFileSync } from "node:fs";

/** The pod's cgroup on this machine (when the launcher runs on the node): how often it refused a fork. */
export function podPidsHits(uid: string): number | undefined {
  const slug = `pod${uid}`;
  for (const qos of ["", "burstable/", "besteffort/"]) {
    for (const p of [
      `/sys/fs/cgroup/pids/kubepods/${qos}${slug}/pids.events`,
      `/sys/fs/cgroup/kubepods/${qos}${slug}/pids.events`,
    ]) {
      try {
        const m = /^max (\d+)/m.exec(readFileSync(p, "utf8"));
        if (m?.[1] !== undefined) return Number(m[1]);
      } catch {}
    }
  }
  return undefined;
}
