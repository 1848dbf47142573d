/**
 * The values of the Spark operator's fields that pass where the field itself is refused (crd-verdicts/
 * spark-operator.ts): the Spark properties the readers judge or that only size and tune the application, file URIs
 * the driver pod fetches itself, JVM options that set no Spark property, labels no mesh injector acts on, and core
 * values of the claimed Kubernetes version. Each from what the operator and Spark do with them (the operator's
 * submission.go passes `sparkConf` to spark-submit as `--conf`, `hadoopConf` as `spark.hadoop.*`; Spark's
 * KubernetesUtils uploads local files from the submitting pod; SparkConf loads every `spark.*` JVM system property).
 */
import { isUnknown } from "../../../workload";
import type { UnjudgedField } from "../../verdict";
import { coreFields, injectorFields } from "../fields";

const ROLE = "(?:driver|executor)";

/** Spark properties the pod readers judge (crd-spark-conf.ts turns them into the pods' volumes and environment). */
const JUDGED_KEYS: readonly RegExp[] = [
  new RegExp(
    `^spark\\.kubernetes\\.${ROLE}\\.volumes\\.[^.]+\\.[^.]+\\.(?:mount\\.(?:path|readOnly|subPath)|options\\.[^.]+)$`,
  ),
  new RegExp(`^spark\\.kubernetes\\.${ROLE}\\.secrets\\.[^.]+$`),
  new RegExp(`^spark\\.kubernetes\\.${ROLE}\\.secretKeyRef\\.[^.]+$`),
  /^spark\.kubernetes\.driverEnv\.[^.]+$/,
  /^spark\.executorEnv\.[^.]+$/,
  new RegExp(`^spark\\.kubernetes\\.${ROLE}\\.podTemplateFile$`),
];

/** Spark properties that size, tune or schedule the application's work inside the judged pods. */
const TUNING_KEYS: readonly RegExp[] = [
  new RegExp(`^spark\\.${ROLE}\\.(?:memory|cores|memoryOverhead|memoryOverheadFactor|maxResultSize)$`),
  /^spark\.executor\.instances$/,
  new RegExp(`^spark\\.kubernetes\\.${ROLE}\\.(?:request|limit)\\.cores$`),
  /^spark\.kubernetes\.memoryOverheadFactor$/,
  /^spark\.kubernetes\.allocation\.batch\.(?:size|delay)$/,
  /^spark\.kubernetes\.executor\.deleteOnTermination$/,
  // Spark SQL's settings configure the engine inside the driver's and executors' JVMs.
  /^spark\.sql\.[A-Za-z0-9.]+$/,
  /^spark\.(?:app\.name|ui\.enabled|ui\.showConsoleProgress|eventLog\.enabled)$/,
  /^spark\.kubernetes\.container\.image\.pullPolicy$/,
  /^spark\.kubernetes\.local\.dirs\.tmpfs$/,
  /^spark\.(?:default\.parallelism|serializer|speculation|network\.timeout|locality\.wait|rdd\.compress|task\.maxFailures|task\.cpus|executor\.heartbeatInterval)$/,
  /^spark\.(?:kryoserializer\.buffer(?:\.max)?|kryo\.registrationRequired)$/,
  /^spark\.(?:shuffle\.compress|shuffle\.spill\.compress|io\.compression\.codec|broadcast\.compress)$/,
  /^spark\.memory\.(?:fraction|storageFraction|offHeap\.enabled|offHeap\.size)$/,
  /^spark\.dynamicAllocation\.(?:enabled|minExecutors|maxExecutors|initialExecutors|executorIdleTimeout|shuffleTracking\.enabled|shuffleTracking\.timeout)$/,
];

export const SPARK_PROPERTIES =
  "the operator passes each entry to spark-submit as a Spark property (--conf): properties set the pods' labels, annotations, service account, API server, namespace, pod template, images, Java agents, and files spark-submit uploads from the operator's own pod, which no rule reads; only the volumes, secrets, secretKeyRef and environment properties the pod readers judge (spark.kubernetes.<role>.volumes|secrets|secretKeyRef.*, spark.kubernetes.driverEnv.*, spark.executorEnv.*) and properties that size or tune the work inside the pods (spark.<role>.memory|cores|memoryOverhead, spark.executor.instances, spark.kubernetes.<role>.request|limit.cores, spark.sql.*, spark.dynamicAllocation.*, serializer, compression and memory settings) pass";

/** True when a `sparkConf` entry is a property the readers judge or one that only tunes the work. */
export function sparkProperty(k: string, x: unknown): boolean {
  return (typeof x === "string" || isUnknown(x)) && [...JUDGED_KEYS, ...TUNING_KEYS].some((re) => re.test(k));
}

export const HADOOP_PROPERTIES =
  "the operator passes each entry to spark-submit as spark.hadoop.<key>: Hadoop settings (file systems, credential providers, their keys) used by spark-submit in the operator's own pod and by the application, which no rule reads";

const DEP_SCHEMES = ["local", "http", "https"];

export const DEP_URIS = `spark-submit uploads a file: or scheme-less path from the operator's own pod (its service-account token among its files) to spark.kubernetes.file.upload.path, and resolves other file systems' paths there with the operator's identity; only ${DEP_SCHEMES.map((s) => `${s}://`).join(", ")} URIs (in the image, or fetched by the judged driver pod) pass`;

const depUri = (u: unknown): boolean => {
  if (isUnknown(u)) return true;
  if (typeof u !== "string") return false;
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(u.trim());
  return m?.[1] !== undefined && DEP_SCHEMES.includes(m[1]) && !/[,\s]/.test(u.trim());
};

/** True when a file URI, or every one of a list of them, is one the driver pod fetches itself. */
export function depUris(v: unknown): boolean {
  return Array.isArray(v) ? v.every(depUri) : depUri(v);
}

/**
 * True when JVM options (or a JVM options variable's value) set no Spark property: no `-Dspark.*` system property
 * (quotes and escapes as a shell would drop them), no `@argfile` and no options or flags file, which could hold one.
 */
export function jvmOptionsSafe(text: string): boolean {
  const plain = text.replace(/["'\\]/g, "");
  return !/-D\s*spark\./i.test(plain) && !/(?:^|\s)@/.test(plain) && !/VMOptionsFile|-XX:Flags=/i.test(plain);
}

export const javaOptionsAllowed = (v: unknown): boolean =>
  isUnknown(v) || (typeof v === "string" && jvmOptionsSafe(v));

/** The variables the JVM or Spark's image reads as JVM options, by name. */
export const JVM_OPTION_NAMES: readonly string[] = [
  "JAVA_TOOL_OPTIONS",
  "JDK_JAVA_OPTIONS",
  "_JAVA_OPTIONS",
  "SPARK_SUBMIT_OPTS",
];

/** The prefix of the numbered options Spark's image passes to the JVM (`SPARK_JAVA_OPT_<n>`). */
export const JVM_OPTION_PREFIX = "SPARK_JAVA_OPT_";

/** Environment variables the JVM or Spark's image reads as JVM options. */
export const JVM_OPTION_VARIABLES = new RegExp(
  `^(?:${[...JVM_OPTION_NAMES, `${JVM_OPTION_PREFIX}.*`].join("|")})$`,
);

/** A label or annotation (`where`) that turns no mesh injector on. */
export const injectorFree =
  (where: "labels" | "annotations") =>
  (key: string, value: unknown): boolean => {
    const out: UnjudgedField[] = [];
    injectorFields({ [where]: { [key]: value } }, "", out);
    return out.length === 0;
  };

/** A value (each element of a list, with `list`) of a core type that the claimed version's pod verdicts pass. */
export const validCore =
  (type: string, list = false) =>
  (v: unknown): boolean => {
    const values = list ? (Array.isArray(v) ? v : [undefined]) : [v];
    return values.every((x) => x !== undefined && (coreFields(type, x, "") ?? [undefined]).length === 0);
  };
