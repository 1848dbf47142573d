/**
 * Ways in that are not an Ingress: tunnels that carry traffic from a provider's edge to pods (Cloudflare, ngrok,
 * Tailscale), bindings of pods to a cloud load balancer made outside the cluster, and exports of a Service to other
 * clusters (the Multi-Cluster Services API and the providers' own). Each object of these kinds opens a way in, but
 * for the settings read below that keep it inside (a Tailscale egress ProxyGroup, a Recorder without its UI).
 */
import { type IngressView, type ServiceView, UNKNOWN } from "../../workload";
import { at, field, str } from "../lenient";
import type { ExposureReader } from "./exposure-read";

/**
 * Tunnel, binding and export kinds by API group, each from the project's API package:
 * - cloudflare-operator (adyanth, v0.13, api/v1alpha1 and v1alpha2, networking.cfargotunnel.com): Tunnel and
 *   ClusterTunnel run cloudflared connected to Cloudflare's edge, TunnelBinding routes public hostnames to Services.
 * - ngrok-operator (0.x and 1.x): the GA group ngrok.com (v1) and the v1alpha1 groups it replaces,
 *   ngrok.k8s.ngrok.com, ingress.k8s.ngrok.com, bindings.k8s.ngrok.com. AgentEndpoint, CloudEndpoint (a public URL
 *   or an internal one any endpoint of the account can forward to), the older HTTPSEdge, TCPEdge, TLSEdge and
 *   Tunnel, BoundEndpoint and EndpointBinding (an ngrok endpoint projected into the cluster) open a way in;
 *   Domain, IPPolicy, traffic policies, NgrokModuleSet, KubernetesOperator and BindingConfiguration open none.
 * - Tailscale operator (k8s-operator/apis/v1alpha1, tailscale.com): a Connector (subnet router, exit node or app
 *   connector) puts the cluster's network on the tailnet; a ProxyGroup of any type but `egress` serves the tailnet;
 *   a Recorder with `enableUI` serves its UI there; ProxyClass and DNSConfig open nothing. A core Service is exposed
 *   by `tailscale.com/expose` (below), and by `loadBalancerClass: tailscale` as any LoadBalancer is.
 * - AWS Load Balancer Controller v2 (elbv2.k8s.aws TargetGroupBinding: pods registered in a load balancer's target
 *   group made outside the cluster; IngressClassParams opens nothing); AWS Global Accelerator (aga.k8s.aws).
 * - Multi-cluster: `multicluster.x-k8s.io` ServiceExport (the MCS API: Submariner Lighthouse, Cilium, GKE and
 *   others; a ServiceImport consumes and opens nothing), GKE `net.gke.io` ServiceExport and `networking.gke.io`
 *   MultiClusterIngress/MultiClusterService, Azure Fleet `networking.fleet.azure.com` ServiceExport and
 *   MultiClusterService, Skupper v2 (skupper.io) Connector and RouterAccess, Consul `consul.hashicorp.com`
 *   ExportedServices and IngressGateway.
 */
export const TUNNEL_KINDS: Readonly<Record<string, readonly string[]>> = {
  "networking.cfargotunnel.com": ["Tunnel", "ClusterTunnel", "TunnelBinding"],
  "ngrok.com": [
    "AgentEndpoint",
    "CloudEndpoint",
    "BoundEndpoint",
    "PrivateEndpoint",
    "Domain",
    "IPPolicy",
    "TrafficPolicy",
    "KubernetesOperator",
  ],
  "ngrok.k8s.ngrok.com": ["AgentEndpoint", "CloudEndpoint", "NgrokTrafficPolicy", "KubernetesOperator"],
  "ingress.k8s.ngrok.com": [
    "HTTPSEdge",
    "TCPEdge",
    "TLSEdge",
    "Tunnel",
    "Domain",
    "IPPolicy",
    "NgrokModuleSet",
  ],
  "bindings.k8s.ngrok.com": ["BoundEndpoint", "EndpointBinding", "BindingConfiguration"],
  "tailscale.com": ["Connector", "ProxyGroup", "Recorder", "ProxyClass", "DNSConfig"],
  "elbv2.k8s.aws": ["TargetGroupBinding", "IngressClassParams"],
  "aga.k8s.aws": ["GlobalAccelerator"],
  "multicluster.x-k8s.io": ["ServiceExport", "ServiceImport"],
  "net.gke.io": ["ServiceExport", "ServiceImport"],
  "networking.gke.io": ["MultiClusterIngress", "MultiClusterService"],
  "networking.fleet.azure.com": ["ServiceExport", "MultiClusterService"],
  "skupper.io": ["Connector", "RouterAccess"],
  "consul.hashicorp.com": ["ExportedServices", "IngressGateway"],
  // A NetworkAttachmentDefinition attaches nothing by itself: the pods that name it are judged (multus.ts).
  "k8s.cni.cncf.io": ["NetworkAttachmentDefinition"],
};

/** Kinds of the table above that open no way in by themselves. */
const CLOSED_KINDS: ReadonlySet<string> = new Set([
  "Domain",
  "IPPolicy",
  "TrafficPolicy",
  "NgrokTrafficPolicy",
  "NgrokModuleSet",
  "KubernetesOperator",
  "BindingConfiguration",
  "ProxyClass",
  "DNSConfig",
  "IngressClassParams",
  "ServiceImport",
  "NetworkAttachmentDefinition",
]);

/** What each kind that opens a way in does, for the message. */
function whatItOpens(group: string, kind: string, props: unknown): string {
  if (group === "networking.cfargotunnel.com")
    return kind === "TunnelBinding"
      ? "routes public hostnames through a Cloudflare tunnel to its Services"
      : "runs a Cloudflare tunnel from Cloudflare's edge into the cluster";
  if (group.includes("ngrok")) {
    const url = str(at(props, "spec.url"));
    return `opens an ngrok endpoint into the cluster${typeof url === "string" && url !== "" ? ` at ${url}` : ""}`;
  }
  if (group === "tailscale.com") return "puts the cluster's network on the tailnet";
  if (group === "elbv2.k8s.aws")
    return "registers the Service's pods in a cloud load balancer's target group";
  if (group === "aga.k8s.aws") return "puts the cluster behind a Global Accelerator";
  return "exports the Service to other clusters or an outside network";
}

/** One tunnel, binding or export object: its way in, unless its kind or settings open none. */
export function tunnelExposure(r: ExposureReader, group: string, kind: string): void {
  if (CLOSED_KINDS.has(kind)) return;
  if (group === "tailscale.com" && kind === "ProxyGroup") {
    const t = str(at(r.props, "spec.type"));
    if (t === "egress") return;
    if (t === UNKNOWN) r.unknown("spec.type");
    else {
      const shown = typeof t === "string" ? JSON.stringify(t) : t === undefined ? "absent" : "unreadable";
      r.entry(`spec.type ${shown}: a proxy that serves the tailnet`, "spec.type", t);
    }
    return;
  }
  if (group === "tailscale.com" && kind === "Recorder") {
    r.flag("spec.enableUI", "the recorder's UI is served on the tailnet");
    return;
  }
  r.entry(whatItOpens(group, kind, r.props));
}

/** `tailscale.com/expose` (Tailscale operator: the annotation's value "true" exposes the Service on the tailnet). */
const TAILSCALE_EXPOSE = "tailscale.com/expose";
/** Linkerd multicluster: the label `mirror.linkerd.io/exported` ("true" or "remote-discovery") exports a Service. */
const LINKERD_EXPORTED = "mirror.linkerd.io/exported";
/** Cilium Cluster Mesh: `service.cilium.io/global: "true"` shares the Service with every cluster of the mesh. */
const CILIUM_GLOBAL = ["service.cilium.io/global", "io.cilium/global-service"];

/**
 * A core Service's annotations and labels that open it beyond the cluster through a tunnel or a mesh of clusters.
 * A value that cannot be read, or any value but "false", counts as set.
 */
export function serviceExports(type: string, props: unknown, name: string): (ServiceView | IngressView)[] {
  const out: IngressView[] = [];
  const meta = field(props, "metadata");
  const check = (where: "annotations" | "labels", key: string, what: string) => {
    const raw = field(field(meta, where), key);
    if (raw === undefined) return;
    const v = str(raw);
    if (typeof v === "string" && v.trim().toLowerCase() === "false") return;
    out.push({
      subject: "ingress",
      origin: { backend: "kubernetes", type, kind: "Service", name },
      hosts: [
        `${where} ${key}: ${typeof v === "string" ? JSON.stringify(v) : "a value that cannot be read"} ${what}`,
      ],
      path: `metadata.${where}["${key}"]`,
    });
  };
  check("annotations", TAILSCALE_EXPOSE, "exposes it on the tailnet");
  check("labels", LINKERD_EXPORTED, "exports it to the linked clusters");
  for (const k of CILIUM_GLOBAL) check("annotations", k, "shares it with every cluster of the mesh");
  return out;
}
