/**
 * The verdict of every field of the Kubeflow Spark operator's kinds (github.com/kubeflow/spark-operator/v2, the
 * version crds.generated.ts pins: api/v1beta2 SparkApplication and ScheduledSparkApplication, whose `template` is a
 * SparkApplicationSpec), keyed `<Kind>.<path under spec>`. Reasons from the operator's own source
 * (internal/controller/sparkapplication/submission.go: the spark-submit arguments; internal/webhook/
 * sparkpod_defaulter.go: what the webhook writes into the pods it mutates; web_ui.go, driveringress.go,
 * monitoring_config.go; internal/controller/scheduledsparkapplication). The driver and executor pods are rebuilt
 * from the flattened settings (crd-spark-kubevirt.ts, crd-spark-conf.ts) and judged by the pod rules; the UI's and
 * the drivers' Services and Ingresses by sandbox-disallow-exposed-ports (operator-exposure.ts). The properties and
 * paths the project reads are in spark-conf-keys.ts. A judged field's `hostile` is a `spec` fragment laid over a
 * hardened object of the kind; test/policy/sources/kubernetes/crd-verdicts.test.ts proves one of its rules
 * refuses it.
 */
import { inert, judged, refused, refusedEntries, type Verdict, type VerdictTable } from "../../verdict";
import {
  DEP_URIS,
  depUris,
  HADOOP_PROPERTIES,
  injectorFree,
  javaOptionsAllowed,
  SPARK_PROPERTIES,
  sparkProperty,
  validCore,
} from "./spark-conf-keys";

const PRIV = "sandbox-disallow-privileged";
const NS = "sandbox-disallow-host-namespaces";
const EXPOSED = "sandbox-disallow-exposed-ports";
const SECRET = "sandbox-disallow-secret-env";
const DEVICES = "sandbox-disallow-devices";
const SENSITIVE = "sandbox-disallow-sensitive-host-mounts";
const SOCKET = "sandbox-disallow-runtime-socket";
const LSM = "sandbox-disallow-unconfined-lsm";
const LIMITS = "sandbox-require-resource-limits";

const SCHEDULING = (what: string) =>
  `the operator's webhook sets the pod's ${what}: scheduling only, as the pod's own verdicts say; a value of the claimed Kubernetes version passes, a key outside it fails`;
const LIFECYCLE =
  "when the operator submits, retries, resubmits or deletes the application; it opens nothing";

/** The verdicts of one role (`driver`, `executor`) of the app spec at `base`, `wrap` placing a fragment. */
function role(
  base: string,
  name: "driver" | "executor",
  wrap: (spec: object) => object,
): Record<string, Verdict> {
  const b = `${base}.${name}`;
  const r = (fragment: object) => wrap({ [name]: fragment });
  const mounted = (mount: object) =>
    wrap({ volumes: [{ name: "host", hostPath: { path: "/var/run/docker.sock" } }], [name]: mount });
  const labels = (what: string) =>
    refusedEntries(
      `the operator writes these ${what} on the ${name} pod (spark.kubernetes.${name}.${what === "labels" ? "label" : "annotation"}.*): a mesh injector's key adds containers no rule saw; other keys pass`,
      injectorFree(what === "labels" ? "labels" : "annotations"),
    );
  const out: Record<string, Verdict> = {
    [b]: judged([PRIV], r({ securityContext: { privileged: true } })),
    [`${b}.template`]: judged(
      [PRIV],
      r({ template: { spec: { containers: [{ name: "x", securityContext: { privileged: true } }] } } }),
    ),
    [`${b}.cores`]: inert(
      "the JVM's cores (spark.driver.cores, spark.executor.cores) and the pod's CPU request",
    ),
    [`${b}.coreRequest`]: inert("the pod's CPU request; its limit is judged"),
    [`${b}.coreLimit`]: judged([LIMITS], r({ coreLimit: "lots" }), { control: r({ coreLimit: "2" }) }),
    [`${b}.memory`]: judged([LIMITS], r({ memory: "lots" }), { control: r({ memory: "1g" }) }),
    [`${b}.memoryOverhead`]: inert("memory Spark adds to the pod's memory limit for the JVM's own use"),
    [`${b}.memoryLimit`]: judged([LIMITS], r({ memoryLimit: "64g" }), {
      control: r({ memoryLimit: "2g" }),
      config: { [LIMITS]: { maxMemoryMb: 4096 } },
    }),
    [`${b}.gpu`]: judged([DEVICES], r({ gpu: { name: "nvidia.com/gpu", quantity: 1 } })),
    [`${b}.image`]: inert(
      `the ${name}'s image; its user is judged through the container's runAsUser/runAsNonRoot`,
    ),
    [`${b}.configMaps`]: inert(
      "ConfigMaps the webhook mounts in the Spark container (read-only configuration of the namespace); the pod rules read them as volumes",
    ),
    [`${b}.secrets`]: judged([SECRET], r({ secrets: [{ name: "creds", path: "/mnt/creds" }] })),
    [`${b}.env`]: judged(
      [SECRET],
      r({ env: [{ name: "T", valueFrom: { secretKeyRef: { name: "s", key: "k" } } }] }),
    ),
    [`${b}.envVars`]: judged([SECRET], r({ envVars: { DB_PASSWORD: "Hunter2Secret" } }), {
      control: r({ envVars: { LOG_LEVEL: "info" } }),
    }),
    [`${b}.envFrom`]: judged([SECRET], r({ envFrom: [{ secretRef: { name: "creds" } }] })),
    [`${b}.envSecretKeyRefs`]: judged([SECRET], r({ envSecretKeyRefs: { TOKEN: { name: "s", key: "k" } } })),
    [`${b}.labels`]: labels("labels"),
    [`${b}.annotations`]: labels("annotations"),
    [`${b}.volumeMounts`]: judged(
      [SOCKET, SENSITIVE],
      mounted({ volumeMounts: [{ name: "host", mountPath: "/h" }] }),
    ),
    [`${b}.affinity`]: refused(SCHEDULING("affinity"), validCore("core/v1.Affinity")),
    [`${b}.tolerations`]: refused(SCHEDULING("tolerations"), validCore("core/v1.Toleration", true)),
    [`${b}.podSecurityContext`]: judged(
      [LSM],
      r({ podSecurityContext: { seLinuxOptions: { type: "spc_t" } } }),
    ),
    [`${b}.securityContext`]: judged([PRIV], r({ securityContext: { privileged: true } })),
    [`${b}.schedulerName`]: inert(
      "the scheduler the webhook names on the pod; every node runs the same walls",
    ),
    [`${b}.sidecars`]: judged(
      [PRIV],
      r({ sidecars: [{ name: "s", image: "x", securityContext: { privileged: true } }] }),
    ),
    [`${b}.initContainers`]: judged(
      [PRIV],
      r({ initContainers: [{ name: "i", image: "x", securityContext: { privileged: true } }] }),
    ),
    [`${b}.hostNetwork`]: judged([NS], r({ hostNetwork: true })),
    [`${b}.nodeSelector`]: inert("node labels the webhook puts in the pod's nodeSelector; scheduling only"),
    [`${b}.dnsConfig`]: refused(
      "the webhook sets the pod's resolver settings; as the pod's own verdicts say they open nothing, so a value of the claimed Kubernetes version passes, a key outside it fails",
      validCore("core/v1.PodDNSConfig"),
    ),
    [`${b}.terminationGracePeriodSeconds`]: inert("how long the pod has to stop; it opens nothing"),
    [`${b}.serviceAccount`]: inert(
      `the ${name} pod's service account (spark.kubernetes.authenticate.driver.serviceAccountName): the driver needs its token to start executors; the token is judged on the pod`,
    ),
    [`${b}.hostAliases`]: refused(
      "the webhook adds lines to the pod's /etc/hosts; as the pod's own verdicts say they open nothing, so a value of the claimed Kubernetes version passes, a key outside it fails",
      validCore("core/v1.HostAlias", true),
    ),
    [`${b}.shareProcessNamespace`]: inert(
      "the pod's own containers see each other's processes, and nothing of the node",
    ),
    [`${b}.javaOptions`]: refused(
      `the JVM's options (spark.${name}.extraJavaOptions), read into the container's arguments: a -Dspark.* system property is a Spark property SparkConf loads, which no rule reads; other options pass`,
      javaOptionsAllowed,
    ),
    [`${b}.lifecycle`]: judged(
      [SECRET],
      r({ lifecycle: { postStart: { exec: { command: ["mysql", "-pHunter2Secret"] } } } }),
    ),
    [`${b}.ports`]: inert(
      "container ports of the Spark container (no host port, no Service); exposure is judged on Services",
    ),
    [`${b}.priorityClassName`]: inert("the pod's priority class; scheduling only"),
  };
  if (name === "driver")
    Object.assign(out, {
      [`${b}.podName`]: inert("the driver pod's name"),
      [`${b}.kubernetesMaster`]: refused(
        "the API server address the driver talks to (spark.kubernetes.driver.master) with its service account's token: a token sent to an address no rule reads",
      ),
      [`${b}.serviceAnnotations`]: refused(
        "the annotations Spark puts on the driver's Service: some export it (a cloud load balancer's, Cilium's service.cilium.io/global), and no rule reads them there",
      ),
      [`${b}.serviceLabels`]: refused(
        "the labels Spark puts on the driver's Service; a label changes which policies and exporters select it, and no rule reads them there",
      ),
    });
  else
    Object.assign(out, {
      [`${b}.instances`]: inert("how many executor pods of the judged spec run (read as the pod's replicas)"),
      [`${b}.deleteOnTermination`]: inert("whether the driver deletes finished executor pods"),
    });
  return out;
}

/** The verdicts of a SparkApplicationSpec at `base` (`SparkApplication`, `ScheduledSparkApplication.template`). */
function app(base: string, wrap: (spec: object) => object): Record<string, Verdict> {
  const ui = (o: object) => wrap({ sparkUIOptions: o });
  const nested: Record<string, Verdict> = base.includes(".")
    ? { [base]: judged([PRIV], wrap({ driver: { securityContext: { privileged: true } } })) }
    : {};
  return {
    ...nested,
    ...role(base, "driver", wrap),
    ...role(base, "executor", wrap),
    [`${base}.suspend`]: inert("the operator deletes the application's pods while it is true"),
    [`${base}.type`]: inert("the application's language (Scala, Java, Python, R)"),
    [`${base}.sparkVersion`]: inert(
      "the version the operator's webhook goes by: below 3.0.0 it mutates pods that have a template; the rebuilt pods follow it",
    ),
    [`${base}.mode`]: refused(
      "client mode runs the driver inside the operator's own pod, under its service account, which no rule reads; cluster (the default) runs it in the judged driver pod",
      (v) => v === "cluster",
    ),
    [`${base}.proxyUser`]: refused(
      "spark-submit --proxy-user: the application acts as another Hadoop user on outside storage, which no rule reads",
    ),
    [`${base}.image`]: inert(
      "the pods' image; its user is judged through the container's runAsUser/runAsNonRoot",
    ),
    [`${base}.imagePullPolicy`]: inert("when the node pulls the image; it runs the same image"),
    [`${base}.imagePullSecrets`]: inert("credentials the node uses to pull images; the task never sees them"),
    [`${base}.mainClass`]: inert("the class the JVM starts in the judged driver pod"),
    [`${base}.mainApplicationFile`]: refused(`the application file spark-submit runs; ${DEP_URIS}`, depUris),
    [`${base}.arguments`]: judged([SECRET], wrap({ arguments: ["--password", "Hunter2Secret"] }), {
      control: wrap({ arguments: ["--rows", "10"] }),
    }),
    [`${base}.sparkConf`]: refusedEntries(SPARK_PROPERTIES, sparkProperty),
    [`${base}.hadoopConf`]: refusedEntries(HADOOP_PROPERTIES, () => false),
    [`${base}.sparkConfigMap`]: refused(
      "the webhook mounts this ConfigMap as SPARK_CONF_DIR: Spark properties no rule reads",
    ),
    [`${base}.hadoopConfigMap`]: refused(
      "the webhook mounts this ConfigMap as HADOOP_CONF_DIR: Hadoop settings (file systems, credentials providers) no rule reads",
    ),
    [`${base}.volumes`]: judged(
      [SOCKET, SENSITIVE],
      wrap({
        volumes: [{ name: "host", hostPath: { path: "/var/run/docker.sock" } }],
        driver: { volumeMounts: [{ name: "host", mountPath: "/h" }] },
      }),
    ),
    [`${base}.deps`]: inert("what spark-submit adds to the application; each list has its own verdict"),
    ...Object.fromEntries(
      ["jars", "files", "pyFiles", "archives"].map((k) => [
        `${base}.deps.${k}`,
        refused(
          `files spark-submit adds to the application (--${k.replace("pyFiles", "py-files")}); ${DEP_URIS}`,
          depUris,
        ),
      ]),
    ),
    [`${base}.deps.packages`]: refused(
      "Maven coordinates spark-submit resolves and downloads in the operator's own pod before the driver starts, from repositories no rule reads",
    ),
    [`${base}.deps.excludePackages`]: inert("coordinates left out of the packages' resolution"),
    [`${base}.deps.repositories`]: refused(
      "Maven repositories spark-submit downloads packages from in the operator's own pod, which no rule reads",
    ),
    [`${base}.restartPolicy`]: inert(LIFECYCLE),
    [`${base}.restartPolicy.type`]: refused(
      "OnFailure and Always make the operator submit the application again, new pods each time (Always without end); Never passes",
      (v) => v === "Never",
    ),
    [`${base}.nodeSelector`]: inert("node labels Spark puts in both pods' nodeSelector; scheduling only"),
    [`${base}.failureRetries`]: inert(LIFECYCLE),
    [`${base}.retryInterval`]: inert(LIFECYCLE),
    [`${base}.pythonVersion`]: inert("which Python the image's entrypoint runs"),
    [`${base}.memoryOverheadFactor`]: inert(
      "memory Spark adds to the pods' memory limits for the JVM's own use",
    ),
    [`${base}.monitoring`]: refused(
      "the operator writes a ConfigMap with the Prometheus JMX exporter's configuration (its own or `configuration`), mounts it in the pods and starts the exporter as a Java agent on a port of each pod: a Java agent and a port no rule reads",
    ),
    [`${base}.batchScheduler`]: inert(
      "the scheduler that places the pods (Volcano, YuniKorn, Kueue's): the operator makes a PodGroup for it; scheduling only",
    ),
    [`${base}.batchSchedulerOptions`]: inert(
      "the batch scheduler's queue, priority and gang size; scheduling only",
    ),
    [`${base}.timeToLiveSeconds`]: inert(LIFECYCLE),
    [`${base}.sparkUIOptions`]: judged([EXPOSED], ui({ serviceType: "NodePort" })),
    [`${base}.sparkUIOptions.serviceType`]: judged([EXPOSED], ui({ serviceType: "LoadBalancer" })),
    [`${base}.sparkUIOptions.ingressAnnotations`]: judged([EXPOSED], ui({ ingressAnnotations: { a: "b" } })),
    [`${base}.sparkUIOptions.ingressTLS`]: judged(
      [EXPOSED],
      ui({ ingressTLS: [{ hosts: ["ui.example.com"] }] }),
    ),
    [`${base}.sparkUIOptions.servicePort`]: inert("the port of the UI's Service, whose type is judged"),
    [`${base}.sparkUIOptions.servicePortName`]: inert("the name of the UI Service's port"),
    [`${base}.sparkUIOptions.serviceAnnotations`]: refused(
      "the operator puts these annotations on the UI's Service: some export it (a cloud load balancer's, Cilium's service.cilium.io/global), and no rule reads them there",
    ),
    [`${base}.sparkUIOptions.serviceLabels`]: refused(
      "the operator puts these labels on the UI's Service; a label changes which policies and exporters select it, and no rule reads them there",
    ),
    [`${base}.driverIngressOptions`]: judged(
      [EXPOSED],
      wrap({ driverIngressOptions: [{ servicePort: 4040, ingressURLFormat: "{{$appName}}.example.com" }] }),
    ),
    [`${base}.dynamicAllocation`]: inert(
      "how many executor pods of the judged spec run, between its bounds; shuffle tracking keeps them longer",
    ),
  };
}

export const SPARK_OPERATOR_VERDICTS: VerdictTable = {
  ...app("SparkApplication", (s) => s),

  ...app("ScheduledSparkApplication.template", (s) => ({ template: s })),
  "ScheduledSparkApplication.schedule": inert(
    "when the operator creates a SparkApplication from the template",
  ),
  "ScheduledSparkApplication.timeZone": inert("the time zone of the schedule"),
  "ScheduledSparkApplication.suspend": inert("the operator creates no new application while it is true"),
  "ScheduledSparkApplication.concurrencyPolicy": inert(
    "whether runs of the judged template may overlap; each run is the same application",
  ),
  "ScheduledSparkApplication.successfulRunHistoryLimit": inert(
    "how many finished applications the operator keeps",
  ),
  "ScheduledSparkApplication.failedRunHistoryLimit": inert("how many failed applications the operator keeps"),
};
