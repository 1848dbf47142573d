import { BROKER_CONFIG_ENV } from "../../components/model";
import {
  brokerConfigOf,
  isBrokerCredential,
  isBrokerSecretMount,
  isGenuineBroker,
} from "../rules/broker-identity";
import { parseKubeType } from "../sources/kubernetes/workloads";
import { field, REDACTED_SECRET, str } from "../sources/lenient";
import { isUnknown, type WorkloadView } from "../workload";
import { brokerConfigProblem } from "./haproxy-config";
import { CONFIG_FILES } from "./network-policy";
import { configFileOf } from "./require-proxy-only-egress";
import { defineStackRule, type StackFinding, type StackResource, type StackResourceRef } from "./types";

/** Resource types whose outputs are credentials (the engine marks them secret). */
const SECRET_SOURCE_TYPE =
  /(?:^random:index\/randomPassword:|^tls:index\/privateKey:|^kubernetes:core\/v1:Secret$|secretsmanager|secretmanager|keyvault|^vault:|[Pp]assword|[Pp]rivateKey|AccessToken|ApiKey|[Cc]redential|:Secret(?:Version)?$)/;

/**
 * Inputs of a Docker container that never reach the task: the provider's own name and image reference, and where the
 * engine ships the logs (a log driver's token is the daemon's). Every other input does: the environment, command,
 * files, mounts, the healthcheck the daemon runs inside it, its hostname, DNS settings and /etc/hosts entries.
 */
const DOCKER_NOT_TASK = new Set(["name", "image", "logDriver", "logOpts"]);

/** Task-facing input properties of a Docker container; a Kubernetes pod carrier's whole `spec`. */
function taskFields(r: StackResource, w: WorkloadView): string[] {
  if (w.origin.backend === "kubernetes") return ["spec"];
  const keys = new Set([
    ...Object.keys(typeof r.props === "object" && r.props !== null ? r.props : {}),
    ...Object.keys(r.propertyDependencies),
    ...r.additionalSecretOutputs,
  ]);
  return [...keys].filter((k) => !DOCKER_NOT_TASK.has(k)).sort();
}

function isSecretSource(ref: StackResourceRef): boolean {
  return SECRET_SOURCE_TYPE.test(ref.type) || ref.additionalSecretOutputs.length > 0;
}

/** Strings that are secrets somewhere in the stack: Kubernetes Secret data, generated passwords and keys. */
function knownSecretValues(resources: readonly StackResource[]): { value: string; where: string }[] {
  const out: { value: string; where: string }[] = [];
  const add = (v: unknown, where: string) => {
    if (typeof v === "string" && v.length >= 8) out.push({ value: v, where });
  };
  for (const r of resources) {
    const kind = parseKubeType(r.type)?.kind;
    if (kind === "Secret") {
      for (const [k, v] of Object.entries((field(r.props, "stringData") ?? {}) as object))
        add(v, `Secret "${r.name}" key ${k}`);
      for (const [k, v] of Object.entries((field(r.props, "data") ?? {}) as object)) {
        if (typeof v === "string")
          add(Buffer.from(v, "base64").toString("utf8"), `Secret "${r.name}" key ${k}`);
      }
    }
    if (r.type.startsWith("random:index/randomPassword:"))
      add(str(field(r.props, "result")), `RandomPassword "${r.name}"`);
    if (r.type.startsWith("tls:index/privateKey:"))
      add(str(field(r.props, "privateKeyPem")), `PrivateKey "${r.name}"`);
    for (const o of r.additionalSecretOutputs)
      add(str(field(r.props, o)), `${r.type.split(":").pop() ?? r.type} "${r.name}" output ${o}`);
  }
  return out;
}

/** Every string in the task-facing parts of a workload's props, with where it sits. */
function taskStrings(r: StackResource, w: WorkloadView): { value: string; where: string }[] {
  const out: { value: string; where: string }[] = [];
  const walk = (v: unknown, where: string) => {
    if (typeof v === "string") out.push({ value: v, where });
    else if (Array.isArray(v)) {
      for (const [i, x] of v.entries()) walk(x, `${where}[${i}]`);
    } else if (typeof v === "object" && v !== null && !isUnknown(v))
      for (const [k, x] of Object.entries(v)) walk(x, `${where}.${k}`);
  };
  for (const f of taskFields(r, w)) walk(field(r.props, f), f);
  return out;
}

const text = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/**
 * The genuine broker's generated configuration: its environment's (Docker, and first on Kubernetes, as the image's
 * entry script reads it), or the `haproxy.cfg` of the ConfigMap its pod mounts, found in the same stack (Kubernetes:
 * the file HAProxy reads, not the ConfigMap's other keys). Undefined when it cannot be read, which fails the broker
 * closed.
 */
function brokerConfig(
  r: StackResource,
  w: WorkloadView,
  resources: readonly StackResource[],
): string | undefined {
  if (w.origin.backend !== "kubernetes") return brokerConfigOf(w);
  const variable = w.containers[0]?.env.find((x) => x.name === BROKER_CONFIG_ENV);
  if (variable !== undefined && variable.value !== "") return brokerConfigOf(w);
  const spec = field(field(field(r.props, "spec"), "template"), "spec") ?? field(r.props, "spec");
  const volumes = field(spec, "volumes");
  const names = (Array.isArray(volumes) ? volumes : [])
    .map((v) => text(field(field(v, "configMap"), "name")))
    .filter((n): n is string => n !== undefined);
  const namespace = text(field(field(r.props, "metadata"), "namespace"));
  for (const other of resources) {
    if (parseKubeType(other.type)?.kind !== "ConfigMap") continue;
    const meta = field(other.props, "metadata");
    if (!names.includes(text(field(meta, "name")) ?? "")) continue;
    if (namespace !== undefined && text(field(meta, "namespace")) !== namespace) continue;
    const [file] = configFileOf(other, CONFIG_FILES.broker);
    return typeof file === "string" ? file : undefined;
  }
  return undefined;
}

/**
 * Stack rule: no Pulumi secret reaches a task's env, command, labels or mounts. Judges what a stack policy can see:
 * task inputs computed from a secret-producing resource (property dependencies), inputs the program marked secret
 * (`additionalSecretOutputs`), values equal to a Secret's data or a generated password in the same stack, and the
 * marker the secret-env remediation leaves in place of a Pulumi secret. Only the secrets broker may hold
 * credentials, in its credential variables (see policy/rules/broker-identity.ts: a label alone makes no broker),
 * and a broker without routes is refused.
 */
export const disallowSecretFlow = defineStackRule({
  id: "sandbox-disallow-secret-flow",
  description:
    "No Pulumi secret or secret-producing resource flows into a task's env, command, labels or mounts.",
  mission: true,
  enforcementLevel: "mandatory",
  severity: "critical",
  crosswalk: {
    cis: ["4.10"],
    kyverno: ["disallow-secrets-from-env-vars"],
    checkov: ["CKV_K8S_35"],
    kubeLinter: ["env-var-secret"],
  },
  configSchema: {
    properties: {
      allowedRoles: {
        type: "array",
        items: { type: "string" },
        description:
          "sandbox.role values whose workloads may hold credentials besides the secrets broker, which always may in its credential variables. Defaults to none.",
        default: [],
      },
    },
  },
  defaults: { allowedRoles: [] as string[] },
  remediationSteps:
    "Move the credential to the broker (or proxy) and let it act for the task; never pass it into the task container.",
  check(resources, config) {
    const out: StackFinding[] = [];
    const secrets = knownSecretValues(resources);
    for (const r of resources) {
      const w = r.subject;
      if (w === undefined || w.subject !== "workload") continue;
      if (w.role !== undefined && config.allowedRoles.includes(w.role)) continue;
      const who = `${w.origin.kind} "${w.origin.name}"`;
      const broker = isGenuineBroker(w);
      const brokerText = broker ? brokerConfig(r, w, resources) : undefined;
      // Its configuration read as HAProxy reads it: a broker that loads code or forwards anywhere sends its
      // credentials (and the tasks' requests) wherever that says.
      const problem = brokerText === undefined ? undefined : brokerConfigProblem(brokerText);
      if (broker && problem !== undefined)
        out.push({ message: `${who}: the secrets broker: ${problem}`, urn: r.urn });
      else if (broker && !/^backend route_/m.test(brokerText ?? "")) {
        out.push({
          message: `${who}: the secrets broker has no routes (or its configuration is not in the stack), so no credential of it can be used`,
          urn: r.urn,
        });
      }
      // The broker's credential variables are where secrets belong: its env list may be computed from them.
      const brokerEntries = new Set(
        broker ? (w.containers[0]?.env ?? []).filter((e) => isBrokerCredential(w, e)).map((e) => e.path) : [],
      );
      for (const f of taskFields(r, w)) {
        if (broker && f === "envs") continue;
        for (const dep of r.propertyDependencies[f] ?? []) {
          if (isSecretSource(dep)) {
            out.push({
              message: `${who}: ${f} is computed from ${dep.type} "${dep.name}", which produces a secret`,
              urn: r.urn,
            });
          }
        }
        if (r.additionalSecretOutputs.includes(f))
          out.push({ message: `${who}: ${f} is marked secret (additionalSecretOutputs)`, urn: r.urn });
      }
      const seen = new Set<string>();
      for (const s of taskStrings(r, w)) {
        if (brokerEntries.has(s.where)) continue;
        if (s.value.includes(REDACTED_SECRET)) {
          out.push({
            message: `${who}: ${s.where} held a Pulumi secret (redacted by the pack; the value is not shown)`,
            urn: r.urn,
          });
          continue;
        }
        const hit = secrets.find((x) => s.value.includes(x.value));
        if (hit !== undefined && !seen.has(s.where)) {
          seen.add(s.where);
          out.push({
            message: `${who}: ${s.where} holds the value of ${hit.where} (the value is not shown)`,
            urn: r.urn,
          });
        }
      }
      if (w.origin.backend === "kubernetes") {
        for (const c of w.containers)
          for (const m of c.mounts) {
            if (m.type === "secret" && !isBrokerSecretMount(w, m))
              out.push({
                message: `${who}: ${c.name} mounts Secret volume "${m.volume ?? "?"}"`,
                urn: r.urn,
              });
          }
      }
    }
    return out;
  },
});
