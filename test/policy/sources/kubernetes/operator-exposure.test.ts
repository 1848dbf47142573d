/**
 * Exposure made by operators: service types and ingress switches of operator objects, tunnels, load-balancer
 * bindings and multi-cluster exports refuse what opens a way in, with the field's path, and pass the settings that
 * keep the service inside the cluster.
 */
import { describe, expect, it } from "vitest";
import { judge } from "../../../../policy/rules/registry";
import { EXPOSURE_KINDS } from "../../../../policy/sources/kubernetes/operator-exposure";
import { adaptResources } from "../../../../policy/sources/subject";
import { UNKNOWN } from "../../../../policy/workload";

const EXPOSED = "sandbox-disallow-exposed-ports";

/** The blocking findings of the exposure rule: `message [path]`. */
function found(type: string, props: unknown): string[] {
  return adaptResources(`kubernetes:${type}`, props, "r").flatMap((s) =>
    judge(s).flatMap(({ rule, findings }) =>
      rule.id === EXPOSED
        ? findings.filter((f) => !f.unchecked).map((f) => `${f.message} [${f.path ?? ""}]`)
        : [],
    ),
  );
}
const notes = (type: string, props: unknown) =>
  adaptResources(`kubernetes:${type}`, props, "r").flatMap((s) =>
    judge(s).flatMap(({ rule, findings }) =>
      rule.id === EXPOSED ? findings.filter((f) => f.unchecked) : [],
    ),
  );

const OPEN: readonly [string, string, unknown, string][] = [
  [
    "ray.io/v1:RayCluster",
    "NodePort head",
    { spec: { headGroupSpec: { serviceType: "NodePort" } } },
    "spec.headGroupSpec.serviceType",
  ],
  [
    "ray.io/v1:RayCluster",
    "head ingress",
    { spec: { headGroupSpec: { enableIngress: true } } },
    "spec.headGroupSpec.enableIngress",
  ],
  [
    "ray.io/v1:RayCluster",
    "placeholder type",
    { spec: { headGroupSpec: { serviceType: "{{ .Values.t }}" } } },
    "spec.headGroupSpec.serviceType",
  ],
  [
    "ray.io/v1:RayCluster",
    "head service spec",
    { spec: { headGroupSpec: { headService: { spec: { type: "LoadBalancer" } } } } },
    "spec.headGroupSpec.headService.spec.type",
  ],
  [
    "ray.io/v1:RayService",
    "serve service",
    { spec: { serveService: { spec: { type: "LoadBalancer" } } } },
    "spec.serveService.spec.type",
  ],
  [
    "ray.io/v1:RayService",
    "cluster config head",
    { spec: { rayClusterConfig: { headGroupSpec: { serviceType: "LoadBalancer" } } } },
    "spec.rayClusterConfig.headGroupSpec.serviceType",
  ],
  [
    "ray.io/v1:RayJob",
    "job cluster ingress",
    { spec: { rayClusterSpec: { headGroupSpec: { enableIngress: "{{x}}" } } } },
    "spec.rayClusterSpec.headGroupSpec.enableIngress",
  ],
  [
    "sparkoperator.k8s.io/v1beta2:SparkApplication",
    "UI NodePort",
    { spec: { sparkUIOptions: { serviceType: "NodePort" } } },
    "spec.sparkUIOptions.serviceType",
  ],
  [
    "sparkoperator.k8s.io/v1beta2:SparkApplication",
    "driver ingress",
    { spec: { driverIngressOptions: [{ servicePort: 4040, ingressURLFormat: "x.example" }] } },
    "spec.driverIngressOptions[0]",
  ],
  [
    "sparkoperator.k8s.io/v1beta2:ScheduledSparkApplication",
    "UI ingress TLS",
    { spec: { template: { sparkUIOptions: { ingressTLS: [{ hosts: ["a"] }] } } } },
    "spec.template.sparkUIOptions.ingressTLS",
  ],
  [
    "kafka.strimzi.io/v1beta2:Kafka",
    "nodeport listener",
    {
      spec: {
        kafka: {
          listeners: [
            { name: "plain", type: "internal" },
            { name: "ext", type: "nodeport" },
          ],
        },
      },
    },
    "spec.kafka.listeners[1].type",
  ],
  [
    "kafka.strimzi.io/v1beta2:Kafka",
    "route listener",
    { spec: { kafka: { listeners: [{ name: "ext", type: "route" }] } } },
    "spec.kafka.listeners[0].type",
  ],
  [
    "kafka.strimzi.io/v1beta2:Kafka",
    "ingress listener",
    { spec: { kafka: { listeners: [{ name: "ext", type: "ingress" }] } } },
    "spec.kafka.listeners[0].type",
  ],
  [
    "flink.apache.org/v1beta1:FlinkDeployment",
    "flat key",
    { spec: { flinkConfiguration: { "kubernetes.rest-service.exposed.type": "NodePort" } } },
    'spec.flinkConfiguration["kubernetes.rest-service.exposed.type"]',
  ],
  [
    "flink.apache.org/v1beta1:FlinkDeployment",
    "nested key",
    {
      spec: { flinkConfiguration: { kubernetes: { "rest-service": { exposed: { type: "LoadBalancer" } } } } },
    },
    "spec.flinkConfiguration.kubernetes.rest-service.exposed.type",
  ],
  [
    "flink.apache.org/v1beta1:FlinkDeployment",
    "ingress",
    { spec: { ingress: { template: "{{name}}.example" } } },
    "spec.ingress",
  ],
  [
    "postgresql.cnpg.io/v1:Cluster",
    "additional LB",
    {
      spec: {
        managed: {
          services: {
            additional: [
              {
                selectorType: "rw",
                serviceTemplate: { metadata: { name: "x" }, spec: { type: "LoadBalancer" } },
              },
            ],
          },
        },
      },
    },
    "spec.managed.services.additional[0].serviceTemplate.spec.type",
  ],
  [
    "postgresql.cnpg.io/v1:Pooler",
    "pooler NodePort",
    { spec: { serviceTemplate: { spec: { type: "NodePort" } } } },
    "spec.serviceTemplate.spec.type",
  ],
  [
    "acid.zalan.do/v1:postgresql",
    "master LB",
    { spec: { enableMasterLoadBalancer: true } },
    "spec.enableMasterLoadBalancer",
  ],
  [
    "acid.zalan.do/v1:postgresql",
    "replica LB",
    { spec: { enableReplicaLoadBalancer: true } },
    "spec.enableReplicaLoadBalancer",
  ],
  [
    "acid.zalan.do/v1:OperatorConfiguration",
    "config",
    { configuration: { load_balancer: { enable_master_load_balancer: true } } },
    "configuration.load_balancer.enable_master_load_balancer",
  ],
  [
    "postgres-operator.crunchydata.com/v1beta1:PostgresCluster",
    "service",
    { spec: { service: { type: "LoadBalancer" } } },
    "spec.service.type",
  ],
  [
    "psmdb.percona.com/v1:PerconaServerMongoDB",
    "replset",
    { spec: { replsets: [{ name: "rs0", expose: { enabled: true, type: "LoadBalancer" } }] } },
    "spec.replsets[0].expose.type",
  ],
  [
    "psmdb.percona.com/v1:PerconaServerMongoDB",
    "deprecated exposeType",
    {
      spec: {
        replsets: [{ name: "rs0", expose: { enabled: true, type: "ClusterIP", exposeType: "NodePort" } }],
      },
    },
    "spec.replsets[0].expose.exposeType",
  ],
  [
    "psmdb.percona.com/v1:PerconaServerMongoDB",
    "mongos",
    { spec: { sharding: { enabled: true, mongos: { expose: { type: "LoadBalancer" } } } } },
    "spec.sharding.mongos.expose.type",
  ],
  [
    "pxc.percona.com/v1:PerconaXtraDBCluster",
    "haproxy primary",
    { spec: { haproxy: { exposePrimary: { type: "LoadBalancer" } } } },
    "spec.haproxy.exposePrimary.type",
  ],
  [
    "pgv2.percona.com/v2:PerconaPGCluster",
    "expose",
    { spec: { expose: { type: "NodePort" } } },
    "spec.expose.type",
  ],
  [
    "mongodb.com/v1:MongoDB",
    "exposedExternally",
    { spec: { exposedExternally: true } },
    "spec.exposedExternally",
  ],
  ["mongodb.com/v1:MongoDB", "externalAccess", { spec: { externalAccess: {} } }, "spec.externalAccess"],
  [
    "elasticsearch.k8s.elastic.co/v1:Elasticsearch",
    "http LB",
    { spec: { http: { service: { spec: { type: "LoadBalancer" } } } } },
    "spec.http.service.spec.type",
  ],
  [
    "elasticsearch.k8s.elastic.co/v1:Elasticsearch",
    "transport NodePort",
    { spec: { transport: { service: { spec: { type: "NodePort" } } } } },
    "spec.transport.service.spec.type",
  ],
  [
    "kibana.k8s.elastic.co/v1:Kibana",
    "externalIPs",
    { spec: { http: { service: { spec: { externalIPs: ["203.0.113.9"] } } } } },
    "spec.http.service.spec.externalIPs",
  ],
  [
    "logstash.k8s.elastic.co/v1alpha1:Logstash",
    "beats LB",
    { spec: { services: [{ name: "beats", service: { spec: { type: "LoadBalancer" } } }] } },
    "spec.services[0].service.spec.type",
  ],
  [
    "opensearch.opster.io/v1:OpenSearchCluster",
    "dashboards",
    { spec: { dashboards: { enable: true, service: { type: "LoadBalancer" } } } },
    "spec.dashboards.service.type",
  ],
  [
    "networking.cfargotunnel.com/v1alpha1:TunnelBinding",
    "binding",
    { subjects: [{ name: "web" }], tunnelRef: { kind: "Tunnel", name: "t" } },
    "",
  ],
  [
    "networking.cfargotunnel.com/v1alpha2:ClusterTunnel",
    "tunnel",
    { spec: { newTunnel: { name: "t" } } },
    "",
  ],
  [
    "ngrok.k8s.ngrok.com/v1alpha1:AgentEndpoint",
    "agent endpoint",
    { spec: { url: "https://x.ngrok.app", upstream: { url: "http://web:80" } } },
    "",
  ],
  ["ngrok.com/v1:CloudEndpoint", "cloud endpoint", { spec: { url: "https://x.internal" } }, ""],
  ["ingress.k8s.ngrok.com/v1alpha1:TCPEdge", "edge", { spec: { backend: { labels: { a: "b" } } } }, ""],
  [
    "tailscale.com/v1alpha1:Connector",
    "subnet router",
    { spec: { subnetRouter: { advertiseRoutes: ["10.0.0.0/8"] } } },
    "",
  ],
  ["tailscale.com/v1alpha1:ProxyGroup", "ingress proxies", { spec: { type: "ingress" } }, "spec.type"],
  [
    "tailscale.com/v1alpha1:ProxyGroup",
    "kube-apiserver proxies",
    { spec: { type: "kube-apiserver" } },
    "spec.type",
  ],
  ["tailscale.com/v1alpha1:Recorder", "UI", { spec: { enableUI: true } }, "spec.enableUI"],
  [
    "elbv2.k8s.aws/v1beta1:TargetGroupBinding",
    "binding",
    { spec: { serviceRef: { name: "web", port: 80 }, targetGroupARN: "arn" } },
    "",
  ],
  ["multicluster.x-k8s.io/v1alpha1:ServiceExport", "MCS export", { metadata: { name: "web" } }, ""],
  ["networking.gke.io/v1:MultiClusterIngress", "GKE MCI", { spec: { template: { spec: {} } } }, ""],
  ["net.gke.io/v1:ServiceExport", "GKE export", {}, ""],
  [
    "gateway.networking.k8s.io/v1:ListenerSet",
    "ListenerSet",
    { spec: { parentRef: { name: "gw" }, listeners: [{ name: "a", port: 8080, protocol: "HTTP" }] } },
    "",
  ],
  [
    "core/v1:Service",
    "tailscale expose",
    { metadata: { annotations: { "tailscale.com/expose": "true" } }, spec: { type: "ClusterIP" } },
    'metadata.annotations["tailscale.com/expose"]',
  ],
  [
    "core/v1:Service",
    "linkerd export",
    { metadata: { labels: { "mirror.linkerd.io/exported": "remote-discovery" } }, spec: {} },
    'metadata.labels["mirror.linkerd.io/exported"]',
  ],
  [
    "core/v1:Service",
    "cilium global",
    { metadata: { annotations: { "service.cilium.io/global": "true" } }, spec: {} },
    'metadata.annotations["service.cilium.io/global"]',
  ],
];

const CLOSED: readonly [string, string, unknown][] = [
  ["ray.io/v1:RayCluster", "defaults", { spec: { headGroupSpec: { rayStartParams: {} } } }],
  [
    "ray.io/v1:RayCluster",
    "ClusterIP, ingress off",
    { spec: { headGroupSpec: { serviceType: "ClusterIP", enableIngress: false } } },
  ],
  [
    "ray.io/v1:RayService",
    "ClusterIP serve service",
    { spec: { serveService: { spec: { type: "ClusterIP" } } } },
  ],
  [
    "sparkoperator.k8s.io/v1beta2:SparkApplication",
    "UI ClusterIP",
    { spec: { sparkUIOptions: { serviceType: "ClusterIP" } } },
  ],
  [
    "kafka.strimzi.io/v1beta2:Kafka",
    "internal listeners",
    {
      spec: {
        kafka: {
          listeners: [
            { name: "p", type: "internal" },
            { name: "c", type: "cluster-ip" },
          ],
        },
      },
    },
  ],
  [
    "flink.apache.org/v1beta1:FlinkDeployment",
    "headless",
    { spec: { flinkConfiguration: { "kubernetes.rest-service.exposed.type": "Headless_ClusterIP" } } },
  ],
  [
    "flink.apache.org/v1beta1:FlinkDeployment",
    "default",
    { spec: { flinkConfiguration: { "taskmanager.numberOfTaskSlots": "2" } } },
  ],
  [
    "postgresql.cnpg.io/v1:Cluster",
    "ClusterIP additional",
    {
      spec: {
        managed: {
          services: { additional: [{ selectorType: "rw", serviceTemplate: { metadata: { name: "x" } } }] },
        },
      },
    },
  ],
  [
    "acid.zalan.do/v1:postgresql",
    "load balancers off",
    { spec: { enableMasterLoadBalancer: false, numberOfInstances: 2 } },
  ],
  [
    "psmdb.percona.com/v1:PerconaServerMongoDB",
    "replset not exposed",
    { spec: { replsets: [{ name: "rs0", expose: { type: "LoadBalancer" } }] } },
  ],
  [
    "psmdb.percona.com/v1:PerconaServerMongoDB",
    "replset disabled",
    { spec: { replsets: [{ name: "rs0", expose: { enabled: false, type: "NodePort" } }] } },
  ],
  [
    "elasticsearch.k8s.elastic.co/v1:Elasticsearch",
    "ClusterIP http",
    { spec: { http: { service: { spec: { type: "ClusterIP" } } } } },
  ],
  [
    "opensearch.opster.io/v1:OpenSearchCluster",
    "dashboards off",
    { spec: { dashboards: { enable: false, service: { type: "LoadBalancer" } } } },
  ],
  ["tailscale.com/v1alpha1:ProxyGroup", "egress proxies", { spec: { type: "egress" } }],
  ["tailscale.com/v1alpha1:ProxyClass", "proxy class", { spec: {} }],
  ["tailscale.com/v1alpha1:Recorder", "no UI", { spec: { enableUI: false } }],
  ["ngrok.k8s.ngrok.com/v1alpha1:KubernetesOperator", "operator", { spec: {} }],
  ["ingress.k8s.ngrok.com/v1alpha1:Domain", "domain", { spec: { domain: "x.ngrok.app" } }],
  ["multicluster.x-k8s.io/v1alpha1:ServiceImport", "import", { spec: { type: "ClusterSetIP" } }],
  [
    "core/v1:Service",
    "tailscale expose false",
    { metadata: { annotations: { "tailscale.com/expose": "false" } }, spec: {} },
  ],
];

describe("operator exposure", () => {
  it.each(OPEN)("%s (%s) is refused at its field", (type, _what, props, path) => {
    const f = found(type, props);
    expect(f.length, JSON.stringify(f)).toBeGreaterThan(0);
    expect(
      f.some((m) => m.endsWith(`[${path}]`)),
      JSON.stringify(f),
    ).toBe(true);
  });

  it.each(CLOSED)("%s (%s) keeps it inside", (type, _what, props) => {
    expect(found(type, props)).toEqual([]);
  });

  it("a preview unknown is a note, a value of the wrong shape fails closed", () => {
    expect(notes("ray.io/v1:RayCluster", { spec: { headGroupSpec: { serviceType: UNKNOWN } } })).toHaveLength(
      1,
    );
    expect(found("ray.io/v1:RayCluster", { spec: { headGroupSpec: { serviceType: UNKNOWN } } })).toEqual([]);
    expect(found("kafka.strimzi.io/v1beta2:Kafka", { spec: { kafka: { listeners: "ext" } } })).not.toEqual(
      [],
    );
    expect(found("acid.zalan.do/v1:postgresql", { spec: { enableMasterLoadBalancer: "maybe" } })).not.toEqual(
      [],
    );
    expect(found("ray.io/v1:RayCluster", { spec: { headGroupSpec: { serviceType: 3 } } })).not.toEqual([]);
  });

  it("the message names the value and what keeps it inside", () => {
    expect(
      found("kafka.strimzi.io/v1beta2:Kafka", { spec: { kafka: { listeners: [{ type: "nodeport" }] } } }),
    ).toEqual([
      'Kafka "r" sets spec.kafka.listeners[0].type to "nodeport", which opens it outside the cluster (only internal, cluster-ip keep it inside; a value that cannot be read counts as open) [spec.kafka.listeners[0].type]',
    ]);
  });

  it("the table names every kind read, by group", () => {
    expect(EXPOSURE_KINDS["gateway.networking.k8s.io"]).toBeUndefined();
    expect(EXPOSURE_KINDS["ray.io"]).toEqual(["RayCluster", "RayService", "RayJob"]);
    expect(EXPOSURE_KINDS["tailscale.com"]).toContain("Connector");
    for (const [type] of OPEN) {
      const [gv, kind] = type.split(":") as [string, string];
      const group = gv.slice(0, gv.lastIndexOf("/"));
      if (group === "core" || group === "gateway.networking.k8s.io") continue;
      expect(EXPOSURE_KINDS[group], type).toContain(kind);
    }
  });
});
