/**
 * ConfigMaps a controller reads as defaults for every workload it runs: what they set reaches pods after the rules
 * judged them, so such a ConfigMap fails closed (`sandbox-disallow-unjudged-workloads`) when it sets one of those
 * keys. Matched by name (the controller's namespace is an install choice), from each project's source:
 *
 * - Argo Workflows (`workflow-controller-configmap`): every setting of its Config has a verdict
 *   (./controller-config-argo.ts);
 * - Tekton Pipelines v1.11.0 (pkg/apis/config/default.go, `config-defaults`): every key it reads has a verdict;
 *   `default-task-run-workspace-binding` (bound to every workspace a TaskRun leaves unbound: pkg/reconciler/taskrun)
 *   passes only as an emptyDir;
 * - Argo Rollouts v1.10.1 (`argo-rollouts-config`, utils/config/config.go): its plugin lists name binaries the
 *   controller downloads from their `location` and runs (utils/plugin/downloader.go);
 * - Istio (the sidecar injector's `istio-sidecar-injector` ConfigMap, `istio-sidecar-injector-<revision>` for a
 *   revisioned install: `config` and `values` template the proxy container and its NET_ADMIN init container injected
 *   into every pod of an injected namespace);
 * - Rancher local-path-provisioner (`local-path-config`: `helperPod.yaml` is the pod it runs on the node for every
 *   claim, `setup`/`teardown` the scripts that pod runs, `config.json` the node folders it hands out).
 *
 * Argo also runs executor plugins from ConfigMaps labelled `workflows.argoproj.io/configmap-type: ExecutorPlugin` (a
 * sidecar added to every pod).
 */
import { isObj } from "../lenient";
import { argoConfigReason, type FieldVerdict, inert, refused } from "./controller-config-argo";
import { controllerText, goFold } from "./go-json";

const CONTROLLER_DEFAULTS: Readonly<Record<string, readonly [readonly string[], string]>> = {
  "istio-sidecar-injector": [
    ["config", "values"],
    "Istio's injector adds the containers it templates (a NET_ADMIN init container among them) to every injected pod",
  ],
  "local-path-config": [
    ["helperPod.yaml", "setup", "teardown", "config.json"],
    "the local-path provisioner runs its helper pod and scripts on the node, over the folders it hands out, for every claim",
  ],
};

const TEKTON_POD = refused("the Tekton Pipelines controller merges it into every TaskRun's pod");

/** The volume bound to every workspace a TaskRun leaves unbound: a v1 WorkspaceBinding, decoded by encoding/json. */
const workspaceBinding: FieldVerdict = (v) => {
  let binding: unknown;
  try {
    binding = typeof v === "string" ? controllerText(v) : v;
  } catch (e) {
    return `it does not read as a workspace binding (${(e as Error).message})`;
  }
  const allowed = ["emptyDir", "name", "subPath"].map(goFold);
  if (binding === null || (isObj(binding) && Object.keys(binding).every((k) => allowed.includes(goFold(k)))))
    return undefined;
  return "the Tekton Pipelines controller binds this volume to every workspace a TaskRun leaves unbound (pkg/reconciler/taskrun), a volume no rule reads; only an emptyDir passes";
};

/** Every key of Tekton's `config-defaults` (pkg/apis/config/default.go); the controller looks each up by its exact name. */
const TEKTON_DEFAULTS: Readonly<Record<string, FieldVerdict>> = {
  "default-pod-template": TEKTON_POD,
  "default-affinity-assistant-pod-template": TEKTON_POD,
  "default-container-resource-requirements": TEKTON_POD,
  "default-task-run-workspace-binding": workspaceBinding,
  "default-cloud-events-sink": refused(
    "the Tekton Pipelines controller sends every run, its results among them, to this address: a way out of the task no NetworkPolicy covers",
  ),
  "default-resolver-type": refused(
    "the resolver that fetches every task a reference names without one, a task no rule reads",
  ),
  "default-timeout-minutes": inert,
  "default-service-account": inert, // the account's own Secrets are judged where the input shows it (creds-init)
  "default-managed-by-label-value": inert,
  "default-max-matrix-combinations-count": inert,
  "default-forbidden-env": inert,
  "default-imagepullbackoff-timeout": inert,
  "default-maximum-resolution-timeout": inert,
  "default-sidecar-log-polling-interval": inert,
  "default-step-ref-concurrency-limit": inert,
};

/** Whether a plugin list of Argo Rollouts names any plugin (an empty or null list names none). */
const rolloutsPlugins: FieldVerdict = (v) => {
  let list: unknown;
  try {
    list = typeof v === "string" ? controllerText(v) : v;
  } catch {
    list = v;
  }
  return list === null || (Array.isArray(list) && list.length === 0)
    ? undefined
    : "the Argo Rollouts controller downloads each plugin from its location (or takes the file named) and runs it (utils/plugin/downloader.go), a program no rule reads";
};

/**
 * The keys of each controller's ConfigMap judged one by one. The controller looks each up by its exact name and
 * ignores others (Knative Serving's own `config-defaults` holds other keys: not judged here).
 */
const KEYED: Readonly<Record<string, Readonly<Record<string, FieldVerdict>>>> = {
  "config-defaults": TEKTON_DEFAULTS,
  "argo-rollouts-config": {
    trafficRouterPlugins: rolloutsPlugins,
    metricProviderPlugins: rolloutsPlugins,
    stepPlugins: rolloutsPlugins,
  },
};

function keyedReason(name: string, data: Readonly<Record<string, unknown>>): string | undefined {
  const table = KEYED[name] ?? {};
  const found: string[] = [];
  for (const [key, value] of Object.entries(data)) {
    const verdict = Object.hasOwn(table, key) ? table[key] : undefined;
    const why = verdict === undefined || value === "" || value === null ? undefined : verdict(value);
    if (why !== undefined) found.push(`${key}: ${why}`);
  }
  return found.length === 0 ? undefined : `ConfigMap ${JSON.stringify(name)} sets ${found.join("; ")}`;
}

/** Why a ConfigMap sets a controller's defaults for every workload, or undefined. */
export function controllerDefaults(props: unknown): string | undefined {
  const meta = isObj(props) ? props.metadata : undefined;
  const name = isObj(meta) ? meta.name : undefined;
  const labels = isObj(meta) && isObj(meta.labels) ? meta.labels : {};
  if (labels["workflows.argoproj.io/configmap-type"] === "ExecutorPlugin")
    return "an Argo executor plugin: the controller adds its sidecar container to every workflow pod, after the rules judged them";
  if (typeof name !== "string") return undefined;
  const data = isObj(props) && isObj(props.data) ? props.data : {};
  // Argo and Tekton read `data` only; their `binaryData` reaches no controller.
  if (name === "workflow-controller-configmap") return argoConfigReason(name, data);
  if (Object.hasOwn(KEYED, name)) return keyedReason(name, data);
  const key = name.startsWith("istio-sidecar-injector-") ? "istio-sidecar-injector" : name;
  if (!Object.hasOwn(CONTROLLER_DEFAULTS, key)) return undefined;
  const [keys, why] = CONTROLLER_DEFAULTS[key] ?? [[], ""];
  for (const section of ["data", "binaryData"]) {
    const data = isObj(props) ? (props as Record<string, unknown>)[section] : undefined;
    if (!isObj(data)) continue;
    const set = keys.filter((k) => Object.hasOwn(data, k) && data[k] !== "" && data[k] !== null);
    if (set.length > 0)
      return `ConfigMap ${JSON.stringify(name)} sets ${set.join(", ")}: ${why}, after the rules judged them`;
  }
  return undefined;
}
