import { isUnknown } from "../workload";
import { label, unchecked, violation } from "./helpers";
import { defineRule, type Finding } from "./types";

/** `/proc` keeps its masked paths: no `procMount: Unmasked`, no Docker `systempaths=unconfined`. */
export const disallowUnmaskedProc = defineRule({
  id: "sandbox-disallow-unmasked-proc",
  description:
    "No container unmasks /proc or /sys (procMount: Unmasked, systempaths=unconfined, Docker MaskedPaths/ReadonlyPaths without the defaults, writable-cgroups).",
  mission: false,
  enforcementLevel: "mandatory",
  severity: "high",
  crosswalk: { psa: ["procMount"], kyverno: ["disallow-proc-mount"], kubeLinter: ["unsafe-proc-mount"] },
  subjects: ["workload"],
  defaults: {},
  remediationSteps: "Remove `procMount` (or set it to Default) and `systempaths=unconfined`.",
  check(s) {
    if (s.subject !== "workload") return [];
    const out: Finding[] = [];
    for (const c of s.containers) {
      const p = c.procMount;
      if (isUnknown(p)) out.push(unchecked(`procMount of ${label(c)}`, c.path, p));
      else if (typeof p === "string" && p.trim() !== "" && p.trim().toLowerCase() !== "default") {
        out.push(
          violation(`${label(c)} mounts /proc ${p.trim()}: the kernel's masked paths become visible`, c.path),
        );
      }
      // Docker's own lists of masked and read-only paths, and writable cgroups, weaken the same wall.
      for (const w of c.weakenedSystemPaths ?? []) {
        if (typeof w.what === "string")
          out.push(violation(`${label(c)} unprotects kernel paths: ${w.what}`, w.path));
        else if (isUnknown(w.what)) out.push(unchecked(`${w.path} of ${label(c)}`, w.path, w.what));
      }
    }
    return out;
  },
});
