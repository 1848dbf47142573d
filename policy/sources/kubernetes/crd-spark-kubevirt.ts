/**
 * Rebuilt pods of the Spark operator and KubeVirt (see crd-pods.ts for the approach).
 *
 * - Spark operator v2.5 (sparkoperator.k8s.io SparkApplication; ScheduledSparkApplication under `spec.template`): a
 *   driver pod and the executors' pod (`executor.instances` copies), from the role's `template` (the pod Spark
 *   starts from; its Spark container is the one named `spark-kubernetes-<role>`, else the first) with what Spark sets
 *   from its conf (the image, `coreLimit` as the CPU limit, `volumeMounts`, `secrets`, `envVars`,
 *   `envSecretKeyRefs`, `javaOptions`, the app's `arguments` and `sparkConf`, labels and annotations, the
 *   object's own labels among them) and, on the pods the operator's webhook mutates (no template, or a `sparkVersion`
 *   below 3.0.0), what the webhook writes: `securityContext`, `env`, `envFrom`, `ports`, `lifecycle`,
 *   `memoryLimit`, `gpu`, `configMaps`, `sidecars`, `initContainers`, `podSecurityContext`, `hostNetwork`,
 *   `shareProcessNamespace` (submission.go, sparkpod_defaulter.go). `spec.volumes` go to both pods. Spark sets the
 *   memory limit to the role's memory plus overhead (spark.kubernetes.memoryOverheadFactor, 10%, at least 384 MiB);
 *   JVM sizes (`512m`, `2g`) are binary units (kubeflow.org/docs/components/spark-operator/user-guide).
 * - KubeVirt (kubevirt.io VirtualMachine `spec.template.spec`, VirtualMachineInstance `spec`,
 *   VirtualMachineInstanceReplicaSet `spec.template.spec`; pool.kubevirt.io VirtualMachinePool
 *   `spec.virtualMachineTemplate.spec.template.spec`): a VM is no container, but its launcher pod mounts each
 *   `hostDisk` volume from the host and hands `domain.devices.hostDevices`/`gpus` to the guest
 *   (kubevirt.io user guide, Disks and Volumes, Host Devices). Claims and DataVolumes stay claims, so a claim bound
 *   to a hostPath PersistentVolume is resolved like a pod's.
 */
import { isUnknown, type UnreadablePart } from "../../workload";
import { at, entries, field, isObj, items, join, str } from "../lenient";
import { sparkExtras } from "./crd-spark-conf";
import {
  JVM_OPTION_NAMES,
  JVM_OPTION_PREFIX,
  JVM_OPTION_VARIABLES,
  jvmOptionsSafe,
} from "./crd-verdicts/spark-conf-keys";
import {
  type Part,
  PathMapper,
  partsOf,
  putField,
  putList,
  rebuilt,
  strategicMerge,
  unknownSite,
} from "./rebuild";
import type { PodSite } from "./sites";

type Obj = Record<string, unknown>;

const MIB = 1024 * 1024;
const UNITS: Readonly<Record<string, number>> = { k: 1024, m: MIB, g: 1024 * MIB, t: 1024 * 1024 * MIB };

/** A JVM size (`512m`, `2g`, `1024`) in bytes; undefined when it is not one. */
export function jvmBytes(v: unknown): number | undefined {
  const s = typeof v === "number" ? String(v) : typeof v === "string" ? v.trim().toLowerCase() : undefined;
  const m = s === undefined ? null : /^(\d+)([kmgt])?b?$/.exec(s);
  if (m === null) return undefined;
  return Number(m[1]) * (m[2] === undefined ? MIB : (UNITS[m[2]] ?? 1));
}

/**
 * Whether the operator's webhook applies the role's pod settings: it mutates the pods of a role with no `template`
 * (Go nil: absent or null) or of an app whose `sparkVersion` is not a semantic version of 3.0.0 or later
 * (submission.go `driverConfOption`, `executorConfOption`; Go's x/mod/semver ranks an invalid version lowest).
 */
export function webhookMutates(app: unknown, role: "driver" | "executor"): boolean {
  const template = field(field(app, role), "template");
  if (template === undefined || template === null) return true;
  const v = field(app, "sparkVersion");
  if (typeof v !== "string") return true;
  const m =
    /^v?(0|[1-9]\d*)(?:\.(0|[1-9]\d*)(?:\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)?)?$/.exec(v);
  if (m === null) return true;
  const [major, minor, patch] = [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)];
  if (major !== 3) return major < 3;
  return minor === 0 && patch === 0 && m[4] !== undefined;
}

/**
 * The name of the container Spark takes as its own from a template: the one the operator names
 * (spark.kubernetes.<role>.podTemplateContainerName, `spark-kubernetes-driver`/`-executor`), else the first.
 */
function sparkContainerName(template: unknown, role: "driver" | "executor"): string {
  const named = `spark-kubernetes-${role}`;
  const own = items(field(field(template, "spec"), "containers")).map((c) => field(c, "name"));
  if (own.includes(named)) return named;
  return typeof own[0] === "string" ? own[0] : named;
}

/** Labels (the app object's own but Kueue's, and the role's) and annotations the role's pod gets from Spark's conf. */
function sparkMetadata(props: unknown, template: unknown, r: unknown): Obj {
  const own = entries(field(field(props, "metadata"), "labels"));
  const labels = Object.fromEntries([
    ...entries(field(field(template, "metadata"), "labels")),
    ...own.filter(([k]) => !k.startsWith("kueue.x-k8s.io/")),
    ...entries(field(r, "labels")),
  ]);
  const annotations = Object.fromEntries([
    ...entries(field(field(template, "metadata"), "annotations")),
    ...entries(field(r, "annotations")),
  ]);
  return { labels, annotations };
}

/**
 * Maps each element of the lists merged over a template back to where it is written: a part of the role's settings
 * to its field, an element of the template to the template; the Spark container the template holds to the template,
 * but for the keys the role's settings give it.
 */
function mapMerged(
  merged: Obj,
  base: Obj,
  lists: Record<string, Part[]>,
  mapper: PathMapper,
  tPath: string,
  main: Obj,
): void {
  for (const [key, parts] of Object.entries(lists)) {
    const own = items(base[key]).map((x) => field(x, "name"));
    items(merged[key]).forEach((x, i) => {
      const name = field(x, "name");
      const part = parts.find((p) => field(p.value, "name") === name);
      const j = own.indexOf(name);
      const at = `spec.${key}[${i}]`;
      if (part !== undefined && (j < 0 || part.value !== main)) mapper.add(at, part.path);
      else if (j >= 0) mapper.add(at, `${tPath}.${key}[${j}]`);
      if (part !== undefined && part.value === main && j >= 0)
        for (const k of Object.keys(main)) if (k !== "name") mapper.add(`${at}.${k}`, part.path);
    });
  }
}

function sparkRole(props: unknown, appPath: string, role: "driver" | "executor"): PodSite {
  const app = at(props, appPath);
  const rPath = join(appPath, role);
  const r = field(app, role);
  const template = field(r, "template");
  const base = field(template, "spec");
  // Findings in what the template writes point at it.
  const mapper = new PathMapper(isObj(base) ? join(rPath, "template.spec") : rPath);
  const webhook = webhookMutates(app, role);
  // What the operator's webhook adds (only to the pods it mutates), and what Spark itself sets from its conf.
  const hooked = (key: string): unknown => (webhook ? field(r, key) : undefined);
  const memory = jvmBytes(field(r, "memory") ?? "1g");
  const limits: Obj = {};
  if (memory !== undefined) limits.memory = String(memory + Math.max(Math.round(memory * 0.1), 384 * MIB));
  const memoryLimit = jvmBytes(hooked("memoryLimit"));
  if (memoryLimit !== undefined) limits.memory = String(memoryLimit);
  if (field(r, "coreLimit") !== undefined) limits.cpu = field(r, "coreLimit");
  const gpu = hooked("gpu");
  const gpuName = str(field(gpu, "name"));
  if (typeof gpuName === "string") limits[gpuName] = field(gpu, "quantity") ?? 1;
  const main: Obj = { name: isObj(base) ? sparkContainerName(template, role) : `spark-kubernetes-${role}` };
  main.image = field(r, "image") ?? field(app, "image");
  for (const key of ["securityContext", "env", "envFrom", "ports", "lifecycle"])
    if (hooked(key) !== undefined) main[key] = hooked(key);
  if (field(r, "volumeMounts") !== undefined) main.volumeMounts = field(r, "volumeMounts");
  main.resources = { limits };
  // Secrets, ConfigMaps, environment, command-line options and sparkConf volumes the operator and Spark add.
  const extras = sparkExtras(app, appPath, role, webhook);
  const appended = (key: string, more: readonly unknown[]) => {
    if (more.length === 0) return;
    const cur = main[key];
    main[key] = isUnknown(cur) ? cur : [...(Array.isArray(cur) ? cur : []), ...more];
  };
  appended("volumeMounts", extras.mounts);
  appended("env", extras.env);
  appended("args", extras.args);
  const spec: Obj = { restartPolicy: "Never" };
  const lists: Record<string, Part[]> = {
    containers: [{ value: main, path: rPath }, ...partsOf(hooked("sidecars"), join(rPath, "sidecars"))],
    initContainers: partsOf(hooked("initContainers"), join(rPath, "initContainers")),
    volumes: [
      ...partsOf(field(app, "volumes"), join(appPath, "volumes")),
      ...extras.volumes.map((value) => ({ value, path: rPath })),
    ],
  };
  for (const [key, parts] of Object.entries(lists))
    if (isObj(base)) {
      if (parts.length > 0) spec[key] = parts.map((p) => p.value);
    } else putList(spec, key, parts, mapper);
  for (const [key, from] of [
    ["securityContext", "podSecurityContext"],
    ["hostNetwork", "hostNetwork"],
    ["shareProcessNamespace", "shareProcessNamespace"],
  ] as const)
    putField(spec, key, [{ value: hooked(from), path: join(rPath, from) }], mapper);
  const merged = isObj(base) ? (strategicMerge(base, spec) as Obj) : spec;
  if (isObj(base)) mapMerged(merged, base, lists, mapper, join(rPath, "template.spec"), main);
  // The webhook replaces the template's security contexts with the role's (sparkpod_defaulter.go).
  const podSecurity = hooked("podSecurityContext");
  if (isObj(base) && podSecurity !== undefined && podSecurity !== null) merged.securityContext = podSecurity;
  const security = hooked("securityContext");
  if (isObj(base) && security !== undefined && security !== null && Array.isArray(merged.containers))
    merged.containers = merged.containers.map((c) =>
      isObj(c) && c.name === main.name ? { ...c, securityContext: security } : c,
    );
  const sparkAt = items(merged.containers).findIndex((c) => field(c, "name") === main.name);
  const spark = items(merged.containers)[sparkAt];
  // A sparkConf entry's words on the Spark container's command line point at the entry (they end its args).
  const words = field(spark, "args");
  if (Array.isArray(words))
    extras.argPaths.forEach((p, k) => {
      if (p !== undefined)
        mapper.add(`spec.containers[${sparkAt}].args[${words.length - extras.args.length + k}]`, p);
    });
  extras.unreadable.push(...jvmOptionsFromEnvironment(spark, role, rPath));
  const metadata = sparkMetadata(props, template, r);
  const replicas = role === "executor" ? { replicas: field(r, "instances") } : {};
  const site = rebuilt({ spec: merged, metadata }, rPath, mapper, {
    props: { metadata, spec: merged, ...replicas },
    ...(role === "executor" ? { replicasPath: "replicas" } : {}),
  });
  return extras.unreadable.length === 0
    ? site
    : { ...site, unreadable: [...(site.unreadable ?? []), ...extras.unreadable] };
}

/** True when no variable whose name starts with `prefix` is one the JVM reads as options. */
function prefixSafe(prefix: unknown): boolean {
  if (typeof prefix !== "string" || prefix === "") return false;
  return (
    !prefix.startsWith(JVM_OPTION_PREFIX) &&
    !JVM_OPTION_PREFIX.startsWith(prefix) &&
    !JVM_OPTION_NAMES.some((n) => n.startsWith(prefix))
  );
}

/**
 * JVM options in the Spark container's environment (as the pod has it: the template's container merged with what
 * Spark and the webhook set) can set Spark properties too (SparkConf loads every spark.* system property), past the
 * sparkConf verdicts: a JVM options variable whose value sets one, or that comes from another object, is unreadable;
 * so is an `envFrom` (a ConfigMap's or Secret's keys become variables, under its `prefix`) unless its prefix keeps
 * every such name out.
 */
function jvmOptionsFromEnvironment(spark: unknown, role: string, rPath: string): UnreadablePart[] {
  const out: UnreadablePart[] = [];
  for (const e of items(field(spark, "env"))) {
    const name = field(e, "name");
    const value = field(e, "value");
    if (
      typeof name === "string" &&
      JVM_OPTION_VARIABLES.test(name) &&
      (typeof value === "string" ? !jvmOptionsSafe(value) : field(e, "valueFrom") !== undefined)
    )
      out.push({
        path: rPath,
        reason: `${name} gives the ${role}'s JVM options that set Spark properties (or read them from a file or another object), which no rule reads`,
      });
  }
  for (const e of items(field(spark, "envFrom"))) {
    const prefix = field(e, "prefix");
    if (prefixSafe(prefix)) continue;
    const name = str(field(field(e, "configMapRef"), "name"));
    const plainPrefix = prefix === undefined ? "" : prefix;
    // A ConfigMap in the input is read with the pod (input-objects.ts); one not in it may hold any key.
    if (typeof name === "string" && typeof plainPrefix === "string" && field(e, "secretRef") === undefined)
      out.push({
        path: rPath,
        reason: `the ${role}'s Spark container takes its variables from ConfigMap ${JSON.stringify(name)} (envFrom${plainPrefix === "" ? "" : `, prefix ${JSON.stringify(plainPrefix)}`}), which is not in the input (scan reads it there; the pack judges one resource at a time): its keys could be JVM options (JAVA_TOOL_OPTIONS, JDK_JAVA_OPTIONS, _JAVA_OPTIONS, SPARK_SUBMIT_OPTS, SPARK_JAVA_OPT_*) that set Spark properties no rule reads; add the ConfigMap to the input, or give the envFrom a prefix that no such name starts with`,
        configMapEnv: { name, prefix: plainPrefix, role },
      });
    else
      out.push({
        path: rPath,
        reason: `an envFrom of the ${role}'s Spark container makes variables of another object's keys, which may be JVM options (JAVA_TOOL_OPTIONS, SPARK_JAVA_OPT_*) that set Spark properties no rule reads; give it a prefix that no such name starts with`,
      });
  }
  return out;
}

export function sparkSites(kind: string, props: unknown): PodSite[] | undefined {
  const appPath =
    kind === "SparkApplication" ? "spec" : kind === "ScheduledSparkApplication" ? "spec.template" : undefined;
  if (appPath === undefined) return undefined;
  if (isUnknown(at(props, appPath))) return unknownSite(props, appPath);
  return [sparkRole(props, appPath, "driver"), sparkRole(props, appPath, "executor")];
}

const VMI_PATHS: Readonly<Record<string, string>> = {
  VirtualMachine: "spec.template.spec",
  VirtualMachineInstance: "spec",
  VirtualMachineInstanceReplicaSet: "spec.template.spec",
  VirtualMachinePool: "spec.virtualMachineTemplate.spec.template.spec",
};

/** A VM's volume as its launcher pod has it: host disks are host paths, claims stay claims, the rest is not the host's. */
function launcherVolume(v: unknown): unknown {
  if (!isObj(v)) return v;
  const hostDisk = field(v, "hostDisk");
  if (hostDisk !== undefined)
    return { name: v.name, hostPath: isUnknown(hostDisk) ? hostDisk : { path: field(hostDisk, "path") } };
  if (field(v, "persistentVolumeClaim") !== undefined)
    return { name: v.name, persistentVolumeClaim: field(v, "persistentVolumeClaim") };
  const dv = field(v, "dataVolume");
  if (dv !== undefined) return { name: v.name, persistentVolumeClaim: { claimName: field(dv, "name") } };
  return { name: v.name, emptyDir: {} };
}

export function kubevirtSites(kind: string, props: unknown): PodSite[] | undefined {
  const vmiPath = VMI_PATHS[kind];
  if (vmiPath === undefined || !Object.hasOwn(VMI_PATHS, kind)) return undefined;
  const vmi = at(props, vmiPath);
  if (isUnknown(vmi)) return unknownSite(props, vmiPath);
  const mapper = new PathMapper(vmiPath);
  const volumes = partsOf(field(vmi, "volumes"), join(vmiPath, "volumes"));
  // The launcher pod mounts a service-account token only for a `serviceAccount` volume.
  const spec: Obj = {
    restartPolicy: "Never",
    automountServiceAccountToken: volumes.some((p) => field(p.value, "serviceAccount") !== undefined),
  };
  putList(
    spec,
    "volumes",
    volumes.map((p) => ({ ...p, value: launcherVolume(p.value) })),
    mapper,
  );
  const devices: string[] = [];
  for (const key of ["hostDevices", "gpus"])
    for (const d of items(at(vmi, `domain.devices.${key}`))) {
      const name = str(field(d, "deviceName"));
      devices.push(`${key === "gpus" ? "GPU" : "host device"} ${typeof name === "string" ? name : "?"}`);
    }
  const metaPath = vmiPath === "spec" ? "metadata" : `${vmiPath.slice(0, -".spec".length)}.metadata`;
  return [
    rebuilt({ spec, metadata: (at(props, metaPath) as Obj | undefined) ?? {} }, vmiPath, mapper, {
      vm: true,
      devices,
      controller: kind !== "VirtualMachineInstance",
    }),
  ];
}
