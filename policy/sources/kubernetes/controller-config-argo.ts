/**
 * The Argo Workflows controller's ConfigMap (`workflow-controller-configmap`), read as the controller reads it
 * (argo-workflows v3.7.18 config/controller.go `parseConfigMap`): the `config` key's text, or else every `data` key
 * written as a top-level key of one YAML text (a value with a line break indented under its key), decoded with
 * sigs.k8s.io/yaml `UnmarshalStrict` into config/config.go `Config`: YAML to JSON, then encoding/json, which matches a
 * key to a field without regard to case (`MainContainer`, `"mainContainer"`, JSON text) and refuses unknown keys.
 * Every top-level field of `Config` has a verdict; a key that is none of them fails closed.
 */
import { isObj } from "../lenient";
import { controllerText, goFold } from "./go-json";

/** What a setting does to a controller's pods: undefined when it does nothing to them, else why it fails. */
export type FieldVerdict = (value: unknown) => string | undefined;

export const inert: FieldVerdict = () => undefined;
export const refused =
  (why: string): FieldVerdict =>
  () =>
    why;

const ARTIFACT_REPOSITORY =
  "the repository every artifact goes to: the executor mounts the Secrets holding its credentials into the pod's containers (workflowpod.go); only archiveLogs passes";

/** config/config.go `Config`, field by field. */
const FIELDS: Readonly<Record<string, FieldVerdict>> = {
  executor: refused("the wait and init container of every workflow pod (workflowpod.go)"),
  mainContainer: refused("merged into every template's main container (workflowpod.go)"),
  workflowDefaults: refused("a Workflow merged under every workflow (operator.go setExecWorkflow)"),
  kubeConfig: refused(
    "the controller mounts this Secret's kubeconfig into every workflow pod (workflowpod.go), a credential no rule reads",
  ),
  images: refused(
    "the command the executor runs for every container of each image named that sets none of its own (entrypoint lookup), which no rule reads",
  ),
  artifactRepository: (v) =>
    isObj(v) &&
    Object.entries(v).every(([k, x]) => goFold(k) === goFold("archiveLogs") && typeof x === "boolean")
      ? undefined
      : ARTIFACT_REPOSITORY,
  // The controller's own settings: events, metrics, its database, the UI's links, colours and sign-in, limits and
  // timings of its work. None reaches a pod.
  nodeEvents: inert,
  workflowEvents: inert,
  namespace: inert,
  instanceID: inert,
  metricsConfig: inert,
  telemetryConfig: inert,
  parallelism: inert,
  namespaceParallelism: inert,
  resourceRateLimit: inert,
  persistence: inert,
  links: inert,
  columns: inert,
  podSpecLogStrategy: inert,
  podGCGracePeriodSeconds: inert,
  podGCDeleteDelayDuration: inert,
  workflowRestrictions: inert,
  initialDelay: inert,
  retentionPolicy: inert,
  navColor: inert,
  sso: inert,
  synchronization: inert,
};

const BY_FOLD = new Map(Object.keys(FIELDS).map((k) => [goFold(k), k]));

/** The YAML text the controller decodes: `config`, or every data key written under its name. */
function configText(data: Readonly<Record<string, unknown>>): string {
  if (typeof data.config === "string") return data.config;
  let text = "";
  for (const [name, value] of Object.entries(data)) {
    const v = typeof value === "string" ? value : "";
    text += v.includes("\n")
      ? `${name}:\n  ${v
          .replace(/^\n+|\n+$/g, "")
          .split("\n")
          .join("\n  ")}\n`
      : `${name}: ${v}\n`;
  }
  return text;
}

/** Why the Argo Workflows controller's ConfigMap changes workflow pods after the rules judged them, or undefined. */
export function argoConfigReason(name: string, data: Readonly<Record<string, unknown>>): string | undefined {
  const where =
    typeof data.config === "string"
      ? `ConfigMap ${JSON.stringify(name)} key config`
      : `ConfigMap ${JSON.stringify(name)}`;
  let config: unknown;
  try {
    config = controllerText(configText(data));
  } catch (e) {
    return `${where} does not read as the controller's YAML (${(e as Error).message}): what it sets cannot be judged`;
  }
  if (config === null || config === undefined) return undefined;
  if (!isObj(config)) return `${where} is not a mapping of the controller's settings: it cannot be judged`;
  const found: string[] = [];
  for (const [key, value] of Object.entries(config)) {
    const field = BY_FOLD.get(goFold(key));
    if (field !== undefined && value === null) continue; // encoding/json leaves the field unset
    if (field === undefined) {
      found.push(
        `${key} is no setting of the Argo Workflows controller's Config (allowed: ${Object.keys(FIELDS).join(", ")})`,
      );
      continue;
    }
    const why = FIELDS[field]?.(value);
    if (why !== undefined) found.push(`${key === field ? key : `${key} (read as ${field})`}: ${why}`);
  }
  return found.length === 0
    ? undefined
    : `${where} sets what the Argo Workflows controller applies to every workflow's pods, after the rules judged them: ${found.join("; ")}`;
}
