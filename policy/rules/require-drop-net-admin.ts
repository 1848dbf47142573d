import { canonicalCapability } from "../../components/model";
import type { ContainerView, WorkloadView } from "../workload";
import { containerFieldPath, ineffectiveNote, label, showList, unchecked, violation } from "./helpers";
import { defineRule, type Edit, type Finding } from "./types";

const DROP_FIELD = {
  docker: "capabilities.drops",
  launch: "HostConfig.CapDrop",
  kubernetes: "securityContext.capabilities.drop",
};
const ADD_FIELD = {
  docker: "capabilities.adds",
  launch: "HostConfig.CapAdd",
  kubernetes: "securityContext.capabilities.add",
};

/** What a container's capability lists say about NET_ADMIN. */
function netAdmin(c: ContainerView) {
  const drop = c.capabilities.dropped;
  const add = c.capabilities.added;
  return {
    drop,
    add,
    dropped: drop.caps.some((x) => x === "NET_ADMIN" || x === "ALL"),
    addedBack: add.raw.filter((x) => {
      const k = canonicalCapability(x);
      return k === "NET_ADMIN" || k === "ALL";
    }),
  };
}

/**
 * Mission rule: every container (init and ephemeral too) drops NET_ADMIN, by name or through ALL, in any spelling
 * the runtime honours: Docker's (`cap_net_admin`, `Net_Admin`, ` NET_ADMIN`), and on Kubernetes containerd's, where
 * only the bare name in any case counts (`net_admin`; `CAP_NET_ADMIN` and ` NET_ADMIN` drop nothing there). Adding NET_ADMIN (or ALL) back is a violation even when ALL is
 * dropped: adds win over drops in both Docker and Kubernetes.
 */
export const requireDropNetAdmin = defineRule({
  id: "sandbox-require-drop-net-admin",
  description:
    "Every container drops NET_ADMIN (or ALL) and never adds it back, so a task cannot rewrite its own network.",
  mission: true,
  enforcementLevel: "mandatory",
  severity: "critical",
  crosswalk: {
    cis: ["5.4"],
    psa: ["capabilities_restricted"],
    kyverno: ["require-drop-all", "disallow-capabilities-strict"],
    checkov: ["CKV_K8S_37"],
    kubesec: ["CapDropAll", "CapDropAny"],
  },
  subjects: ["workload"],
  defaults: {},
  remediationSteps:
    "Add NET_ADMIN (or ALL) to the container's drop list and remove NET_ADMIN from its add list.",
  check(s) {
    if (s.subject !== "workload") return [];
    const out: Finding[] = [];
    for (const c of s.containers) {
      const n = netAdmin(c);
      if (n.addedBack.length > 0) {
        out.push(
          violation(
            `${label(c)} adds ${n.addedBack.map((x) => x.trim()).join(", ")} back, which grants NET_ADMIN whatever it drops`,
            c.path,
          ),
        );
      }
      if (n.dropped) {
        if (n.add.unknown)
          out.push(unchecked(`the added capabilities of ${label(c)}`, c.path, c.capabilities.add));
        continue;
      }
      if (n.drop.unknown) {
        out.push(unchecked(`the dropped capabilities of ${label(c)}`, c.path, c.capabilities.drop));
        continue;
      }
      const shown =
        n.drop.raw.length === 0 ? "drops nothing" : `drops only ${showList(n.drop.raw.map((x) => x.trim()))}`;
      out.push(
        violation(
          `${label(c)} ${shown}; its drop list must contain NET_ADMIN or ALL${ineffectiveNote(n.drop.ineffective)}`,
          c.path,
        ),
      );
    }
    return out;
  },
  remediate(s) {
    if (s.subject !== "workload") return [];
    const w: WorkloadView = s;
    const edits: Edit[] = [];
    for (const c of w.containers) {
      const n = netAdmin(c);
      if (!n.dropped && !n.drop.unknown)
        edits.push({ op: "append", path: containerFieldPath(w, c, DROP_FIELD), value: "NET_ADMIN" });
      // Only NET_ADMIN itself is taken out of the add list; an added ALL is left for a person to decide.
      if (!n.add.unknown && n.addedBack.some((x) => canonicalCapability(x) === "NET_ADMIN")) {
        edits.push({
          op: "removeCapability",
          path: containerFieldPath(w, c, ADD_FIELD),
          capability: "NET_ADMIN",
        });
      }
    }
    return edits;
  },
});
