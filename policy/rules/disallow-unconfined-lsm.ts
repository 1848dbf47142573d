import { isUnknown } from "../workload";
import { label, unchecked, violation } from "./helpers";
import { defineRule, type Finding } from "./types";

/** PSA baseline's SELinux types: the ones a container runtime uses for ordinary containers. */
const PSA_SELINUX_TYPES = ["container_t", "container_init_t", "container_kvm_t", "container_engine_t"];

/**
 * AppArmor and SELinux stay on: no AppArmor `Unconfined` (field, old annotation, Docker `apparmor=unconfined`), no
 * Docker `label=disable`, no SELinux type outside the container types (`spc_t` is unconfined), no SELinux user/role.
 */
export const disallowUnconfinedLsm = defineRule({
  id: "sandbox-disallow-unconfined-lsm",
  description: "No container disables AppArmor or SELinux confinement.",
  mission: false,
  enforcementLevel: "mandatory",
  severity: "high",
  crosswalk: {
    cis: ["5.2", "5.3"],
    psa: ["appArmorProfile", "seLinuxOptions"],
    kyverno: ["restrict-apparmor-profiles", "disallow-selinux"],
    kubesec: ["ApparmorAny"],
  },
  subjects: ["workload"],
  configSchema: {
    properties: {
      allowedSeLinuxTypes: {
        type: "array",
        items: { type: "string" },
        description: "SELinux types a container may set. Defaults to the PSA baseline list.",
        default: PSA_SELINUX_TYPES,
      },
    },
  },
  defaults: { allowedSeLinuxTypes: PSA_SELINUX_TYPES },
  remediationSteps:
    "Remove `apparmor=unconfined` / `label=disable` (Docker) or the Unconfined AppArmor profile and custom SELinux options (Kubernetes).",
  check(s, config) {
    if (s.subject !== "workload") return [];
    const out: Finding[] = [];
    for (const c of s.containers) {
      if (c.appArmor === "Unconfined")
        out.push(violation(`${label(c)} runs with AppArmor disabled (${c.appArmorSource})`, c.path));
      else if (isUnknown(c.appArmor))
        out.push(unchecked(`the AppArmor profile of ${label(c)}`, c.path, c.appArmor));
      const se = c.seLinux;
      if (isUnknown(se)) {
        out.push(unchecked(`the SELinux options of ${label(c)}`, c.path, se));
        continue;
      }
      if (se === undefined) continue;
      if (se.disabled) {
        out.push(violation(`${label(c)} disables SELinux labeling (label=disable)`, c.path));
        continue;
      }
      if (
        typeof se.type === "string" &&
        se.type.trim() !== "" &&
        !config.allowedSeLinuxTypes.includes(se.type.trim())
      ) {
        out.push(
          violation(
            `${label(c)} sets SELinux type ${se.type.trim()}, which is not a confined container type`,
            c.path,
          ),
        );
      }
      for (const k of ["user", "role"] as const) {
        const v = se[k];
        if (typeof v === "string" && v.trim() !== "")
          out.push(violation(`${label(c)} sets the SELinux ${k} ${v.trim()}`, c.path));
      }
    }
    return out;
  },
});
