/**
 * Exposure made by workload operators: the service types and ingress switches of compute, streaming, database and
 * search operators' objects, which make the operator create a NodePort or LoadBalancer Service, an Ingress or a
 * Route for the pods it runs. Each setting is read where the operator's API types write it, with the operator's
 * default when absent; a value that cannot be read (a placeholder, the wrong shape) counts as open. Tunnels, cloud
 * load-balancer bindings and multi-cluster exports are in tunnel-exposure.ts.
 */
import type { IngressView, ServiceView } from "../../workload";
import { at, isObj, join, list } from "../lenient";
import { ExposureReader } from "./exposure-read";
import { parseKubeType } from "./sites";
import { serviceExports, TUNNEL_KINDS, tunnelExposure } from "./tunnel-exposure";

/**
 * Operator kinds whose exposure settings are read here, by API group, each from the operator's own API package:
 * KubeRay v1.4 (ray-operator/apis/ray/v1: HeadGroupSpec `serviceType`, `headService`, `enableIngress`; RayService
 * `serveService`); Kubeflow Spark operator v2 (api/v1beta2: `sparkUIOptions.serviceType`, `ingressAnnotations`,
 * `ingressTLS`; `driverIngressOptions[]`); Strimzi 0.4x (Kafka `spec.kafka.listeners[].type`: internal, cluster-ip,
 * route, loadbalancer, nodeport, ingress); Flink Kubernetes operator 1.1x (FlinkDeployment `spec.ingress`, and
 * `kubernetes.rest-service.exposed.type` in `flinkConfiguration`, flat or nested; ClusterIP by default since Flink
 * 1.13); CloudNativePG 1.2x (api/v1: Cluster `spec.managed.services.additional[].serviceTemplate.spec`, Pooler
 * `spec.serviceTemplate.spec`); Zalando postgres-operator 1.1x (acid.zalan.do postgresql `enable*LoadBalancer`,
 * deprecated `useLoadBalancer`/`replicaLoadBalancer`; OperatorConfiguration `configuration.load_balancer`); Crunchy
 * PGO v5 (PostgresCluster `spec.service`, `replicaService`, `proxy.pgBouncer.service`,
 * `userInterface.pgAdmin.service`); Percona operators (psmdb v1.22 pkg/apis/psmdb/v1: replsets' and the config
 * server's `expose` with `enabled`, mongos' `expose`, `type` or the deprecated `exposeType` that overrides it;
 * pxc, pgv2, ps: every `expose*` object's `type`); MongoDB Enterprise/Kubernetes operator (mongodb.com MongoDB
 * `spec.exposedExternally`, `spec.externalAccess`; MongoDBOpsManager `spec.externalConnectivity`); ECK 3.x
 * (`spec.http.service.spec` of Elasticsearch, Kibana, APM Server, Enterprise Search, Agent, Maps, Package Registry;
 * Elasticsearch `spec.transport.service.spec`; Logstash `spec.services[].service.spec`); OpenSearch operator
 * 2.x/3.x (opensearch.opster.io and opensearch.org OpenSearchCluster `spec.dashboards.service.type` when
 * `spec.dashboards.enable`).
 */
export const OPERATOR_EXPOSURE_KINDS: Readonly<Record<string, readonly string[]>> = {
  "ray.io": ["RayCluster", "RayService", "RayJob"],
  "sparkoperator.k8s.io": ["SparkApplication", "ScheduledSparkApplication"],
  "kafka.strimzi.io": ["Kafka"],
  "flink.apache.org": ["FlinkDeployment"],
  "postgresql.cnpg.io": ["Cluster", "Pooler"],
  "acid.zalan.do": ["postgresql", "OperatorConfiguration"],
  "postgres-operator.crunchydata.com": ["PostgresCluster"],
  "psmdb.percona.com": ["PerconaServerMongoDB"],
  "pxc.percona.com": ["PerconaXtraDBCluster"],
  "pgv2.percona.com": ["PerconaPGCluster"],
  "ps.percona.com": ["PerconaServerMySQL"],
  "mongodb.com": ["MongoDB", "MongoDBMultiCluster", "MongoDBOpsManager"],
  "elasticsearch.k8s.elastic.co": ["Elasticsearch"],
  "kibana.k8s.elastic.co": ["Kibana"],
  "apm.k8s.elastic.co": ["ApmServer"],
  "enterprisesearch.k8s.elastic.co": ["EnterpriseSearch"],
  "agent.k8s.elastic.co": ["Agent"],
  "maps.k8s.elastic.co": ["ElasticMapsServer"],
  "packageregistry.k8s.elastic.co": ["PackageRegistry"],
  "logstash.k8s.elastic.co": ["Logstash"],
  "opensearch.opster.io": ["OpenSearchCluster"],
  "opensearch.org": ["OpenSearchCluster"],
};

/** Every (group, kind) whose exposure is read: the operators above and the tunnel-exposure.ts kinds. */
export const EXPOSURE_KINDS: Readonly<Record<string, readonly string[]>> = (() => {
  const out: Record<string, string[]> = {};
  for (const table of [OPERATOR_EXPOSURE_KINDS, TUNNEL_KINDS])
    for (const [g, kinds] of Object.entries(table)) out[g] = [...(out[g] ?? []), ...kinds];
  return out;
})();

/** The head group of a Ray cluster spec at `base`: its Service's type, its own Service spec, its Ingress switch. */
function rayHead(r: ExposureReader, base: string): void {
  const head = join(base, "headGroupSpec");
  r.serviceType(join(head, "serviceType"), "ClusterIP");
  if (at(r.props, join(head, "headService")) !== undefined) r.serviceSpec(join(head, "headService.spec"));
  r.flag(join(head, "enableIngress"), "the operator creates an Ingress for the Ray head");
}

function spark(r: ExposureReader, spec: string): void {
  const ui = join(spec, "sparkUIOptions");
  r.serviceType(join(ui, "serviceType"), "ClusterIP");
  r.present(join(ui, "ingressAnnotations"), "the Spark UI's Ingress");
  r.present(join(ui, "ingressTLS"), "the Spark UI's Ingress");
  eachOf(r, join(spec, "driverIngressOptions"), (p) => {
    r.entry(`${p}: an Ingress for a driver port`, p);
    r.serviceType(join(p, "serviceType"), "ClusterIP");
  });
}

/** Each entry of a list at `path` (its path), a list that cannot be read counting as open. */
function eachOf(r: ExposureReader, path: string, each: (p: string) => void): void {
  const l = list(at(r.props, path));
  if (l === undefined) return;
  if (!Array.isArray(l)) {
    if (typeof l === "symbol") r.unknown(path);
    else r.entry(`${path} cannot be read`, path, l);
    return;
  }
  l.forEach((_, i) => {
    each(join(path, i));
  });
}

/** Flink's `kubernetes.rest-service.exposed.type`: a flat key, or the nested form of Flink 2's config.yaml. */
function flink(r: ExposureReader): void {
  const conf = at(r.props, "spec.flinkConfiguration");
  const key = "kubernetes.rest-service.exposed.type";
  const flat = isObj(conf) && Object.hasOwn(conf, key);
  const path = flat ? `spec.flinkConfiguration["${key}"]` : `spec.flinkConfiguration.${key}`;
  const v = flat ? (conf as Record<string, unknown>)[key] : at(conf, key);
  const probe = new ExposureReader(r.type, r.kind, r.name, { v });
  probe.serviceType("v", "ClusterIP", ["ClusterIP", "Headless_ClusterIP"]);
  for (const view of probe.out) r.out.push({ ...view, typePath: path } as ServiceView);
  r.present("spec.ingress", "the operator creates an Ingress for the Flink UI");
}

/** Percona objects: every `expose*` object under `spec`; `togglable` ones open only when `enabled`. */
function percona(r: ExposureReader, v: unknown, path: string, depth = 0): void {
  if (depth > 6 || !isObj(v)) return;
  for (const [k, x] of Object.entries(v)) {
    const p = join(path, k);
    if (Array.isArray(x))
      x.forEach((e, i) => {
        percona(r, e, join(p, i), depth + 1);
      });
    else if (/^expose/.test(k) && isObj(x)) {
      const enabled = x.enabled;
      // psmdb's replica sets default `enabled` to false: no Service of their own then (psmdb_types.go).
      const togglable = r.type.includes("psmdb.percona.com") && k === "expose" && !/mongos$/.test(path);
      if (enabled === false || (togglable && enabled === undefined)) continue;
      if (enabled !== undefined && enabled !== true) r.flag(join(p, "enabled"), "an exposed Service");
      // The deprecated `exposeType` overrides `type` where it is set (psmdb_defaults.go).
      if (x.exposeType !== undefined) r.serviceType(join(p, "exposeType"), "ClusterIP");
      else r.serviceType(join(p, "type"), "ClusterIP");
    } else percona(r, x, p, depth + 1);
  }
}

function readOperator(r: ExposureReader, group: string, kind: string): void {
  const p = r.props;
  switch (group) {
    case "ray.io":
      if (kind === "RayCluster") rayHead(r, "spec");
      if (kind === "RayService") {
        rayHead(r, "spec.rayClusterConfig");
        if (at(p, "spec.serveService") !== undefined) r.serviceSpec("spec.serveService.spec");
      }
      if (kind === "RayJob") rayHead(r, "spec.rayClusterSpec");
      return;
    case "sparkoperator.k8s.io":
      spark(r, kind === "ScheduledSparkApplication" ? "spec.template" : "spec");
      return;
    case "kafka.strimzi.io":
      eachOf(r, "spec.kafka.listeners", (l) =>
        r.serviceType(join(l, "type"), "", ["internal", "cluster-ip"]),
      );
      return;
    case "flink.apache.org":
      flink(r);
      return;
    case "postgresql.cnpg.io":
      if (kind === "Pooler") {
        if (at(p, "spec.serviceTemplate") !== undefined) r.serviceSpec("spec.serviceTemplate.spec");
      } else
        eachOf(r, "spec.managed.services.additional", (s) => r.serviceSpec(join(s, "serviceTemplate.spec")));
      return;
    case "acid.zalan.do": {
      const base = kind === "OperatorConfiguration" ? "configuration.load_balancer" : "spec";
      const keys =
        kind === "OperatorConfiguration"
          ? [
              "enable_master_load_balancer",
              "enable_replica_load_balancer",
              "enable_master_pooler_load_balancer",
              "enable_replica_pooler_load_balancer",
            ]
          : [
              "enableMasterLoadBalancer",
              "enableReplicaLoadBalancer",
              "enableMasterPoolerLoadBalancer",
              "enableReplicaPoolerLoadBalancer",
              "useLoadBalancer",
              "replicaLoadBalancer",
            ];
      for (const k of keys) r.flag(join(base, k), "a LoadBalancer Service");
      return;
    }
    case "postgres-operator.crunchydata.com":
      for (const s of [
        "service",
        "replicaService",
        "proxy.pgBouncer.service",
        "userInterface.pgAdmin.service",
      ])
        r.serviceType(join(join("spec", s), "type"), "ClusterIP");
      return;
    case "psmdb.percona.com":
    case "pxc.percona.com":
    case "pgv2.percona.com":
    case "ps.percona.com":
      percona(r, at(p, "spec"), "spec");
      return;
    case "mongodb.com":
      if (kind === "MongoDBOpsManager") r.serviceType("spec.externalConnectivity.type", "ClusterIP");
      else {
        r.flag("spec.exposedExternally", "a NodePort Service for each member");
        r.present("spec.externalAccess", "a Service outside the cluster for each member");
      }
      return;
    case "logstash.k8s.elastic.co":
      eachOf(r, "spec.services", (s) => r.serviceSpec(join(s, "service.spec")));
      return;
    case "opensearch.opster.io":
    case "opensearch.org":
      if (at(p, "spec.dashboards.enable") !== false && at(p, "spec.dashboards.enable") !== undefined)
        r.serviceType("spec.dashboards.service.type", "ClusterIP");
      return;
    default:
      // Every other ECK kind serves HTTP through `spec.http.service`; Elasticsearch also its transport Service.
      r.serviceSpec("spec.http.service.spec");
      if (kind === "Elasticsearch") r.serviceSpec("spec.transport.service.spec");
  }
}

/**
 * The exposure views of an operator, tunnel, load-balancer binding or multi-cluster object (and of a core Service's
 * tunnel and export annotations); undefined for a kind none of the tables name.
 */
export function adaptOperatorExposure(
  type: string,
  props: unknown,
  name: string,
): (ServiceView | IngressView)[] | undefined {
  const t = parseKubeType(type);
  if (t === undefined) return undefined;
  if (t.group === "core" && t.kind === "Service") return serviceExports(type, props, name);
  const read = (table: Readonly<Record<string, readonly string[]>>) =>
    Object.hasOwn(table, t.group) && (table[t.group] ?? []).includes(t.kind);
  const r = new ExposureReader(type, t.kind, name, props);
  if (read(OPERATOR_EXPOSURE_KINDS)) readOperator(r, t.group, t.kind);
  else if (read(TUNNEL_KINDS)) tunnelExposure(r, t.group, t.kind);
  else return undefined;
  return r.out;
}
