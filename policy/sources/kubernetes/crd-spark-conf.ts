/**
 * What a SparkApplication gives its driver and executor pods besides the role's container fields (kubeflow
 * spark-operator v2 api/v1beta2 `SparkPodSpec`, and Spark on Kubernetes' own configuration, which the operator
 * passes to spark-submit as `--conf`; spark.apache.org/docs/latest/running-on-kubernetes.html):
 *
 * - the role's `secrets` (`{name, path}`: a Secret volume mounted at `path`), `envSecretKeyRefs` (`{ENV: {name,
 *   key}}`), `envVars` (`{ENV: value}`), `configMaps` (`{name, path}`), `javaOptions` (the JVM's command line);
 * - the app's `arguments` (the driver's command line) and `sparkConf`, every entry of which is on spark-submit's
 *   command line (`--conf key=value`, the driver's command line here, where the credential checks read it):
 *   `spark.kubernetes.<role>.volumes.<type>.<name>.mount.path|readOnly|subPath` with `.options.path` (hostPath),
 *   `.options.claimName`, `.options.server` (nfs), `.options.medium|sizeLimit` (emptyDir): volumes of the role's pod;
 *   `spark.kubernetes.<role>.secrets.<secret>=<path>` (a Secret volume), `spark.kubernetes.<role>.secretKeyRef.<ENV>=
 *   <secret>:<key>`, `spark.kubernetes.driverEnv.<ENV>` and `spark.executorEnv.<ENV>` (environment),
 *   `spark.kubernetes.<role>.podTemplateFile` and `.podTemplateContainerName` (replaced by the operator's own, which
 *   hold the role's `template`: not read).
 */
import { isUnknown } from "../../workload";
import { entries, field, items, join, str } from "../lenient";

type Obj = Record<string, unknown>;

/** What the role's pod gets: volumes, the main container's mounts, env and args, and parts that cannot be read. */
export interface SparkExtras {
  readonly volumes: Obj[];
  readonly mounts: Obj[];
  readonly env: Obj[];
  /** Command-line words; a value not known yet is UNKNOWN, which the credential check reports. */
  readonly args: unknown[];
  /** Where each of `args` is written, when it is one sparkConf entry's. */
  readonly argPaths: (string | undefined)[];
  readonly unreadable: { path: string; reason: string }[];
}

const VOLUME_TYPES: Readonly<Record<string, string>> = {
  hostPath: "hostPath",
  emptyDir: "emptyDir",
  nfs: "nfs",
  persistentVolumeClaim: "persistentVolumeClaim",
};

/** The extras of `role` ("driver" | "executor") of the app at `appPath`; `webhook`: the operator's webhook mutates its pods. */
export function sparkExtras(
  app: unknown,
  appPath: string,
  role: "driver" | "executor",
  webhook = true,
): SparkExtras {
  const out: SparkExtras = { volumes: [], mounts: [], env: [], args: [], argPaths: [], unreadable: [] };
  const r = field(app, role);
  items(field(r, "secrets")).forEach((s, i) => {
    const name = `spark-secret-${i}`;
    out.volumes.push({ name, secret: { secretName: field(s, "name") } });
    out.mounts.push({ name, mountPath: field(s, "path") ?? `/mnt/secrets/${i}` });
  });
  items(webhook ? field(r, "configMaps") : undefined).forEach((c, i) => {
    const name = `spark-configmap-${i}`;
    out.volumes.push({ name, configMap: { name: field(c, "name") } });
    out.mounts.push({ name, mountPath: field(c, "path") ?? `/mnt/configmaps/${i}` });
  });
  for (const [k, ref] of entries(field(r, "envSecretKeyRefs")))
    out.env.push({
      name: k,
      valueFrom: { secretKeyRef: { name: field(ref, "name"), key: field(ref, "key") } },
    });
  for (const [k, v] of entries(field(r, "envVars"))) out.env.push({ name: k, value: v });
  const java = str(field(r, "javaOptions"));
  if (typeof java === "string") out.args.push(...java.split(/\s+/).filter((a) => a !== ""));
  if (role === "driver")
    for (const a of items(field(app, "arguments"))) if (typeof a === "string") out.args.push(a);
  const conf = field(app, "sparkConf");
  if (isUnknown(conf)) {
    out.unreadable.push({ path: `${appPath}.sparkConf`, reason: "sparkConf is not known yet" });
    return out;
  }
  const prefix = `spark.kubernetes.${role}.`;
  const vols = new Map<string, { type: string; opts: Obj; mount: Obj }>();
  for (const [key, value] of entries(conf)) {
    const at = `${appPath}.sparkConf["${key}"]`;
    const text = typeof value === "string" ? value : String(value);
    // spark-submit's command line holds every entry (`--conf key=value`), and the driver's spark.properties.
    if (role === "driver") {
      out.args.push("--conf", isUnknown(value) ? value : `${key}=${text}`);
      out.argPaths.length = out.args.length - 2;
      const entry = join(join(appPath, "sparkConf"), key);
      out.argPaths.push(entry, entry);
    }
    const env =
      role === "driver"
        ? /^spark\.kubernetes\.driverEnv\.(.+)$/.exec(key)
        : /^spark\.executorEnv\.(.+)$/.exec(key);
    if (env?.[1] !== undefined) out.env.push({ name: env[1], value: text });
    if (!key.startsWith(prefix)) continue;
    const rest = key.slice(prefix.length);
    // The operator v2.5 passes its own pod template file and container name for each role after sparkConf, always
    // (submission.go driverPodTemplateOption, executorPodTemplateOption: the role's `template`, else a pod of just
    // the Spark container, written to /tmp/spark/<submission>/); spark-submit keeps a property's last `--conf`, so
    // these entries are never read.
    if (rest === "podTemplateFile" || rest === "podTemplateContainerName") continue;
    const secret = /^secrets\.(.+)$/.exec(rest);
    if (secret?.[1] !== undefined) {
      const name = `spark-conf-secret-${out.volumes.length}`;
      out.volumes.push({ name, secret: { secretName: secret[1] } });
      out.mounts.push({ name, mountPath: text });
      continue;
    }
    const ref = /^secretKeyRef\.(.+)$/.exec(rest);
    if (ref?.[1] !== undefined) {
      const [name, k] = text.split(":");
      out.env.push({ name: ref[1], valueFrom: { secretKeyRef: { name, key: k } } });
      continue;
    }
    const vol = /^volumes\.([^.]+)\.([^.]+)\.(mount|options)\.(.+)$/.exec(rest);
    if (vol === null) continue;
    const [, type = "", vname = "", part, option = ""] = vol;
    if (!Object.hasOwn(VOLUME_TYPES, type)) {
      out.unreadable.push({
        path: at,
        reason: `a Spark volume of type ${JSON.stringify(type)} the rules cannot read`,
      });
      continue;
    }
    const v = vols.get(vname) ?? { type, opts: {}, mount: { name: `spark-${vname}` } };
    if (part === "mount") {
      if (option === "path") v.mount.mountPath = text;
      else if (option === "readOnly") v.mount.readOnly = text.trim().toLowerCase() === "true";
      else if (option === "subPath") v.mount.subPath = text;
    } else v.opts[option] = text;
    vols.set(vname, v);
  }
  for (const [vname, v] of vols) {
    const source =
      v.type === "hostPath"
        ? { path: v.opts.path }
        : v.type === "persistentVolumeClaim"
          ? { claimName: v.opts.claimName, readOnly: v.opts.readOnly === "true" }
          : v.type === "nfs"
            ? { server: v.opts.server, path: v.opts.path }
            : { ...(v.opts.medium === undefined ? {} : { medium: v.opts.medium }) };
    out.volumes.push({ name: `spark-${vname}`, [VOLUME_TYPES[v.type] ?? v.type]: source });
    out.mounts.push(v.mount);
  }
  return out;
}
