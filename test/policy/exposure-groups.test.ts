/**
 * Entry points are recognized by API group and Kind: every ingress provider's kinds let traffic in, the same Kind
 * name in any other group does not; Pulumi types that deploy what the pack cannot see are unjudged, never silent.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { judge } from "../../policy/rules/registry";
import { adaptResources } from "../../policy/sources/subject";

const EXPOSED = "sandbox-disallow-exposed-ports";
const UNJUDGED = "sandbox-disallow-unjudged-workloads";

function ids(type: string, props: unknown): string[] {
  return adaptResources(type, props, "r").flatMap((s) =>
    judge(s).flatMap(({ rule, findings }) => (findings.some((f) => !f.unchecked) ? [rule.id] : [])),
  );
}

const ENTRY_POINTS: readonly [string, string, unknown][] = [
  ["networking.k8s.io/v1", "Ingress", { spec: { rules: [{ host: "a.example" }] } }],
  ["gateway.networking.k8s.io/v1", "Gateway", { spec: { gatewayClassName: "x", listeners: [{ port: 80 }] } }],
  ["gateway.networking.k8s.io/v1", "HTTPRoute", { spec: { hostnames: ["a.example"] } }],
  ["networking.istio.io/v1", "Gateway", { spec: { servers: [{ port: { number: 80 }, hosts: ["*"] }] } }],
  ["networking.istio.io/v1", "VirtualService", { spec: { gateways: ["public-gw"], hosts: ["a.example"] } }],
  ["projectcontour.io/v1", "HTTPProxy", { spec: { virtualhost: { fqdn: "a.example" } } }],
  ["traefik.io/v1alpha1", "IngressRoute", { spec: { routes: [{ match: "Host(`a`)" }] } }],
  ["traefik.containo.us/v1alpha1", "IngressRouteTCP", { spec: { routes: [] } }],
  ["getambassador.io/v3alpha1", "Mapping", { spec: { prefix: "/", service: "x" } }],
  ["getambassador.io/v3alpha1", "Host", { spec: { hostname: "a.example" } }],
  ["configuration.konghq.com/v1beta1", "TCPIngress", { spec: { rules: [] } }],
  ["route.openshift.io/v1", "Route", { spec: { host: "a.example", to: { kind: "Service", name: "x" } } }],
  ["zalando.org/v1", "RouteGroup", { spec: { hosts: ["a.example"] } }],
  ["k8s.nginx.org/v1", "VirtualServer", { spec: { host: "a.example" } }],
  ["k8s.nginx.org/v1", "TransportServer", { spec: { listener: { name: "x" } } }],
  ["apisix.apache.org/v2", "ApisixRoute", { spec: { http: [] } }],
  ["serving.knative.dev/v1", "Route", { spec: { traffic: [] } }],
];

describe("exposure kinds by group", () => {
  it.each(ENTRY_POINTS)("%s %s lets traffic in", (gv, kind, props) => {
    expect(ids(`kubernetes:${gv}:${kind}`, props)).toEqual([EXPOSED]);
  });

  it("the same Kind names in a group that is no ingress provider are not entry points (they fail closed as kinds with no verdict)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ENTRY_POINTS),
        fc.stringMatching(/^[a-z]{3,8}\.example\.(com|io)$/),
        ([, kind, props], group) => {
          expect(ids(`kubernetes:${group}/v1:${kind}`, props)).toEqual([UNJUDGED]);
        },
      ),
      { numRuns: 100 },
    );
  });

  it("an Istio VirtualService bound only to the mesh, and a non-root Contour HTTPProxy, let nothing in", () => {
    expect(ids("kubernetes:networking.istio.io/v1:VirtualService", { spec: { hosts: ["svc"] } })).toEqual([]);
    expect(ids("kubernetes:networking.istio.io/v1:VirtualService", { spec: { gateways: ["mesh"] } })).toEqual(
      [],
    );
    expect(ids("kubernetes:projectcontour.io/v1:HTTPProxy", { spec: { routes: [] } })).toEqual([]);
  });

  it("a Knative Route is public unless labelled cluster-local (the deprecated serving label is not honoured)", () => {
    const route = (labels: Record<string, string>) => ({ metadata: { labels }, spec: {} });
    const t = "kubernetes:serving.knative.dev/v1:Route";
    expect(ids(t, route({ "networking.knative.dev/visibility": "cluster-local" }))).toEqual([]);
    expect(ids(t, route({ "serving.knative.dev/visibility": "cluster-local" }))).toEqual([EXPOSED]);
    expect(ids(t, route({ "networking.knative.dev/visibility": "Cluster-Local" }))).toEqual([EXPOSED]);
  });

  it("a Service outside the core group is no core Service (its type is not read)", () => {
    const props = { spec: { type: "LoadBalancer" } };
    expect(ids("kubernetes:core/v1:Service", props)).toEqual([EXPOSED]);
    expect(ids("kubernetes:mesh.example.com/v1:Service", props)).toEqual([UNJUDGED]);
  });
});

describe("Pulumi types that deploy what the pack cannot see are unjudged", () => {
  it.each([
    "kubernetes:helm.sh/v3:Release",
    "kubernetes:helm.sh/v3:Chart",
    "kubernetes:helm.sh/v4:Chart",
    "kubernetes:yaml:ConfigGroup",
    "kubernetes:yaml:ConfigFile",
    "kubernetes:yaml/v2:ConfigGroup",
    "kubernetes:yaml/v2:ConfigFile",
    "kubernetes:kustomize:Directory",
    "kubernetes:kustomize/v2:Directory",
    "kubernetes:apps/v1:DeploymentPatch",
    "kubernetes:core/v1:PodPatch",
    "docker:index/service:Service",
  ])("%s", (type) => {
    expect(ids(type, { chart: "x" })).toEqual(["sandbox-disallow-unjudged-workloads"]);
  });

  it("plain objects that name no image are not unjudged workloads", () => {
    expect(adaptResources("kubernetes:core/v1:ConfigMap", { data: { image: "x" } }, "c")).toEqual([]);
    expect(
      adaptResources(
        "kubernetes:source.toolkit.fluxcd.io/v1:OCIRepository",
        { spec: { url: "oci://x" } },
        "c",
      ),
    ).toEqual([]);
  });
});
