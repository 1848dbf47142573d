import { parseKubeType } from "../adapters/kubernetes";
import { field } from "../adapters/read";
import { isUnknown } from "../workload";
import { defineStackRule, type StackFinding, type StackResource } from "./types";

const DOCKER_CONTAINER = /^docker:index\/container:Container$/;
const DOCKER_NETWORK = /^docker:index\/network:Network$/;
const PROXY_VARS = ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"];
/** The variable the toolkit's proxy image reads its generated Squid configuration from. */
const PROXY_CONFIG_ENV = "SANDBOX_PROXY_CONFIG";

/** Where each pod carrier keeps its pod template (`metadata` + `spec`). */
const POD_TEMPLATE: Record<string, readonly string[]> = {
  Pod: [],
  PodTemplate: ["template"],
  Job: ["spec", "template"],
  CronJob: ["spec", "jobTemplate", "spec", "template"],
  Deployment: ["spec", "template"],
  StatefulSet: ["spec", "template"],
  DaemonSet: ["spec", "template"],
  ReplicaSet: ["spec", "template"],
  ReplicationController: ["spec", "template"],
};

const obj = (v: unknown): Record<string, unknown> =>
  typeof v === "object" && v !== null && !isUnknown(v) ? (v as Record<string, unknown>) : {};
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const text = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const path = (o: unknown, keys: readonly string[]): unknown => keys.reduce<unknown>((x, k) => field(x, k), o);

function dockerLabels(props: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const l of list(field(props, "labels"))) {
    const k = text(field(l, "label"));
    const v = text(field(l, "value"));
    if (k !== undefined && v !== undefined) out[k] = v;
  }
  return out;
}

function dockerEnv(props: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of list(field(props, "envs"))) {
    const s = text(e);
    if (s === undefined) continue;
    const eq = s.indexOf("=");
    if (eq > 0) out[s.slice(0, eq)] = s.slice(eq + 1);
  }
  return out;
}

/** A pod carrier's pod template, namespace and whether its containers get proxy variables. */
function podOf(r: StackResource) {
  const kind = parseKubeType(r.type)?.kind;
  const at = kind === undefined ? undefined : POD_TEMPLATE[kind];
  if (at === undefined) return undefined;
  const template = path(r.props, at);
  const spec = field(template, "spec");
  const labels = obj(path(template, ["metadata", "labels"])) as Record<string, string>;
  const containers = [...list(field(spec, "containers")), ...list(field(spec, "initContainers"))];
  const proxyVars = containers.some((c) =>
    list(field(c, "env")).some((e) => PROXY_VARS.includes(text(field(e, "name")) ?? "")),
  );
  const namespace =
    text(path(r.props, ["metadata", "namespace"])) ?? text(path(template, ["metadata", "namespace"]));
  return { kind, labels, spec, proxyVars, namespace };
}

function selects(selector: unknown, labels: Readonly<Record<string, string>>): boolean {
  const match = obj(field(selector, "matchLabels"));
  if (list(field(selector, "matchExpressions")).length > 0) return true; // judged conservatively: may select it
  return Object.entries(match).every(([k, v]) => labels[k] === v);
}

/** Why one egress rule of a NetworkPolicy lets a pod reach more than the proxy (undefined when it does not). */
function openEgress(rule: unknown): string | undefined {
  const to = field(rule, "to");
  if (to === undefined || list(to).length === 0) return "an egress rule without `to` (every destination)";
  for (const peer of list(to)) {
    if (field(peer, "ipBlock") !== undefined)
      return `an ipBlock ${text(path(peer, ["ipBlock", "cidr"])) ?? ""}`.trim();
    if (field(peer, "namespaceSelector") !== undefined)
      return "a namespaceSelector (pods of other namespaces)";
    const pods = obj(path(peer, ["podSelector", "matchLabels"]));
    if (pods["sandbox.role"] !== "proxy") return "a podSelector that is not the proxy's pods";
  }
  return undefined;
}

/** The allowlist entries of a generated Squid configuration (`dstdomain` values), or undefined when none is readable. */
export function squidAllowlist(config: string): string[] {
  return config
    .split("\n")
    .map((l) => /^acl\s+\S+\s+dstdomain\s+(.*)$/.exec(l.trim())?.[1])
    .filter((v): v is string => v !== undefined)
    .flatMap((v) => v.split(/\s+/).filter((x) => x !== "" && !x.startsWith("-")));
}

/** What is wrong with a proxy's allowlist: empty, or a wildcard for everything. */
function allowlistProblem(config: string): string | undefined {
  if (/^\s*http_access\s+allow\s+all\s*$/m.test(config))
    return "it allows every request (`http_access allow all`)";
  const entries = squidAllowlist(config);
  if (entries.length === 0) return "its allowlist is empty";
  const wild = entries.find((e) => ["*", ".", "all", "*.*"].includes(e) || /^\.?\*/.test(e));
  return wild === undefined ? undefined : `its allowlist contains "${wild}" (every host)`;
}

/**
 * Stack rule: a task in `proxy` mode has no route out but the proxy, and the proxy's allowlist is neither empty nor
 * everything. Docker: a proxy-mode task (label `sandbox.egress=proxy`, or proxy variables) must sit only on networks
 * this stack declares `internal`: not host networking, not the default bridge, not another container's namespace,
 * not an undeclared network. Kubernetes: a proxy-mode pod must not use host networking, must be selected by an
 * egress NetworkPolicy, and no NetworkPolicy that selects it may open egress beyond the proxy's pods. A proxy whose
 * generated configuration is readable (Docker `SANDBOX_PROXY_CONFIG`, or a ConfigMap's `squid.conf`) must allow
 * some hosts, and not every host.
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
    const networks = new Map<string, boolean | undefined>();
    for (const r of resources.filter((x) => DOCKER_NETWORK.test(x.type))) {
      const internal = field(r.props, "internal");
      const known = typeof internal === "boolean" ? internal : undefined;
      networks.set(r.name, known);
      const named = text(field(r.props, "name"));
      if (named !== undefined) networks.set(named, known);
    }
    const policies = resources
      .filter((x) => parseKubeType(x.type)?.kind === "NetworkPolicy")
      .map((x) => ({
        r: x,
        spec: field(x.props, "spec"),
        ns: text(path(x.props, ["metadata", "namespace"])),
      }));

    for (const r of resources) {
      if (DOCKER_CONTAINER.test(r.type)) {
        const labels = dockerLabels(r.props);
        const env = dockerEnv(r.props);
        const who = `Container "${r.name}"`;
        if (labels["sandbox.role"] === "proxy") {
          const config = env[PROXY_CONFIG_ENV];
          const problem = config === undefined ? undefined : allowlistProblem(config);
          if (problem !== undefined) out.push({ message: `proxy ${who}: ${problem}`, urn: r.urn });
          continue;
        }
        const proxyMode =
          labels["sandbox.egress"] === "proxy" || PROXY_VARS.some((v) => (env[v] ?? "") !== "");
        if (!proxyMode) continue;
        const mode = field(r.props, "networkMode");
        const attached = [
          ...(isUnknown(mode) ? [] : [text(mode) ?? "bridge"]),
          ...list(field(r.props, "networksAdvanced")).map((n) => text(field(n, "name")) ?? "?"),
        ];
        for (const net of attached) {
          if (net === "none") continue;
          if (net === "host" || net === "bridge" || net === "default" || net.startsWith("container:")) {
            out.push({
              message: `proxy-mode task ${who}: network "${net}" has a route out that bypasses the proxy`,
              urn: r.urn,
            });
            continue;
          }
          const internal = networks.get(net);
          if (!networks.has(net)) {
            out.push({
              message: `proxy-mode task ${who}: network "${net}" is not declared in this stack, so it cannot be shown to be internal`,
              urn: r.urn,
            });
          } else if (internal === false) {
            out.push({
              message: `proxy-mode task ${who}: network "${net}" is not internal (a route off the machine that bypasses the proxy)`,
              urn: r.urn,
            });
          }
        }
        continue;
      }
      const kind = parseKubeType(r.type)?.kind;
      if (kind === "ConfigMap") {
        const labels = obj(path(r.props, ["metadata", "labels"]));
        const config = text(path(r.props, ["data", "squid.conf"]));
        const problem = config === undefined ? undefined : allowlistProblem(config);
        if (labels["sandbox.role"] === "proxy" && problem !== undefined)
          out.push({ message: `proxy ConfigMap "${r.name}": ${problem}`, urn: r.urn });
        continue;
      }
      const pod = podOf(r);
      if (pod === undefined) continue;
      if (pod.labels["sandbox.role"] === "proxy") continue;
      if (pod.labels["sandbox.egress"] !== "proxy" && !pod.proxyVars) continue;
      const who = `${pod.kind} "${r.name}"`;
      if (field(pod.spec, "hostNetwork") === true)
        out.push({ message: `proxy-mode task ${who}: hostNetwork bypasses the proxy`, urn: r.urn });
      const selecting = policies.filter(
        (p) =>
          (p.ns === undefined || pod.namespace === undefined || p.ns === pod.namespace) &&
          selects(field(p.spec, "podSelector"), pod.labels),
      );
      const egressPolicies = selecting.filter(
        (p) => list(field(p.spec, "policyTypes")).includes("Egress") || field(p.spec, "egress") !== undefined,
      );
      if (egressPolicies.length === 0) {
        out.push({
          message: `proxy-mode task ${who}: no NetworkPolicy in this stack restricts its egress (everything is allowed)`,
          urn: r.urn,
        });
      }
      for (const p of egressPolicies) {
        for (const rule of list(field(p.spec, "egress"))) {
          const why = openEgress(rule);
          if (why !== undefined) {
            out.push({
              message: `proxy-mode task ${who}: NetworkPolicy "${p.r.name}" opens egress beyond the proxy (${why})`,
              urn: r.urn,
            });
          }
        }
      }
    }
    return out;
  },
});
