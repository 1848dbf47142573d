/** Kubernetes Services, Ingresses and Gateway API entry points -> exposure views. */
import { type IngressView, isUnknown, type ServiceView } from "../workload";
import { parseKubeType } from "./kubernetes";
import { field, items, num, str, strList } from "./read";

/** Kinds that let traffic in from outside the cluster whatever their spec says. */
const INGRESS_KINDS = new Set([
  "Ingress",
  "Gateway",
  "HTTPRoute",
  "TLSRoute",
  "TCPRoute",
  "UDPRoute",
  "GRPCRoute",
]);

export function isServiceType(type: string): boolean {
  return parseKubeType(type)?.kind === "Service";
}

export function isIngressType(type: string): boolean {
  const t = parseKubeType(type);
  if (t === undefined) return false;
  // Gateway API routes only matter in their own group; `Ingress` is judged in any group (extensions, networking).
  return (
    t.kind === "Ingress" || (INGRESS_KINDS.has(t.kind) && t.group.startsWith("gateway.networking.k8s.io"))
  );
}

export function adaptService(type: string, props: unknown, name: string): ServiceView {
  const spec = field(props, "spec");
  return {
    subject: "service",
    origin: { backend: "kubernetes", type, kind: "Service", name },
    serviceType: str(field(spec, "type")),
    externalIPs: strList(field(spec, "externalIPs")),
    nodePorts: items(field(spec, "ports")).map((p) => num(field(p, "nodePort"))),
  };
}

export function adaptIngress(type: string, props: unknown, name: string): IngressView {
  const spec = field(props, "spec");
  const hosts: string[] = [];
  for (const r of items(field(spec, "rules"))) {
    const h = str(field(r, "host"));
    if (typeof h === "string") hosts.push(h);
  }
  for (const h of items(field(spec, "hostnames"))) if (typeof h === "string") hosts.push(h);
  for (const l of items(field(spec, "listeners"))) {
    const h = str(field(l, "hostname"));
    const port = num(field(l, "port"));
    if (typeof h === "string") hosts.push(h);
    else if (typeof port === "number") hosts.push(`port ${port}`);
    else if (isUnknown(port)) hosts.push("a listener");
  }
  return {
    subject: "ingress",
    origin: { backend: "kubernetes", type, kind: parseKubeType(type)?.kind ?? "Ingress", name },
    hosts,
  };
}
