/**
 * The project's NetworkPolicies: default deny for every pod, per proxy-mode template a way to its proxy port and
 * nothing else, and the proxy's own policy (in from proxy-mode pods, out to DNS and the outside minus the refused
 * ranges).
 */
import {
  allowEntry,
  type BrokerListener,
  type BrokerSpec,
  DEFAULT_PORTS,
  LABELS,
  type ProxyListener,
  type ProxySpec,
  parseUpstream,
  REFUSED_DESTINATIONS,
} from "../model";
import { brokerSelector } from "./broker";
import { EGRESS_LABEL } from "./pod";
import { proxySelector } from "./proxy";

/** Default deny: every pod of the namespace, no ingress and no egress at all. */
export function defaultDenySpec() {
  return { podSelector: {}, policyTypes: ["Ingress", "Egress"], ingress: [], egress: [] };
}

/**
 * Proxy mode: a template's pods (labelled `sandbox.egress=proxy` and with the template's name) may reach the proxy's
 * pods on that template's port, and nothing else: no DNS, no API server, no metadata, no other pod.
 */
export function proxyEgressSpec(listener: ProxyListener) {
  return {
    podSelector: { matchLabels: { [EGRESS_LABEL]: "proxy", [LABELS.template]: listener.template } },
    policyTypes: ["Egress"],
    egress: [
      {
        to: [{ podSelector: { matchLabels: { [LABELS.role]: "proxy" } } }],
        ports: [{ protocol: "TCP", port: listener.port }],
      },
    ],
  };
}

/** Every port an allowlist entry of the proxy may be reached on outside: 80 and 443, plus entries' own ports. */
export function proxyUpstreamPorts(proxy: ProxySpec): number[] {
  const ports = new Set<number>([DEFAULT_PORTS.http, DEFAULT_PORTS.tls]);
  for (const l of proxy.listeners)
    for (const e of l.allow) {
      const { port } = allowEntry(e);
      if (port !== undefined) ports.add(port);
    }
  return [...ports].sort((a, b) => a - b);
}

/**
 * The proxy's own policy: in, only proxy-mode task pods on the listener ports; out, the cluster's DNS (to resolve
 * allowed names) and any address outside the refused ranges on the allowed ports. The refused ranges are also refused
 * by the proxy itself after resolution; the policy is the second wall.
 */
export function proxyNetworkPolicySpec(proxy: ProxySpec) {
  return {
    podSelector: { matchLabels: proxySelector(proxy.project) },
    policyTypes: ["Ingress", "Egress"],
    ingress: [
      {
        from: [{ podSelector: { matchLabels: { [EGRESS_LABEL]: "proxy" } } }],
        ports: proxy.listeners.map((l) => ({ protocol: "TCP", port: l.port })),
      },
    ],
    egress: outsideEgress(proxyUpstreamPorts(proxy)),
  };
}

/** Out to the cluster's DNS, and to any address outside the refused ranges on `ports`. */
function outsideEgress(ports: readonly number[]) {
  const v4 = REFUSED_DESTINATIONS.filter((c) => !c.includes(":"));
  const v6 = REFUSED_DESTINATIONS.filter((c) => c.includes(":")).map((c) =>
    c.includes("/") ? c : `${c}/128`,
  );
  return [
    {
      to: [
        {
          namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "kube-system" } },
          podSelector: { matchLabels: { "k8s-app": "kube-dns" } },
        },
      ],
      ports: [
        { protocol: "UDP", port: 53 },
        { protocol: "TCP", port: 53 },
      ],
    },
    {
      to: [{ ipBlock: { cidr: "0.0.0.0/0", except: v4 } }, { ipBlock: { cidr: "::/0", except: v6 } }],
      ports: ports.map((port) => ({ protocol: "TCP", port })),
    },
  ];
}

/**
 * Broker routes: a template's pods (by the template's name) may reach the broker's pods on that template's port.
 * NetworkPolicies add up: a proxy-mode template also keeps its way to the proxy, and nothing else is opened.
 */
export function brokerEgressSpec(listener: BrokerListener) {
  return {
    podSelector: { matchLabels: { [LABELS.template]: listener.template } },
    policyTypes: ["Egress"],
    egress: [
      {
        to: [{ podSelector: { matchLabels: { [LABELS.role]: "broker" } } }],
        ports: [{ protocol: "TCP", port: listener.port }],
      },
    ],
  };
}

/** The ports the broker's upstreams listen on. */
export function brokerUpstreamPorts(broker: BrokerSpec): number[] {
  const used = new Set(broker.listeners.flatMap((l) => l.routes));
  const ports = new Set<number>();
  for (const [name, r] of Object.entries(broker.routes))
    if (used.has(name)) ports.add(parseUpstream(r.upstream).port);
  return [...ports].sort((a, b) => a - b);
}

/**
 * The broker's own policy: in, each template's pods on that template's port only; out, the cluster's DNS and any
 * address outside the refused ranges on its upstreams' ports. The broker refuses those ranges itself after
 * resolution; the policy is the second wall.
 */
export function brokerNetworkPolicySpec(broker: BrokerSpec) {
  return {
    podSelector: { matchLabels: brokerSelector(broker.project) },
    policyTypes: ["Ingress", "Egress"],
    ingress: broker.listeners.map((l) => ({
      from: [{ podSelector: { matchLabels: { [LABELS.template]: l.template } } }],
      ports: [{ protocol: "TCP", port: l.port }],
    })),
    egress: outsideEgress(brokerUpstreamPorts(broker)),
  };
}
