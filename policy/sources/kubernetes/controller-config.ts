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
 * - Istio (the sidecar injector's `istio-sidecar-injector` ConfigMap: `config` and `values` template the proxy
 *   container and its NET_ADMIN init container injected into every pod of an injected namespace).
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
};

/** Why a ConfigMap sets a controller's defaults for every workload, or undefined. */
export function controllerDefaults(props: unknown): string | undefined {
  const meta = isObj(props) ? props.metadata : undefined;
  const name = isObj(meta) ? meta.name : undefined;
  if (typeof name !== "string" || !Object.hasOwn(CONTROLLER_DEFAULTS, name)) return undefined;
  const [keys, why] = CONTROLLER_DEFAULTS[name] ?? [[], ""];
  for (const section of ["data", "binaryData"]) {
    const data = isObj(props) ? (props as Record<string, unknown>)[section] : undefined;
    if (!isObj(data)) continue;
    const set = keys.filter((k) => Object.hasOwn(data, k) && data[k] !== "" && data[k] !== null);
    if (set.length > 0)
      return `ConfigMap ${JSON.stringify(name)} sets ${set.join(", ")}: ${why}, after the rules judged them`;
  }
  return undefined;
}
