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
      if (config.exactNames ? drop.raw.includes("ALL") : drop.caps.includes("ALL")) continue;
      const missing = SEED_SIX.filter((x) => !(config.exactNames ? drop.raw : drop.caps).includes(x));
      if (config.acceptSeedSix && missing.length === 0) continue;
      if (drop.unknown) {
        out.push(unchecked(`the dropped capabilities of ${label(c)}`, c.path, c.capabilities.drop));
        continue;
      }
      const tail = config.acceptSeedSix ? `; it keeps ${showList(missing)}` : "";
      const exact =
        config.exactNames && drop.caps.includes("ALL")
          ? ` (Pod Security compares the exact string "ALL", and the list has ${showList(drop.raw.map((x) => JSON.stringify(x)))})`
          : "";
      out.push(
        violation(
          `${label(c)} does not drop ALL capabilities${exact}${tail}${ineffectiveNote(drop.ineffective)}`,
          c.path,
        ),
      );
    }
    return out;
  },
});
