/**
 * Proxy-only egress, judged over a whole stack: the workloads come from the adapters (every Docker container, every
 * pod of every carrier kind they know); only what no view holds is read from props: Docker networks, NetworkPolicies
 * and the proxy's ConfigMap.
 */
import { LABELS, PROXY_CONFIG_ENV, PROXY_IMAGE } from "../../components/model";
import { unchecked } from "../rules/helpers";
import { parseKubeType } from "../sources/kubernetes/sites";
import { field, str } from "../sources/lenient";
import { adaptResources } from "../sources/subject";
import { isUnknown, Unreadable, type Val, type WorkloadView } from "../workload";
import { brokerConfigProblem } from "./haproxy-config";
import {
  bareImage,
  CONFIG_FILES,
  judgeNetworkPolicy,
  type NetworkPolicy,
  policyTypes,
  SERVICES,
  type ServicePod,
  type ServiceRole,
  selects,
  serviceContainerExtra,
  servicePod,
} from "./network-policy";
import { allowlistProblem } from "./squid-config";
import { defineStackRule, type StackFinding, type StackResource } from "./types";

const DOCKER_NETWORK = "docker:index/network:Network";
/** The variables that send a task's traffic through a proxy. */
const PROXY_VARS = ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"];
/** Docker networks with a route off the machine, whatever the stack declares. */
const ROUTED_NETWORKS = ["host", "bridge", "default"];

/**
 * A service's configuration judged: the proxy's allowlist as Squid reads it (squid-config.ts), the broker's routes as
 * HAProxy reads them (haproxy-config.ts), or why it cannot be read; nothing when absent.
 */
function configFindings(
  who: string,
  config: Val<string>,
  urn: string,
  role: ServiceRole = "proxy",
): StackFinding[] {
  if (config === undefined) return [];
  if (isUnknown(config)) return [{ ...unchecked(`${who}: its configuration`, undefined, config), urn }];
  const problem = role === "proxy" ? allowlistProblem(config) : brokerConfigProblem(config);
  return problem === undefined ? [] : [{ message: `${who}: ${problem}`, urn }];
}

/** A Docker container's variables that have a value, by name; a repeated name's last entry wins, as in the engine. */
function dockerEnv(w: WorkloadView): Map<string, Val<string>> {
  const out = new Map<string, Val<string>>();
  for (const c of w.containers)
    for (const e of c.env) if (typeof e.name === "string" && e.value !== undefined) out.set(e.name, e.value);
  return out;
}

/** Docker: a proxy's allowlist, or a proxy-mode task on a network with a route out. */
function judgeContainer(
  w: WorkloadView,
  urn: string,
  declared: ReadonlyMap<string, DeclaredNetwork>,
): StackFinding[] {
  const env = dockerEnv(w);
  const who = `${w.origin.kind} "${w.origin.name}"`;
  const out: StackFinding[] = [];
  if (w.labels[LABELS.role] === "proxy") {
    // The proxy is the proxy image run with its own entry point; any other container that wears the label is refused
    // (the label would keep it from being judged as a task), and judged as one when it is in proxy mode.
    // It runs nothing but that entry point: no healthcheck command, no uploads, no variable but its configuration,
    // no mount but memory (the engine runs a healthcheck inside it, with its open egress).
    const whyNot = (c: (typeof w.containers)[number]): string | undefined =>
      typeof c.image !== "string" || bareImage(c.image) !== PROXY_IMAGE
        ? `it runs image ${JSON.stringify(c.image ?? "(none)")}, not ${PROXY_IMAGE}`
        : c.args.length > 0
          ? `it replaces the image's entry point (${c.args[0]?.path})`
          : serviceContainerExtra(c, "proxy");
    const why = w.containers.map(whyNot).find((y) => y !== undefined);
    if (why === undefined) return configFindings(`proxy ${who}`, env.get(PROXY_CONFIG_ENV), urn);
    out.push({
      message: `${who}: the container wears ${LABELS.role}=proxy but is not the proxy (${why}); only the proxy itself may wear it`,
      urn,
    });
  }
  const proxyMode =
    w.labels[LABELS.egress] === "proxy" ||
    PROXY_VARS.some((v) => {
      const value = env.get(v);
      return value !== undefined && value !== "";
    });
  if (!proxyMode) return out;
  const task = `proxy-mode task ${who}`;
  for (const n of w.networks ?? []) {
    const net = n.name;
    if (net === "none") continue;
    if (net === undefined) {
      out.push({ message: `${task}: ${n.path} names no network, so it cannot be shown to be internal`, urn });
    } else if (isUnknown(net)) {
      out.push({ ...unchecked(`${task}: its network`, n.path, net), urn });
    } else if (ROUTED_NETWORKS.includes(net) || net.startsWith("container:")) {
      out.push({ message: `${task}: network "${net}" has a route out that bypasses the proxy`, urn });
    } else if (!declared.has(net)) {
      out.push({
        message: `${task}: network "${net}" is not declared in this stack, so it cannot be shown to be internal`,
        urn,
      });
    } else if (isUnknown(declared.get(net)?.internal)) {
      const d = declared.get(net);
      out.push({
        ...unchecked(`${task}: whether network "${net}" is internal`, "internal", d?.internal),
        urn,
      });
    } else if (declared.get(net)?.internal !== true) {
      out.push({
        message: `${task}: network "${net}" is not internal (a route off the machine that bypasses the proxy)`,
        urn,
      });
    }
  }
  return out;
}

/** Whether a Kubernetes pod is in proxy mode: labelled so, or a container (not an ephemeral one) sets a proxy variable. */
function proxyMode(w: WorkloadView, labels: Readonly<Record<string, string>> | undefined): boolean {
  return (
    labels?.[LABELS.egress] === "proxy" ||
    w.containers.some(
      (c) =>
        c.role !== "ephemeral" &&
        c.env.some((e) => typeof e.name === "string" && PROXY_VARS.includes(e.name)),
    )
  );
}

/** Kubernetes: a proxy-mode pod with host networking, or egress no NetworkPolicy of its namespace restricts. */
function judgePod(w: WorkloadView, urn: string, policies: readonly NetworkPolicy[]): StackFinding[] {
  const labels = isUnknown(w.podLabels) ? undefined : (w.podLabels ?? {});
  if (!proxyMode(w, labels)) return [];
  const task = `proxy-mode task ${w.origin.kind} "${w.origin.name}"`;
  const out: StackFinding[] = [];
  const hostNetwork = w.namespaces.hostNetwork;
  if (hostNetwork === true) out.push({ message: `${task}: hostNetwork bypasses the proxy`, urn });
  else if (isUnknown(hostNetwork))
    out.push({ ...unchecked(`${task}: hostNetwork`, `${w.podPath}.hostNetwork`, hostNetwork), urn });
  if (labels === undefined) {
    // Which policies select the pod cannot be told.
    out.push({ ...unchecked(`${task}: the pod's labels`, undefined, w.podLabels), urn });
    return out;
  }
  const ns = w.podNamespace;
  if (isUnknown(ns)) out.push({ ...unchecked(`${task}: the pod's namespace`, undefined, ns), urn });
  const namespace = typeof ns === "string" ? ns : undefined;
  // A policy restricts the pod only when it surely applies to it: its own namespace (a policy that names none lands
  // in the provider's namespace, the pod's only when the pod names none either) and a selector that surely holds.
  // What each policy opens is judged on the policy itself, whatever pods it selects.
  const surely = policies.filter(
    (p) =>
      policyTypes(p.spec).egress &&
      p.namespace === namespace &&
      selects(field(p.spec, "podSelector"), labels) === true,
  );
  if (surely.length === 0) {
    out.push({
      message: `${task}: no NetworkPolicy in this stack restricts its egress (everything is allowed)`,
      urn,
    });
  }
  return out;
}

/**
 * A pod that wears the proxy's or the broker's role label: the service it is (NetworkPolicies may let it out), or why
 * it is not one, which is refused (a task that wears the label would be let through as the service).
 */
function judgeServicePod(w: WorkloadView, urn: string): { service?: ServicePod; findings: StackFinding[] } {
  if (isUnknown(w.podLabels)) return { findings: [] };
  const labels = w.podLabels ?? {};
  const role = labels[LABELS.role];
  if (role !== "proxy" && role !== "broker") return { findings: [] };
  const who = `${w.origin.kind} "${w.origin.name}"`;
  const refuse = (why: string) => ({
    findings: [
      {
        message: `${who}: the pod wears ${LABELS.role}=${role} but is not the ${role} (${why}); NetworkPolicies let that label through, so only the ${role} itself may wear it`,
        urn,
      },
    ],
  });
  if (proxyMode(w, labels)) return refuse("it is a proxy-mode task");
  const service = servicePod(w, role as ServiceRole);
  if (typeof service === "string") return refuse(service);
  const findings: StackFinding[] = [];
  let configured = false;
  // Each image's entry script takes its configuration from the variable before the mounted file.
  // A variable from elsewhere (a ConfigMap or Secret key, envFrom) holds a configuration the input does not show.
  const variable = SERVICES[service.role].configEnv;
  for (const c of w.containers)
    for (const e of c.env) {
      if (e.from === "configMapRef" || e.from === "secretRef")
        return refuse(`${e.path} sets variables from ${e.from}, which may hold ${variable}`);
      if (e.name !== variable) continue;
      // An empty value is not taken (the entry script tests `-n`): the mounted file is read.
      if (e.from === "literal" && e.value === "") continue;
      if (e.from !== "literal")
        return refuse(`${e.path} takes ${variable} from ${e.from}, a configuration the input does not show`);
      configured = true;
      findings.push(...configFindings(`${service.role} ${who}`, e.value, urn, service.role));
    }
  return { service: { ...service, configured }, findings };
}

/** A Docker network the stack declares: its resource and its `internal` input as written. */
interface DeclaredNetwork {
  readonly resource: string;
  /** `true` only when the input says so: an absent `internal` is Docker's default, a network with a route out. */
  readonly internal: unknown;
}

/** Docker networks this stack declares, by the name the engine gives them. */
function declaredNetworks(resources: readonly StackResource[]): Map<string, DeclaredNetwork> {
  const out = new Map<string, DeclaredNetwork>();
  for (const r of resources) {
    if (r.type !== DOCKER_NETWORK) continue;
    // The daemon knows a network by its engine name alone: the Pulumi resource name is not one (an unnamed network
    // is auto-named `<resource>-<suffix>`, which no container can name before it exists).
    const named = str(field(r.props, "name"));
    if (typeof named === "string")
      out.set(named, { resource: `network "${r.name}"`, internal: field(r.props, "internal") });
  }
  return out;
}

/** The stack's NetworkPolicies (any group), each with the namespace it applies in when it says. */
function networkPolicies(resources: readonly StackResource[]): NetworkPolicy[] {
  return resources
    .filter((r) => parseKubeType(r.type)?.kind === "NetworkPolicy")
    .map((r) => {
      const ns = str(field(field(r.props, "metadata"), "namespace"));
      return {
        name: r.name,
        namespace: typeof ns === "string" ? ns : undefined,
        spec: field(r.props, "spec"),
        urn: r.urn,
      };
    });
}

/**
 * A ConfigMap's key (`squid.conf`, `haproxy.cfg`) as the kubelet writes it into the volume: `data` as text,
 * `binaryData` decoded from base64 (the API server refuses a key in both).
 */
export function configFileOf(r: StackResource, key: string): Val<string>[] {
  const out: Val<string>[] = [];
  const text = str(field(field(r.props, "data"), key));
  if (text !== undefined) out.push(text);
  const binary = str(field(field(r.props, "binaryData"), key));
  if (typeof binary === "string") {
    const bare = binary.replace(/\s+/g, "");
    out.push(
      /^[A-Za-z0-9+/]*={0,2}$/.test(bare) && bare.length % 4 === 0
        ? Buffer.from(bare, "base64").toString("utf8")
        : new Unreadable(`binaryData ${key} is not base64, as the API server requires`),
    );
  } else if (binary !== undefined) out.push(binary);
  return out;
}

/** A ConfigMap's `<namespace>/<name>`, as a pod of its namespace names it. */
function configMapKey(r: StackResource): string {
  const meta = field(r.props, "metadata");
  const name = str(field(meta, "name"));
  const ns = str(field(meta, "namespace"));
  return `${typeof ns === "string" ? ns : ""}/${typeof name === "string" ? name : ""}`;
}

/**
 * A proxy's or broker's ConfigMap's configuration judged: one labelled as the service's, or one a service pod of the
 * input mounts where the image reads it (other ConfigMaps are not the services').
 */
function judgeConfigMap(r: StackResource, services: readonly ServicePod[]): StackFinding[] {
  const meta = field(r.props, "metadata");
  const name = str(field(meta, "name"));
  const ns = str(field(meta, "namespace"));
  return (["proxy", "broker"] as const).flatMap((role) => {
    const mounted = services.some(
      (p) =>
        p.role === role && p.configMap === name && p.namespace === (typeof ns === "string" ? ns : undefined),
    );
    if (!mounted && field(field(meta, "labels"), LABELS.role) !== role) return [];
    return configFileOf(r, CONFIG_FILES[role]).flatMap((config) =>
      configFindings(`${role} ConfigMap "${r.name}"`, config, r.urn, role),
    );
  });
}

/**
 * Stack rule: a task in `proxy` mode has no route out but the proxy, no NetworkPolicy opens the namespace, and the
 * proxy's allowlist is neither empty nor everything. A workload is in proxy mode when its labels say
 * `sandbox.egress=proxy` or it sets a proxy variable (`HTTP_PROXY`, ...). `sandbox.role=proxy` (or `broker`) is the
 * service only on a workload that runs its image with its own entry point (and on Kubernetes mounts its ConfigMap
 * where the image reads it); any other that wears the label is refused. Docker: a proxy-mode task must join only
 * networks this stack declares `internal`: not host networking, not the default bridge (also what an unset network
 * mode is), not another container's namespace, not an undeclared network. Kubernetes (every pod of every carrier the
 * adapters know): a proxy-mode pod must not use host networking and must be selected by an egress NetworkPolicy of
 * its namespace; every NetworkPolicy is judged on its own (network-policy.ts): no ingress from outside its namespace,
 * no egress beyond the proxy, the broker and kube-dns, except the proxy's and the broker's own policies: a policy
 * whose every selected proxy or broker is identified and has its configuration in the input. A proxy whose
 * configuration is present (Docker `SANDBOX_PROXY_CONFIG`, a proxy ConfigMap's `squid.conf`, data or binaryData) is
 * read as Squid reads it (squid-config.ts) and must allow some hosts, and not every host; a broker's (its
 * ConfigMap's `haproxy.cfg`, or `SANDBOX_BROKER_CONFIG`) as HAProxy reads it (haproxy-config.ts), and must connect
 * only to its routes' resolved upstreams, never a refused destination, and run no code. A fact the
 * judgement needs that is not known yet is a note; one that cannot be read is a violation (the rule fails closed).
 */
export const requireProxyOnlyEgress = defineStackRule({
  id: "sandbox-require-proxy-only-egress",
  description:
    "A proxy-mode task has no route out but the allowlist proxy, and the proxy's allowlist is neither empty nor everything.",
  mission: false,
  enforcementLevel: "mandatory",
  severity: "critical",
  crosswalk: { cis: ["5.29"], kyverno: ["add-networkpolicy"] },
  defaults: {},
  remediationSteps:
    "Put proxy-mode tasks only on internal networks (Docker) or under NetworkPolicies that allow egress to the proxy's pods alone (Kubernetes); open no NetworkPolicy to the outside but the proxy's own; give the proxy an explicit allowlist of host names in one squid.conf.",
  check(resources) {
    const out: StackFinding[] = [];
    const declared = declaredNetworks(resources);
    const policies = networkPolicies(resources);
    const pods: { readonly w: WorkloadView; readonly urn: string }[] = [];
    const services: ServicePod[] = [];
    for (const r of resources) {
      if (parseKubeType(r.type)?.kind === "ConfigMap") continue;
      for (const s of adaptResources(r.type, r.props, r.name)) {
        if (s.subject !== "workload") continue;
        if (s.origin.backend === "docker") out.push(...judgeContainer(s, r.urn, declared));
        else if (s.origin.backend === "kubernetes") {
          const { service, findings } = judgeServicePod(s, r.urn);
          out.push(...findings);
          if (service === undefined) pods.push({ w: s, urn: r.urn });
          else services.push(service);
        }
      }
    }
    for (const { w, urn } of pods) out.push(...judgePod(w, urn, policies));
    // A proxy or broker is exempt from the walls only when its configuration is judged: its ConfigMap (with
    // squid.conf, haproxy.cfg) is in the input, or it sets the variable the image reads first.
    const configMaps = (role: ServiceRole) =>
      new Set(
        resources
          .filter(
            (r) =>
              parseKubeType(r.type)?.kind === "ConfigMap" && configFileOf(r, CONFIG_FILES[role]).length > 0,
          )
          .map((r) => configMapKey(r)),
      );
    const present = { proxy: configMaps("proxy"), broker: configMaps("broker") };
    const judged = services.map((s) =>
      s.configured !== true && present[s.role].has(`${s.namespace ?? ""}/${s.configMap}`)
        ? { ...s, configured: true }
        : s,
    );
    for (const p of policies) for (const f of judgeNetworkPolicy(p, judged)) out.push({ ...f, urn: p.urn });
    for (const r of resources)
      if (parseKubeType(r.type)?.kind === "ConfigMap") out.push(...judgeConfigMap(r, services));
    return out;
  },
});
