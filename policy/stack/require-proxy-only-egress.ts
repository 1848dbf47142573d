/**
 * Proxy-only egress, judged over a whole stack: the workloads come from the adapters (every Docker container, every
 * pod of every carrier kind they know); only what no view holds is read from props: Docker networks, NetworkPolicies
 * and the proxy's ConfigMap.
 */
import { LABELS, PROXY_CONFIG_ENV } from "../../components/model";
import { unchecked } from "../rules/helpers";
import { parseKubeType } from "../sources/kubernetes/sites";
import { entries, field, items, str } from "../sources/lenient";
import { adaptResources } from "../sources/subject";
import { isUnknown, type Val, type WorkloadView } from "../workload";
import { defineStackRule, type StackFinding, type StackResource } from "./types";

const DOCKER_NETWORK = "docker:index/network:Network";
/** The variables that send a task's traffic through a proxy. */
const PROXY_VARS = ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"];
/** The key of the proxy's ConfigMap that holds its generated Squid configuration. */
const SQUID_CONFIG_KEY = "squid.conf";
/** Docker networks with a route off the machine, whatever the stack declares. */
const ROUTED_NETWORKS = ["host", "bridge", "default"];

/** The allowlist entries of a generated Squid configuration (`dstdomain` values), or undefined when none is readable. */
export function squidAllowlist(config: string): string[] {
  return config
    .split("\n")
    .map((l) => /^acl\s+\S+\s+dstdomain\s+(.*)$/.exec(l.trim())?.[1])
    .filter((v): v is string => v !== undefined)
    .flatMap((v) => v.split(/\s+/).filter((x) => x !== "" && !x.startsWith("-")));
}

/** The type of each ACL a Squid configuration defines (`acl <name> <type> ...`), by name. */
function squidAclTypes(config: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const l of config.split("\n")) {
    const m = /^acl\s+(\S+)\s+(\S+)/.exec(l.trim());
    if (m?.[1] !== undefined && m[2] !== undefined) out.set(m[1], m[2]);
  }
  return out;
}

/**
 * What is wrong with a proxy's allowlist: empty, a wildcard for everything, or an `http_access allow` line that no
 * host ACL limits. Squid takes the first `http_access` line whose ACLs all match, so an allow line with no positive
 * `dstdomain` ACL (`allow all`, `allow anywhere` for `acl anywhere dst 0.0.0.0/0`, `allow localnet`) lets requests
 * through whatever host they name.
 */
function allowlistProblem(config: string): string | undefined {
  const types = squidAclTypes(config);
  for (const l of config.split("\n")) {
    const m = /^http_access\s+allow\b(.*)$/.exec(l.trim());
    if (m === null) continue;
    const acls = (m[1] ?? "")
      .trim()
      .split(/\s+/)
      .filter((a) => a !== "");
    if (acls.length === 1 && acls[0] === "all") return "it allows every request (`http_access allow all`)";
    if (!acls.some((a) => !a.startsWith("!") && types.get(a) === "dstdomain"))
      return `it allows requests whatever host they name (\`${l.trim()}\`: no host ACL limits it)`;
  }
  const hosts = squidAllowlist(config);
  if (hosts.length === 0) return "its allowlist is empty";
  const wild = hosts.find((e) => ["*", ".", "all", "*.*"].includes(e) || /^\.?\*/.test(e));
  return wild === undefined ? undefined : `its allowlist contains "${wild}" (every host)`;
}

/** A proxy's configuration judged: a problem with its allowlist, or why it cannot be read; nothing when absent. */
function configFindings(who: string, config: Val<string>, urn: string): StackFinding[] {
  if (config === undefined) return [];
  if (isUnknown(config)) return [{ ...unchecked(`${who}: its configuration`, undefined, config), urn }];
  const problem = allowlistProblem(config);
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
  if (w.labels[LABELS.role] === "proxy")
    return configFindings(`proxy ${who}`, env.get(PROXY_CONFIG_ENV), urn);
  const proxyMode =
    w.labels[LABELS.egress] === "proxy" ||
    PROXY_VARS.some((v) => {
      const value = env.get(v);
      return value !== undefined && value !== "";
    });
  if (!proxyMode) return [];
  const task = `proxy-mode task ${who}`;
  const out: StackFinding[] = [];
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

/** A NetworkPolicy as the rule reads it. */
interface NetworkPolicy {
  readonly name: string;
  readonly namespace: string | undefined;
  readonly spec: unknown;
}

/**
 * Whether a label selector selects a pod with these labels (apimachinery LabelSelectorAsSelector): every
 * `matchLabels` pair and every `matchExpressions` requirement (`In`, `NotIn`, `Exists`, `DoesNotExist`) holds; an
 * empty selector selects every pod. A requirement the rule cannot read is `unsure`: the caller decides which way it
 * errs.
 */
function selects(selector: unknown, labels: Readonly<Record<string, string>>): boolean | "unsure" {
  if (!entries(field(selector, "matchLabels")).every(([k, v]) => labels[k] === v)) return false;
  let unsure = false;
  for (const e of items(field(selector, "matchExpressions"))) {
    const key = str(field(e, "key"));
    const op = str(field(e, "operator"));
    const values = items(field(e, "values")).map((v) => (typeof v === "string" ? v : undefined));
    if (typeof key !== "string" || typeof op !== "string") {
      unsure = true;
      continue;
    }
    const has = Object.hasOwn(labels, key);
    const value = labels[key];
    const holds =
      op === "In"
        ? has && values.includes(value)
        : op === "NotIn"
          ? !has || !values.includes(value)
          : op === "Exists"
            ? has
            : op === "DoesNotExist"
              ? !has
              : undefined;
    if (holds === undefined) unsure = true;
    else if (!holds) return false;
  }
  return unsure ? "unsure" : true;
}

/**
 * Whether a NetworkPolicy restricts egress (networking/v1 NetworkPolicySpec.policyTypes): when it lists its types,
 * only if `Egress` is one; when it lists none, only if it has egress rules.
 */
function restrictsEgress(spec: unknown): boolean {
  const types = field(spec, "policyTypes");
  if (types !== undefined && types !== null) return items(types).includes("Egress");
  return items(field(spec, "egress")).length > 0;
}

/** Why one egress rule of a NetworkPolicy lets a pod reach more than the proxy (undefined when it does not). */
function openEgress(rule: unknown): string | undefined {
  const to = items(field(rule, "to"));
  if (to.length === 0) return "an egress rule without `to` (every destination)";
  for (const peer of to) {
    const ipBlock = field(peer, "ipBlock");
    if (ipBlock !== undefined) {
      const cidr = str(field(ipBlock, "cidr"));
      return typeof cidr === "string" ? `an ipBlock ${cidr}` : "an ipBlock";
    }
    if (field(peer, "namespaceSelector") !== undefined)
      return "a namespaceSelector (pods of other namespaces)";
    // The proxy, and the project's secrets broker (a proxy-mode template keeps its way to it).
    const role = field(field(field(peer, "podSelector"), "matchLabels"), LABELS.role);
    if (role !== "proxy" && role !== "broker")
      return "a podSelector that is not the proxy's or the broker's pods";
  }
  return undefined;
}

/** Kubernetes: a proxy-mode pod with host networking, or egress no NetworkPolicy limits to the proxy's pods. */
function judgePod(w: WorkloadView, urn: string, policies: readonly NetworkPolicy[]): StackFinding[] {
  const labels = isUnknown(w.podLabels) ? undefined : (w.podLabels ?? {});
  // The proxy's own pods are not tasks; a pod that also says it is a proxy-mode task is one, whatever its role.
  if (labels?.[LABELS.role] === "proxy" && labels[LABELS.egress] !== "proxy") return [];
  const proxyVars = w.containers.some(
    (c) =>
      c.role !== "ephemeral" && c.env.some((e) => typeof e.name === "string" && PROXY_VARS.includes(e.name)),
  );
  if (labels?.[LABELS.egress] !== "proxy" && !proxyVars) return [];
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
  // Any policy that may apply may open egress, so those are all judged below.
  const egressPolicies = policies.filter((p) => restrictsEgress(p.spec));
  const surely = egressPolicies.filter(
    (p) => p.namespace === namespace && selects(field(p.spec, "podSelector"), labels) === true,
  );
  const maybe = egressPolicies.filter(
    (p) =>
      (p.namespace === undefined || namespace === undefined || p.namespace === namespace) &&
      selects(field(p.spec, "podSelector"), labels) !== false,
  );
  if (surely.length === 0) {
    out.push({
      message: `${task}: no NetworkPolicy in this stack restricts its egress (everything is allowed)`,
      urn,
    });
  }
  for (const p of maybe) {
    for (const rule of items(field(p.spec, "egress"))) {
      const why = openEgress(rule);
      if (why !== undefined)
        out.push({
          message: `${task}: NetworkPolicy "${p.name}" opens egress beyond the proxy (${why})`,
          urn,
        });
    }
  }
  return out;
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
      };
    });
}

/** A proxy ConfigMap's generated configuration judged (other ConfigMaps are not the proxy's). */
function judgeConfigMap(r: StackResource): StackFinding[] {
  if (field(field(field(r.props, "metadata"), "labels"), LABELS.role) !== "proxy") return [];
  const config = str(field(field(r.props, "data"), SQUID_CONFIG_KEY));
  return configFindings(`proxy ConfigMap "${r.name}"`, config, r.urn);
}

/**
 * Stack rule: a task in `proxy` mode has no route out but the proxy, and the proxy's allowlist is neither empty nor
 * everything. A workload is in proxy mode when its labels say `sandbox.egress=proxy` or it sets a proxy variable
 * (`HTTP_PROXY`, ...); `sandbox.role=proxy` is the proxy. Docker: a proxy-mode task must join only networks this
 * stack declares `internal`: not host networking, not the default bridge (also what an unset network mode is), not
 * another container's namespace, not an undeclared network. Kubernetes (every pod of every carrier the adapters
 * know): a proxy-mode pod must not use host networking, must be selected by an egress NetworkPolicy of its namespace,
 * and no NetworkPolicy that selects it may open egress beyond the proxy's pods. A proxy whose generated
 * configuration is present (Docker `SANDBOX_PROXY_CONFIG`, or a proxy ConfigMap's `squid.conf`) must allow some
 * hosts, and not every host. A fact the judgement needs that is not known yet is a note; one that cannot be read
 * is a violation (the rule fails closed).
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
    "Put proxy-mode tasks only on internal networks (Docker) or under NetworkPolicies that allow egress to the proxy's pods alone (Kubernetes); give the proxy an explicit allowlist of host names.",
  check(resources) {
    const out: StackFinding[] = [];
    const declared = declaredNetworks(resources);
    const policies = networkPolicies(resources);
    for (const r of resources) {
      if (parseKubeType(r.type)?.kind === "ConfigMap") {
        out.push(...judgeConfigMap(r));
        continue;
      }
      for (const s of adaptResources(r.type, r.props, r.name)) {
        if (s.subject !== "workload") continue;
        if (s.origin.backend === "docker") out.push(...judgeContainer(s, r.urn, declared));
        else if (s.origin.backend === "kubernetes") out.push(...judgePod(s, r.urn, policies));
      }
    }
    return out;
  },
});
