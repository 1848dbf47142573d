import { isUnknown, type Val } from "../workload";
import { unchecked, violation } from "./helpers";
import { defineRule, type Finding } from "./types";

/** A Job (or CronJob's job) is one-shot: no retries, a deadline, and cleanup after it finishes. */
export const requireJobLifecycle = defineRule({
  id: "sandbox-require-job-lifecycle",
  description:
    "Jobs retry at most maxBackoffLimit times, have an activeDeadlineSeconds and a ttlSecondsAfterFinished.",
  mission: false,
  enforcementLevel: "advisory",
  severity: "low",
  crosswalk: { kubeLinter: ["job-ttl-seconds-after-finished"] },
  subjects: ["workload"],
  configSchema: {
    properties: {
      maxBackoffLimit: {
        type: "integer",
        minimum: 0,
        description: "Largest backoffLimit (retries).",
        default: 0,
      },
      maxActiveDeadlineSeconds: {
        type: "integer",
        minimum: 1,
        description: "Largest activeDeadlineSeconds.",
        default: 86400,
      },
    },
  },
  defaults: { maxBackoffLimit: 0, maxActiveDeadlineSeconds: 86_400 },
  remediationSteps:
    "Set `backoffLimit: 0`, `activeDeadlineSeconds` (the task's timeout) and `ttlSecondsAfterFinished` on the Job spec.",
  check(s, config) {
    if (s.subject !== "workload") return [];
    const job = s.lifecycle.job;
    if (job === undefined) return [];
    const out: Finding[] = [];
    const judge = (v: Val<number>, key: string, max: number | undefined, absent: string) => {
      const path = `${job.path}.${key}`;
      if (isUnknown(v)) out.push(unchecked(key, path, v));
      else if (v === undefined) out.push(violation(absent, path));
      else if (max !== undefined && v > max)
        out.push(violation(`${key} is ${v}, above the maximum ${max}`, path));
    };
    judge(
      job.backoffLimit,
      "backoffLimit",
      config.maxBackoffLimit,
      "backoffLimit is not set, so a failed task is retried 6 times",
    );
    judge(
      job.activeDeadlineSeconds,
      "activeDeadlineSeconds",
      config.maxActiveDeadlineSeconds,
      "activeDeadlineSeconds is not set, so the job has no deadline",
    );
    judge(
      job.ttlSecondsAfterFinished,
      "ttlSecondsAfterFinished",
      undefined,
      "ttlSecondsAfterFinished is not set, so finished jobs are never cleaned up",
    );
    return out;
  },
});
