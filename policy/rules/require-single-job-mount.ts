import { isWithin, normalizeHostPath } from "../paths";
import { isUnknown } from "../workload";
import { hostMounts } from "./disallow-runtime-socket";
import { label, unchecked, violation } from "./helpers";
import { defineRule, type Finding } from "./types";

const SHARED_PROPAGATION = new Set(["shared", "rshared", "bidirectional"]);
const JOB_MOUNT_RULE_ID = "sandbox-require-single-job-mount";

/**
 * Rule settings (pack config's shape) with `roots` added to this rule's `jobRoots`: how the toolkit declares the
 * folder its own job folders live under (the launcher's preflight, `scan` of a launch spec).
 */
export function withJobRoots(
  rules: Readonly<Record<string, unknown>> | undefined,
  roots: readonly string[],
): Record<string, unknown> {
  const entry = (rules?.[JOB_MOUNT_RULE_ID] ?? {}) as { jobRoots?: unknown };
  const declared = Array.isArray(entry.jobRoots) ? (entry.jobRoots as unknown[]) : [];
  return { ...rules, [JOB_MOUNT_RULE_ID]: { ...entry, jobRoots: [...declared, ...roots] } };
}

/**
 * A task writes to the host in exactly one place, its job folder: at most one writable host mount, under a job
 * root when the pack config names them; every other host mount is read-only; no mount propagates back to the host.
 */
export const requireSingleJobMount = defineRule({
  id: JOB_MOUNT_RULE_ID,
  description:
    "At most one writable host mount (the job folder, under a declared job root), and no shared mount propagation.",
  mission: false,
  enforcementLevel: "mandatory",
  severity: "high",
  crosswalk: {
    cis: ["5.20"],
    psa: ["hostPathVolumes"],
    kyverno: ["ensure-readonly-hostpath", "disallow-host-path"],
    kubeLinter: ["writable-host-mount"],
  },
  subjects: ["workload"],
  configSchema: {
    properties: {
      jobRoots: {
        type: "array",
        items: { type: "string" },
        description:
          "Host folders under which a writable job folder may live (empty: no job root is declared, so every writable host mount fails).",
        default: [],
      },
    },
  },
  defaults: { jobRoots: [] as string[] },
  remediationSteps:
    "Declare the job root (jobRoots) and keep one writable bind for the job folder under it; make every other host mount read-only; remove shared/rshared/Bidirectional propagation.",
  check(s, config) {
    if (s.subject !== "workload") return [];
    const out: Finding[] = [];
    const writable = new Map<string, string>();
    const roots = config.jobRoots.map(normalizeHostPath).filter((r): r is string => r !== undefined);
    for (const c of s.containers) {
      for (const m of hostMounts(c.mounts)) {
        const prop = typeof m.propagation === "string" ? m.propagation.trim().toLowerCase() : undefined;
        if (prop !== undefined && SHARED_PROPAGATION.has(prop)) {
          out.push(
            violation(
              `${label(c)} mounts ${typeof m.source === "string" ? m.source : "a host path"} with ${prop} propagation, which reaches back into the host`,
              m.path,
            ),
          );
        } else if (isUnknown(m.propagation))
          out.push(unchecked(`the mount propagation of ${label(c)}`, m.path, m.propagation));
        if (m.readOnly === true) continue;
        if (isUnknown(m.readOnly) || isUnknown(m.source)) {
          out.push(unchecked(`a host mount of ${label(c)}`, m.path, m.readOnly, m.source));
          continue;
        }
        const src = typeof m.source === "string" ? (normalizeHostPath(m.source) ?? m.source) : "?";
        // Two containers of one pod writing one volume is still one job folder.
        const key = m.volume !== undefined ? `volume:${m.volume}` : `path:${src}`;
        if (!writable.has(key)) writable.set(key, src);
        if (roots.length === 0) {
          // With no job root declared nothing says which host folder is the job folder: `/home/u/project` and
          // `/srv/share` would pass as one. The folder job folders live under must be named.
          out.push(
            violation(
              `${label(c)} mounts host path ${src} writable, and no job root is declared: a writable host mount must be a job folder under a declared job root (set jobRoots of ${JOB_MOUNT_RULE_ID} to the folder job folders live under), or be read-only`,
              m.path,
            ),
          );
        } else if (!roots.some((r) => src !== r && isWithin(src, r))) {
          out.push(
            violation(
              `${label(c)} mounts ${src} writable, outside the job roots [${roots.join(", ")}]`,
              m.path,
            ),
          );
        }
      }
    }
    if (writable.size > 1) {
      out.push(
        violation(
          `the workload has ${writable.size} writable host mounts (${[...writable.values()].join(", ")}); only the job folder may be writable`,
        ),
      );
    }
    return out;
  },
});
