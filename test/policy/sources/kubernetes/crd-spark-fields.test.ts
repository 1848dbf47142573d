/**
 * Attacks on the Kubeflow Spark operator's fields (crd-verdicts/spark-operator.ts, spark-conf-keys.ts) and on the
 * pods rebuilt from them (crd-spark-kubevirt.ts), each from what the operator's source does: the webhook applies
 * the flattened pod settings only to pods without a Spark 3 template; spark-submit runs in the operator's pod;
 * Spark reads `spark.*` JVM system properties as its configuration.
 */
import { describe, expect, it } from "vitest";
import { ALL_RULES, judge } from "../../../../policy/rules/registry";
import { webhookMutates } from "../../../../policy/sources/kubernetes/crd-spark-kubevirt";
import { adaptResources } from "../../../../policy/sources/subject";
import { UNKNOWN } from "../../../../policy/workload";
import { SPARK_BY_DESIGN, sparkApp } from "./crd-hardened-spark";

const UNJUDGED = "sandbox-disallow-unjudged-fields";
const TYPE = "kubernetes:sparkoperator.k8s.io/v1beta2:SparkApplication";

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** `b` laid over `a`: objects merged key by key, anything else replaced. */
function over(a: unknown, b: unknown): unknown {
  if (!isObj(a) || !isObj(b)) return b;
  const out: Obj = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = over(a[k], v);
  return out;
}

function results(spec: unknown, metadata: object = {}, type = TYPE) {
  const props = { metadata: { name: "pi", namespace: "agents", ...metadata }, spec };
  return adaptResources(type, props, "pi").flatMap((v) => judge(v, ALL_RULES, {}));
}

/** The rules with a finding that is not by the operator's design. */
const failing = (spec: unknown, metadata?: object, type?: string): string[] => [
  ...new Set(
    results(spec, metadata, type)
      .filter(
        (r) =>
          r.findings.some((f) => !f.unchecked) &&
          !(SPARK_BY_DESIGN.SparkApplication ?? []).includes(r.rule.id),
      )
      .map((r) => r.rule.id),
  ),
];

/** Where sandbox-disallow-unjudged-fields finds something. */
const unjudged = (spec: unknown, metadata?: object): string[] =>
  results(spec, metadata)
    .filter((r) => r.rule.id === UNJUDGED)
    .flatMap((r) => r.findings.map((f) => f.path ?? ""));

const app = (fragment: object) => over(sparkApp(), fragment);

describe("the Spark operator's fields", () => {
  it("a hardened application passes", () => {
    expect(failing(sparkApp())).toEqual([]);
  });

  it.each([
    [
      "the object's own namespace moved by a Spark property",
      { sparkConf: { "spark.kubernetes.namespace": "kube-system" } },
      "spec.sparkConf.spark.kubernetes.namespace",
    ],
    [
      "an upload path for the operator's local files",
      { sparkConf: { "spark.kubernetes.file.upload.path": "s3a://x/up" } },
      "spec.sparkConf.spark.kubernetes.file.upload.path",
    ],
    [
      "a driver label set through a Spark property",
      { sparkConf: { "spark.kubernetes.driver.label.sidecar.istio.io/inject": "true" } },
      "spec.sparkConf.spark.kubernetes.driver.label.sidecar.istio.io/inject",
    ],
    ["sparkConf that is not a map", { sparkConf: "spark.master=local" }, "spec.sparkConf"],
    [
      "the operator's service-account token as the application file",
      { mainApplicationFile: "file:///var/run/secrets/kubernetes.io/serviceaccount/token" },
      "spec.mainApplicationFile",
    ],
    [
      "a scheme-less application file (uploaded from the operator's pod)",
      { mainApplicationFile: "/etc/passwd" },
      "spec.mainApplicationFile",
    ],
    [
      "an upper-case local scheme Spark does not take as local",
      { mainApplicationFile: "LOCAL:///opt/app.jar" },
      "spec.mainApplicationFile",
    ],
    ["two files in one entry", { deps: { jars: ["local:///a.jar,file:///etc/shadow"] } }, "spec.deps.jars"],
    [
      "Maven packages resolved in the operator's pod",
      { deps: { packages: ["org.example:evil:1.0"] } },
      "spec.deps.packages",
    ],
    [
      "a Maven repository for the operator's pod to fetch from",
      { deps: { repositories: ["http://10.0.0.1/m2"] } },
      "spec.deps.repositories",
    ],
    [
      "a Spark property as a driver JVM system property",
      { driver: { javaOptions: "-Dspark.kubernetes.executor.volumes.hostPath.h.options.path=/" } },
      "spec.driver.javaOptions",
    ],
    [
      "a quoted Spark system property",
      { executor: { javaOptions: '-D"spark.executorEnv.X=1"' } },
      "spec.executor.javaOptions",
    ],
    ["JVM options read from a file", { driver: { javaOptions: "@/mnt/cm/opts" } }, "spec.driver.javaOptions"],
    ["client mode (the driver in the operator's pod)", { mode: "client" }, "spec.mode"],
    [
      "another API server for the driver's token",
      { driver: { kubernetesMaster: "https://10.0.0.1:6443" } },
      "spec.driver.kubernetesMaster",
    ],
    ["a proxy user", { proxyUser: "hdfs" }, "spec.proxyUser"],
    [
      "Hadoop settings",
      { hadoopConf: { "fs.s3a.endpoint": "http://10.0.0.1" } },
      "spec.hadoopConf.fs.s3a.endpoint",
    ],
    ["a Spark configuration ConfigMap", { sparkConfigMap: "spark-defaults" }, "spec.sparkConfigMap"],
    [
      "an application restarted without end",
      { restartPolicy: { type: "Always" } },
      "spec.restartPolicy.type",
    ],
    [
      "a JMX exporter agent and port",
      { monitoring: { exposeDriverMetrics: true, prometheus: { jmxExporterJar: "/x.jar" } } },
      "spec.monitoring",
    ],
    [
      "a mesh injector label on the driver",
      { driver: { labels: { "sidecar.istio.io/inject": "true" } } },
      "spec.driver.labels.sidecar.istio.io/inject",
    ],
    [
      "a toleration key outside the claimed schema",
      { executor: { tolerations: [{ key: "k", Operator: "Exists" }] } },
      "spec.executor.tolerations",
    ],
    [
      "annotations on the driver's Service",
      { driver: { serviceAnnotations: { "service.cilium.io/global": "true" } } },
      "spec.driver.serviceAnnotations",
    ],
    ["a wrong-case field", { Driver: { hostNetwork: true } }, "spec.Driver"],
    ["a field of another release", { driver: { hostPID: true } }, "spec.driver.hostPID"],
  ])("%s fails closed", (_, fragment, path) => {
    expect(unjudged(app(fragment))).toContain(path);
  });

  it.each([
    [
      "tuning properties and judged volumes",
      {
        sparkConf: {
          "spark.sql.shuffle.partitions": "8",
          "spark.kubernetes.executor.volumes.emptyDir.s.mount.path": "/s",
        },
      },
    ],
    [
      "remote dependencies the driver fetches",
      { deps: { jars: ["https://repo.example.com/a.jar"], pyFiles: ["local:///opt/x.py"] } },
    ],
    [
      "ordinary JVM options",
      { driver: { javaOptions: "-XX:+UseG1GC -Dlog4j.configuration=file:/opt/log4j.properties" } },
    ],
    [
      "scheduling of the claimed schema",
      {
        executor: {
          tolerations: [{ key: "spot", operator: "Exists", effect: "NoSchedule" }],
          affinity: { nodeAffinity: {} },
        },
      },
    ],
    [
      "a restart policy of Never and a lifecycle of its own",
      { restartPolicy: { type: "Never" }, timeToLiveSeconds: 600 },
    ],
    ["a label with injection turned off", { driver: { labels: { "sidecar.istio.io/inject": "false" } } }],
  ])("%s pass", (_, fragment) => {
    expect(failing(app(fragment))).toEqual([]);
  });

  it("each sparkConf property no rule reads is its own finding, named by its key", () => {
    const sparkConf = {
      "spark.sql.shuffle.partitions": "8",
      "spark.kubernetes.namespace": "kube-system",
      "spark.kubernetes.authenticate.driver.serviceAccountName": "admin",
    };
    const found = results(app({ sparkConf }))
      .filter((r) => r.rule.id === UNJUDGED)
      .flatMap((r) => r.findings);
    expect(found.map((f) => f.path)).toEqual([
      "spec.sparkConf.spark.kubernetes.namespace",
      "spec.sparkConf.spark.kubernetes.authenticate.driver.serviceAccountName",
    ]);
    expect(found[0]?.message).toContain(
      "spark.kubernetes.namespace: the operator passes each entry to spark-submit",
    );
  });

  it("every sparkConf entry is on the driver's command line, where the credential check reads it", () => {
    const secret = (sparkConf: object) =>
      results(app({ sparkConf }))
        .filter((r) => r.rule.id === "sandbox-disallow-secret-env")
        .flatMap((r) => r.findings.map((f) => ({ unchecked: f.unchecked === true, path: f.path })));
    expect(secret({ "spark.sql.catalog.lake.token": "ghp_1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ" })).toEqual([
      { unchecked: false, path: "spec.sparkConf.spark.sql.catalog.lake.token" },
    ]);
    expect(secret({ "spark.sql.shuffle.partitions": "8" })).toEqual([]);
    // A value not known yet (a preview) is reported as unchecked, never passed.
    expect(secret({ "spark.sql.catalog.lake.uri": UNKNOWN })).toEqual([
      { unchecked: true, path: "spec.sparkConf.spark.sql.catalog.lake.uri" },
    ]);
  });

  it("the object's own labels reach the driver pod: an injector label there fails closed", () => {
    expect(unjudged(sparkApp(), { labels: { "sidecar.istio.io/inject": "true" } })).toEqual([
      "metadata.labels.sidecar.istio.io/inject",
    ]);
    expect(unjudged(sparkApp(), { labels: { "kueue.x-k8s.io/queue-name": "q", app: "pi" } })).toEqual([]);
  });

  it("the roles' annotations are the pods' own, read by the pod rules (an unconfined AppArmor profile)", () => {
    const annotations = {
      "container.apparmor.security.beta.kubernetes.io/spark-kubernetes-driver": "unconfined",
    };
    expect(failing(app({ driver: { annotations } }))).toContain("sandbox-disallow-unconfined-lsm");
  });

  it("JVM options in the driver's environment that set Spark properties cannot be judged", () => {
    const env = [{ name: "JAVA_TOOL_OPTIONS", value: "-Dspark.kubernetes.executor.podTemplateFile=/x" }];
    expect(failing(app({ driver: { env } }))).toContain("sandbox-require-readable-values");
    const fromMap = [
      { name: "JDK_JAVA_OPTIONS", valueFrom: { configMapKeyRef: { name: "opts", key: "jvm" } } },
    ];
    expect(failing(app({ executor: { env: fromMap } }))).toContain("sandbox-require-readable-values");
    const fine = [{ name: "JAVA_TOOL_OPTIONS", value: "-Xss4m" }];
    expect(failing(app({ driver: { env: fine } }))).toEqual([]);
    expect(
      failing(app({ sparkConf: { "spark.executorEnv.JDK_JAVA_OPTIONS": "-Dspark.executorEnv.A=b" } })),
    ).toContain("sandbox-require-readable-values");
  });
});

describe("Spark pods with a pod template", () => {
  const rootTemplate = { spec: { containers: [{ name: "spark-kubernetes-driver" }] } };

  it("the webhook mutates only pods without a template or of Spark below 3.0.0", () => {
    const a = (sparkVersion: unknown, template?: unknown) => ({ sparkVersion, driver: { template } });
    expect(webhookMutates(a("3.5.0"), "driver")).toBe(true);
    expect(webhookMutates(a("3.5.0", null), "driver")).toBe(true);
    expect(webhookMutates(a("3.5.0", {}), "driver")).toBe(false);
    expect(webhookMutates(a("v3.1", {}), "driver")).toBe(false);
    expect(webhookMutates(a("4.0.0", {}), "driver")).toBe(false);
    expect(webhookMutates(a("2.4.8", {}), "driver")).toBe(true);
    expect(webhookMutates(a("3.0.0-rc1", {}), "driver")).toBe(true);
    expect(webhookMutates(a("03.5.0", {}), "driver")).toBe(true);
    expect(webhookMutates(a(undefined, {}), "driver")).toBe(true);
    expect(webhookMutates(a(3.5, {}), "driver")).toBe(true);
  });

  it("a Spark 3 template's root container is judged without the flattened securityContext the webhook never applies", () => {
    expect(failing(app({ driver: { template: rootTemplate } }))).toContain("sandbox-require-non-root");
    expect(failing(app({ executor: { template: {} } }))).toContain("sandbox-require-non-root");
  });

  it("the template's container is the Spark container: hardened there, the pod passes", () => {
    const hardened = sparkApp().driver;
    const template = {
      spec: {
        securityContext: hardened.podSecurityContext,
        containers: [{ name: "main", securityContext: hardened.securityContext }],
      },
    };
    expect(failing(app({ driver: { template } }))).toEqual([]);
  });

  it("Spark takes the container the operator names, else the template's first: another one gets no limits", () => {
    const { podSecurityContext, securityContext } = sparkApp().executor;
    const template = {
      spec: {
        securityContext: podSecurityContext,
        containers: [
          { name: "main", securityContext },
          { name: "executor", securityContext },
        ],
      },
    };
    expect(failing(app({ executor: { template } }))).toEqual(["sandbox-require-resource-limits"]);
    const named = over(template, {}) as { spec: { containers: { name: string }[] } };
    named.spec.containers = [{ ...named.spec.containers[0], name: "spark-kubernetes-executor" }];
    expect(failing(app({ executor: { template: named } }))).toEqual([]);
  });

  it("below Spark 3.0.0 the webhook replaces the template's security contexts, keeping none of their keys", () => {
    const template = {
      spec: {
        securityContext: { seccompProfile: { type: "RuntimeDefault" } },
        containers: [
          {
            name: "spark-kubernetes-driver",
            securityContext: { privileged: false, capabilities: { drop: ["ALL"] } },
          },
        ],
      },
    };
    const { podSecurityContext, securityContext } = sparkApp().driver;
    const weaker = {
      sparkVersion: "2.4.8",
      driver: {
        template,
        podSecurityContext: { ...podSecurityContext, seccompProfile: undefined },
        securityContext: { ...securityContext, capabilities: undefined },
      },
    };
    expect(failing(app(weaker))).toContain("sandbox-require-drop-all");
  });

  it("a privileged container in a template is refused, where it is written", () => {
    const template = { spec: { containers: [{ name: "x", securityContext: { privileged: true } }] } };
    const paths = results(app({ executor: { template } }))
      .filter((r) => r.rule.id === "sandbox-disallow-privileged")
      .flatMap((r) => r.findings.map((f) => f.path));
    expect(paths).toEqual(["spec.executor.template.spec.containers[0]"]);
  });

  it("below Spark 3.0.0 the webhook's settings are applied over the template too", () => {
    const sidecar = { name: "s", image: "x", securityContext: { privileged: true } };
    expect(
      failing(app({ sparkVersion: "2.4.8", driver: { template: rootTemplate, sidecars: [sidecar] } })),
    ).toContain("sandbox-disallow-privileged");
  });
});

describe("hostile shapes never throw, and fail where they break a field", () => {
  it.each([
    ["a string driver", { driver: "privileged" }],
    ["a list sparkConf", { sparkConf: [["spark.master", "local"]] }],
    [
      "a huge sparkConf",
      { sparkConf: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`spark.custom.x${i}`, "1"])) },
    ],
    [
      "numbers for strings",
      { mainApplicationFile: 7, deps: { jars: [1, 2] }, driver: { javaOptions: 3, labels: 4 } },
    ],
  ])("%s", (_, fragment) => {
    expect(() => results(app(fragment))).not.toThrow();
    expect(failing(app(fragment)).length).toBeGreaterThan(0);
  });

  it("deep arguments are not strings Spark passes on; reading them does not throw", () => {
    expect(() => results(app({ arguments: [[[[[["x"]]]]]] }))).not.toThrow();
  });
});
