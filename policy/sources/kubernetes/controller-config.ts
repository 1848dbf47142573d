/**
 * ConfigMaps a controller reads as defaults for every workload it runs: what they set reaches pods after the rules
 * judged them, so such a ConfigMap fails closed (`sandbox-disallow-unjudged-workloads`) when it sets one of those
 * keys. Matched by name (the controller's namespace is an install choice), from each project's source:
 *
 * - Argo Workflows (workflow/config/config.go `Config`, read from `workflow-controller-configmap`):
 *   `workflowDefaults` (a Workflow merged under every workflow), `mainContainer` (merged into every main
 *   container), `executor` (the wait/init container of every pod), `podSpecLogStrategy` excepted;
 * - Tekton Pipelines (pkg/apis/config/default.go, `config-defaults`): `default-pod-template` and
 *   `default-affinity-assistant-pod-template` (merged under every TaskRun's and affinity assistant's pod template),
 *   `default-container-resource-requirements`;
 * - Istio (the sidecar injector's `istio-sidecar-injector` ConfigMap, `istio-sidecar-injector-<revision>` for a
 *   revisioned install: `config` and `values` template the proxy container and its NET_ADMIN init container injected
 *   into every pod of an injected namespace);
 * - Rancher local-path-provisioner (`local-path-config`: `helperPod.yaml` is the pod it runs on the node for every
 *   claim, `setup`/`teardown` the scripts that pod runs, `config.json` the node folders it hands out).
 *
 * Argo also reads its whole configuration from one `config` key (a YAML text), and runs executor plugins from
 * ConfigMaps labelled `workflows.argoproj.io/configmap-type: ExecutorPlugin` (a sidecar added to every pod).
 */
import { isObj } from "../lenient";

const CONTROLLER_DEFAULTS: Readonly<Record<string, readonly [readonly string[], string]>> = {
  "workflow-controller-configmap": [
    ["workflowDefaults", "mainContainer", "executor"],
    "the Argo Workflows controller merges it into every workflow's pods",
  ],
  "config-defaults": [
    [
      "default-pod-template",
      "default-affinity-assistant-pod-template",
      "default-container-resource-requirements",
    ],
    "the Tekton Pipelines controller merges it into every TaskRun's pod",
  ],
  "istio-sidecar-injector": [
    ["config", "values"],
    "Istio's injector adds the containers it templates (a NET_ADMIN init container among them) to every injected pod",
  ],
  "local-path-config": [
    ["helperPod.yaml", "setup", "teardown", "config.json"],
    "the local-path provisioner runs its helper pod and scripts on the node, over the folders it hands out, for every claim",
  ],
};

/** Keys of Argo's `config` text that reach every workflow's pods. */
const ARGO_CONFIG_KEYS = /^(?:workflowDefaults|mainContainer|executor)\s*:/m;

/** Why a ConfigMap sets a controller's defaults for every workload, or undefined. */
export function controllerDefaults(props: unknown): string | undefined {
  const meta = isObj(props) ? props.metadata : undefined;
  const name = isObj(meta) ? meta.name : undefined;
  const labels = isObj(meta) && isObj(meta.labels) ? meta.labels : {};
  if (labels["workflows.argoproj.io/configmap-type"] === "ExecutorPlugin")
    return "an Argo executor plugin: the controller adds its sidecar container to every workflow pod, after the rules judged them";
  if (typeof name !== "string") return undefined;
  const data = isObj(props) && isObj(props.data) ? props.data : {};
  const config = data.config;
  if (name === "workflow-controller-configmap" && typeof config === "string" && ARGO_CONFIG_KEYS.test(config))
    return `ConfigMap ${JSON.stringify(name)} sets workflow defaults in its config text: the Argo Workflows controller merges them into every workflow's pods, after the rules judged them`;
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
