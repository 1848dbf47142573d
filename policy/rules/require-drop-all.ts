import { SEED_SIX } from "../../components/model";
import { ineffectiveNote, label, showList, unchecked, violation } from "./helpers";
import { defineRule, type Finding } from "./types";

/**
 * The drop list removes ALL capabilities, or at least the six the field guides name for an agent sandbox
 * (NET_RAW, MKNOD, SYS_CHROOT, SETFCAP, SETPCAP, NET_ADMIN) when `acceptSeedSix` is on.
 */
export const requireDropAll = defineRule({
  id: "sandbox-require-drop-all",
  description: "Every container drops ALL capabilities (or, when allowed, the six sandbox-relevant ones).",
  mission: false,
  enforcementLevel: "advisory",
  severity: "medium",
  crosswalk: {
    cis: ["5.4"],
    psa: ["capabilities_restricted"],
    kyverno: ["require-drop-all", "require-drop-cap-net-raw"],
    checkov: ["CKV_K8S_37", "CKV_K8S_28"],
    kubeLinter: ["drop-net-raw-capability"],
    kubesec: ["CapDropAll"],
  },
  subjects: ["workload"],
  configSchema: {
    properties: {
      acceptSeedSix: {
        type: "boolean",
        description:
          "Accept a drop list with NET_RAW, MKNOD, SYS_CHROOT, SETFCAP, SETPCAP and NET_ADMIN instead of ALL.",
        default: true,
      },
      exactNames: {
        type: "boolean",
        description:
          "Count only entries spelled exactly as Pod Security compares them (ALL, NET_RAW): the baseline and restricted presets set it.",
        default: false,
      },
    },
  },
  defaults: { acceptSeedSix: true, exactNames: false },
  remediationSteps:
    "Set the drop list to [ALL] (Kubernetes `capabilities.drop: [ALL]`, Docker `capabilities.drops: [ALL]`).",
  check(s, config) {
    if (s.subject !== "workload") return [];
    const out: Finding[] = [];
    for (const c of s.containers) {
      const drop = c.capabilities.dropped;
      // The verdict reads the names as configured (Pod Security's exact spelling, or the runtime's reading); what the
      // message says the container keeps is always the runtime's reading.
      const names = config.exactNames ? drop.raw : drop.caps;
      if (names.includes("ALL")) continue;
      const missing = SEED_SIX.filter((x) => !names.includes(x));
      if (config.acceptSeedSix && missing.length === 0) continue;
      if (drop.unknown) {
        out.push(unchecked(`the dropped capabilities of ${label(c)}`, c.path, c.capabilities.drop));
        continue;
      }
      const note = ineffectiveNote(drop.ineffective);
      if (config.exactNames && drop.caps.includes("ALL")) {
        // containerd's CRI plugin reads `all` in any case as ALL: nothing is kept, and only the spelling is refused.
        const spelled = drop.raw.filter((x) => x.toUpperCase() === "ALL").map((x) => JSON.stringify(x));
        out.push(
          violation(
            `${label(c)} drops ALL spelled ${spelled.join(", ")}: the container runtime reads it as ALL and keeps no capability, but exactNames compares the exact string "ALL", as Pod Security's restricted check does (which refuses such a pod); write ALL${note}`,
            c.path,
          ),
        );
        continue;
      }
      const kept = SEED_SIX.filter((x) => !drop.caps.includes(x));
      const misspelled = missing.filter((x) => !kept.includes(x));
      const tail = !config.acceptSeedSix
        ? ""
        : kept.length > 0
          ? `; it keeps ${showList(kept)}`
          : `; it drops ${showList(misspelled)} spelled otherwise than the exact upper-case names exactNames compares, as Pod Security does`;
      out.push(violation(`${label(c)} does not drop ALL capabilities${tail}${note}`, c.path));
    }
    return out;
  },
});
