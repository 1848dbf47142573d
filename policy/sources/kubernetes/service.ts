/**
 * Kubernetes Services and entry points from outside the cluster -> exposure views. An entry point is recognized by
 * its API group and Kind, never by a bare Kind name: a `Gateway` of a group that is no ingress provider lets
 * nothing in, and a `Service` of `serving.knative.dev` is a public route (and a pod carrier), not a core Service.
 */
import { type IngressView, isUnknown, type ServiceView } from "../../workload";
import { at, field, items, num, str, strList } from "../lenient";
import { parseKubeType } from "./sites";

/**
 * Entry-point Kinds by API group, from each project's API reference:
 * Ingress (networking.k8s.io, extensions; Knative's internal `networking.internal.knative.dev` Ingress); Gateway API
 * (gateway.networking.k8s.io, ListenerSet standard there since gateway-api v1.5 apis/v1/listenerset_types.go; the
 * experimental XListenerSet/ListenerSet in gateway.networking.x-k8s.io); Istio Gateway
 * (networking.istio.io; a VirtualService only with `gateways` other than `mesh`, below); Contour HTTPProxy
 * (projectcontour.io; only a root proxy with `virtualhost` is served, below) and its older IngressRoute
 * (contour.heptio.com); Traefik IngressRoute/IngressRouteTCP/IngressRouteUDP (traefik.io, traefik.containo.us);
 * Emissary/Ambassador Mapping, TCPMapping, Host, Listener (getambassador.io); Kong TCPIngress/UDPIngress
 * (configuration.konghq.com); OpenShift Route (route.openshift.io); Knative Service, Route, DomainMapping
 * (serving.knative.dev; a Service or Route is public unless labelled `networking.knative.dev/visibility:
 * cluster-local`, the only label current Knative honours: knative.dev/docs/serving/services/private-services; a
 * DomainMapping always is); Skipper RouteGroup (zalando.org);
 * NGINX VirtualServer/TransportServer (k8s.nginx.org); APISIX ApisixRoute (apisix.apache.org).
 */
const ENTRY_POINTS: Readonly<Record<string, readonly string[]>> = {
  "networking.k8s.io": ["Ingress"],
  extensions: ["Ingress"],
  "networking.internal.knative.dev": ["Ingress"],
  "gateway.networking.k8s.io": [
    "Gateway",
    "ListenerSet",
    "HTTPRoute",
    "TLSRoute",
    "TCPRoute",
    "UDPRoute",
    "GRPCRoute",
  ],
  "gateway.networking.x-k8s.io": ["XListenerSet", "ListenerSet"],
  "networking.istio.io": ["Gateway", "VirtualService"],
  "projectcontour.io": ["HTTPProxy"],
  "contour.heptio.com": ["IngressRoute"],
  "traefik.io": ["IngressRoute", "IngressRouteTCP", "IngressRouteUDP"],
  "traefik.containo.us": ["IngressRoute", "IngressRouteTCP", "IngressRouteUDP"],
  "getambassador.io": ["Mapping", "TCPMapping", "Host", "Listener"],
  "configuration.konghq.com": ["TCPIngress", "UDPIngress"],
  "route.openshift.io": ["Route"],
  "serving.knative.dev": ["Service", "Route", "DomainMapping"],
  "zalando.org": ["RouteGroup"],
  "k8s.nginx.org": ["VirtualServer", "TransportServer"],
  "apisix.apache.org": ["ApisixRoute"],
  // Gloo Edge serves each VirtualService's domains on its gateway-proxy (a LoadBalancer by default); a Gateway
  // opens a listener there.
  "gateway.solo.io": ["VirtualService", "Gateway", "MatchableHttpGateway", "MatchableTcpGateway"],
  "voyager.appscode.com": ["Ingress"],
  "cis.f5.com": ["VirtualServer", "TransportServer", "IngressLink"],
};

export const KNATIVE_VISIBILITY = "networking.knative.dev/visibility";

/** A core Service (`v1`), the only Kind the Service rules read. */
export function isServiceType(type: string): boolean {
  const t = parseKubeType(type);
  return t !== undefined && t.kind === "Service" && t.group === "core";
}

/** True when the type is an entry point Kind of an ingress provider's group (whatever the object says). */
export function isIngressType(type: string): boolean {
  const t = parseKubeType(type);
  return (
    t !== undefined && (ENTRY_POINTS[t.group] ?? []).includes(t.kind) && Object.hasOwn(ENTRY_POINTS, t.group)
  );
}

/**
 * True when the object lets traffic in: every entry point Kind does, except an Istio VirtualService bound only to
 * the mesh, a Contour HTTPProxy that is not a root, and a Knative Service or Route labelled cluster-local. A value that
 * cannot be read counts as open.
 */
export function isEntryPoint(type: string, props: unknown): boolean {
  if (!isIngressType(type)) return false;
  const t = parseKubeType(type);
  if (t === undefined) return false;
  if (t.group === "networking.istio.io" && t.kind === "VirtualService") {
    const gateways = field(field(props, "spec"), "gateways");
    if (isUnknown(gateways)) return true;
    // Absent `gateways` means the mesh only (istio.io VirtualService reference).
    return items(gateways).some((g) => typeof g !== "string" || g.trim() !== "mesh");
  }
  if (t.group === "projectcontour.io" && t.kind === "HTTPProxy")
    return at(props, "spec.virtualhost") !== undefined;
  // A DomainMapping's ingress is always external (pkg/reconciler/domainmapping/resources/ingress.go): no label makes
  // it local.
  if (t.group === "serving.knative.dev")
    return (
      t.kind === "DomainMapping" ||
      field(at(props, "metadata.labels"), KNATIVE_VISIBILITY) !== "cluster-local"
    );
  return true;
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
  const host = (v: unknown) => {
    const h = str(v);
    if (typeof h === "string" && h !== "" && !hosts.includes(h)) hosts.push(h);
  };
  for (const r of items(field(spec, "rules"))) host(field(r, "host"));
  for (const h of items(field(spec, "hostnames"))) host(h);
  for (const h of items(field(spec, "hosts"))) host(h);
  host(field(spec, "host"));
  host(field(spec, "hostname"));
  host(field(field(spec, "virtualhost"), "fqdn"));
  for (const l of items(field(spec, "listeners"))) {
    const h = str(field(l, "hostname"));
    const port = num(field(l, "port"));
    if (typeof h === "string") host(h);
    else if (typeof port === "number") host(`port ${port}`);
    else if (isUnknown(port)) host("a listener");
  }
  const t = parseKubeType(type);
  const kind = t === undefined ? "Ingress" : t.group === "serving.knative.dev" ? `Knative ${t.kind}` : t.kind;
  return { subject: "ingress", origin: { backend: "kubernetes", type, kind, name }, hosts };
}
