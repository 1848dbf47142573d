import { sensitiveHostPathReason } from "../paths";
import { isUnknown, type MountView } from "../workload";
import { hostMounts } from "./disallow-runtime-socket";
import { label, unchecked, violation } from "./helpers";
import { defineRule, type Finding } from "./types";

/** No host system folder (`/`, `/etc`, `/proc`, `/sys`, `/var/lib/docker`, ...) or a folder containing one is mounted. */
export const disallowSensitiveHostMounts = defineRule({
  id: "sandbox-disallow-sensitive-host-mounts",
  description:
    "No container mounts a sensitive host folder (/, /boot, /dev, /etc, /lib, /proc, /sys, /usr, runtime state) or a folder that contains one.",
  mission: false,
  enforcementLevel: "mandatory",
  severity: "critical",
  crosswalk: {
    cis: ["5.6"],
    psa: ["hostPathVolumes"],
    kyverno: ["disallow-host-path"],
    kubeLinter: ["sensitive-host-mounts"],
    kubesec: ["ProcMount"],
  },
  subjects: ["workload"],
  defaults: {},
  remediationSteps: "Remove the mount; give the task only its job folder.",
  check(s) {
    if (s.subject !== "workload") return [];
    const out: Finding[] = [];
    const judge = (m: MountView, who: string) => {
      if (isUnknown(m.source)) {
        out.push(unchecked(`the host path mounted by ${who}`, m.path, m.source));
        return;
      }
      if (m.source === undefined) return;
      const reason = sensitiveHostPathReason(m.source);
      if (reason !== undefined) out.push(violation(`${who} mounts host path ${m.source}: ${reason}`, m.path));
    };
    for (const c of s.containers) for (const m of hostMounts(c.mounts)) judge(m, label(c));
    for (const m of s.unmountedHostVolumes) judge(m, `pod volume "${m.volume ?? "?"}"`);
    return out;
  },
});
