import { isUnknown, UNKNOWN } from "../workload";
import { label, unchecked, violation } from "./helpers";
import { defineRule, type Finding } from "./types";

/**
 * Mission rule: a task is reachable from nowhere. Catches Docker `ports`, `publishAllPorts` and `networkMode: host`,
 * Kubernetes `hostPort` and `hostNetwork`, Services of type NodePort/LoadBalancer or with `externalIPs`, and any
 * Ingress (or Gateway API entry point).
 */
export const disallowExposedPorts = defineRule({
  id: "sandbox-disallow-exposed-ports",
  description:
    "Tasks publish no ports: no host ports, no host network, no NodePort/LoadBalancer/externalIPs Service, no Ingress.",
  mission: true,
  enforcementLevel: "mandatory",
  severity: "critical",
  crosswalk: {
    cis: ["5.8", "5.9", "5.14"],
    psa: ["hostPorts", "hostNamespaces"],
    kyverno: [
      "disallow-host-ports",
      "restrict-node-port",
      "restrict-loadbalancer",
      "restrict-service-external-ips",
    ],
    checkov: ["CKV_K8S_26", "CKV_DOCKER_1"],
    kubeLinter: ["host-network", "privileged-ports", "exposed-services"],
  },
  subjects: ["workload", "service", "ingress"],
  defaults: {},
  remediationSteps:
    "Remove `ports`/`publishAllPorts`/`hostPort`/`hostNetwork`; use a ClusterIP Service (or none) and no Ingress. A task talks out through the project's proxy, nothing talks in.",
  check(s) {
    const out: Finding[] = [];
    if (s.subject === "ingress") {
      const where = s.hosts.length > 0 ? ` (${s.hosts.join(", ")})` : "";
      out.push(
        violation(
          `${s.origin.kind} "${s.origin.name}" lets traffic in from outside the cluster${where}`,
          s.path,
        ),
      );
      return out;
    }
    if (s.subject === "service") {
      const t = s.serviceType;
      const typePath = s.typePath ?? "spec.type";
      if (isUnknown(t)) out.push(unchecked("the Service type", typePath, t));
      else if (typeof t === "string") {
        const v = t.trim().toLowerCase();
        const closed = s.closedTypes;
        const open =
          closed === undefined
            ? ["nodeport", "loadbalancer"].includes(v)
            : !closed.some((c) => c.toLowerCase() === v);
        if (open)
          out.push(
            violation(
              closed === undefined
                ? `Service "${s.origin.name}" has type ${t.trim()}, which opens a port outside the cluster`
                : `${s.origin.kind} "${s.origin.name}" sets ${typePath} to ${JSON.stringify(t)}, which opens it outside the cluster (only ${closed.join(", ")} keep it inside; a value that cannot be read counts as open)`,
              typePath,
            ),
          );
      }
      const ips = s.externalIPs;
      const ipsPath = s.externalIPsPath ?? "spec.externalIPs";
      if (isUnknown(ips)) out.push(unchecked("externalIPs", ipsPath, ips));
      else if (ips !== undefined && ips.length > 0) {
        const shown = ips.filter((x): x is string => typeof x === "string");
        out.push(
          violation(`${s.origin.kind} "${s.origin.name}" sets externalIPs [${shown.join(", ")}]`, ipsPath),
        );
      }
      return out;
    }
    if (s.subject !== "workload") return out;
    const w = s;
    if (w.namespaces.hostNetwork === true) {
      const how = w.origin.backend === "kubernetes" ? "hostNetwork: true" : "networkMode host";
      out.push(
        violation(
          `the workload uses the host's network (${how}): every port it opens is on the host`,
          w.origin.backend === "kubernetes" ? `${w.podPath}.hostNetwork` : "networkMode",
        ),
      );
    } else if (isUnknown(w.namespaces.hostNetwork))
      out.push(unchecked("the network mode", undefined, w.namespaces.hostNetwork));
    for (const n of w.hostLanNetworks ?? [])
      out.push(
        violation(
          `the workload is on ${n.driver} network "${n.name}": it gets an address of its own on the host's network, reachable from outside`,
          n.path,
        ),
      );
    for (const n of w.secondaryNetworks ?? []) {
      const what =
        n.kind === "default"
          ? `its default network replaced by "${n.name}" (v1.multus-cni.io/default-network), a network the rules cannot read`
          : `an interface on secondary network "${n.name}" (k8s.v1.cni.cncf.io/networks), outside the pod network, its NetworkPolicies and the proxy; a macvlan, ipvlan, host-device, SR-IOV or bridge attachment is on the host's own network`;
      if (n.unknown) out.push(unchecked(`the pod's Multus networks`, n.path, UNKNOWN));
      else out.push(violation(`the pod gets ${what}`, n.path));
    }
    if (w.publishAllPorts === true)
      out.push(
        violation("publishAllPorts publishes every exposed port of the image on the host", "publishAllPorts"),
      );
    else if (isUnknown(w.publishAllPorts))
      out.push(unchecked("publishAllPorts", "publishAllPorts", w.publishAllPorts));
    for (const c of w.containers) {
      if (c.portsUnknown) out.push(unchecked(`the ports of ${label(c)}`, c.path));
      for (const p of c.ports) {
        if (isUnknown(p.published) || isUnknown(p.hostPort)) {
          out.push(unchecked(`a host port of ${label(c)}`, p.path, p.published, p.hostPort));
          continue;
        }
        if (p.published !== true) continue;
        const cp = typeof p.containerPort === "number" ? `port ${p.containerPort}` : "a port";
        const hp =
          typeof p.hostPort === "number" && p.hostPort > 0 ? `host port ${p.hostPort}` : "a random host port";
        const ip = typeof p.hostIp === "string" && p.hostIp !== "" ? ` on ${p.hostIp}` : "";
        out.push(violation(`${label(c)} publishes ${cp} on ${hp}${ip}`, p.path));
      }
    }
    return out;
  },
});
