import { isUnknown } from "../workload";
import { label, unchecked, violation } from "./helpers";
import { defineRule, type Finding } from "./types";

/**
 * No probe or lifecycle handler names a `host`. The kubelet runs `httpGet` and `tcpSocket` probes and hooks from
 * the node's own network, so a `host` makes the node connect to any address the manifest names (the cloud's
 * metadata service, the API server, the node's own ports) past the pod's NetworkPolicy and the proxy-only egress.
 * Pod Security baseline (`hostProbesAndHostLifecycle`, k8s 1.34+) refuses any non-empty host; so does this rule, in
 * every container list.
 */
export const disallowHostProbes = defineRule({
  id: "sandbox-disallow-host-probes",
  description:
    "No probe or lifecycle handler names a host, which the kubelet would connect to from the node's network.",
  mission: false,
  enforcementLevel: "mandatory",
  severity: "high",
  crosswalk: { psa: ["hostProbesAndHostLifecycle"], cwe: ["918"] },
  subjects: ["workload"],
  defaults: {},
  remediationSteps:
    "Remove `host` from the probe or hook: without it the kubelet connects to the pod's own IP address.",
  check(s) {
    if (s.subject !== "workload") return [];
    const out: Finding[] = [];
    for (const c of s.containers) {
      for (const p of c.hostProbes) {
        if (isUnknown(p.host)) out.push(unchecked(`the probe host of ${label(c)}`, p.path, p.host));
        else if (p.host !== undefined)
          out.push(
            violation(
              `${label(c)} has a probe or lifecycle handler with host ${JSON.stringify(p.host)}: the kubelet connects to it from the node's network, outside the pod's network policy`,
              p.path,
            ),
          );
      }
    }
    return out;
  },
});
