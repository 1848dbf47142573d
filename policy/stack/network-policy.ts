/**
 * Kubernetes NetworkPolicies judged each on its own (networking/v1 types.go), whatever pods it selects today: policies
 * add up, so one that opens the namespace opens it for every pod it selects, pods the runtime launches later and
 * labels a controller adds (`job-name`, `batch.kubernetes.io/controller-uid`) included. And who the proxy and the
 * broker are: a pod wearing their role label that runs their image, as the toolkit runs it, with their ConfigMap
 * mounted where the image reads it; any other pod that wears the label is refused, since policies let the label
 * through.
 */
import {
  BROKER_CONFIG_DIR,
  BROKER_CONFIG_ENV,
  BROKER_IMAGE,
  BROKER_RUN_DIR,
  BROKER_SECRETS_DIR,
  LABELS,
  PROXY_CONFIG_DIR,
  PROXY_CONFIG_ENV,
  PROXY_IMAGE,
  PROXY_RUN_DIR,
} from "../../components/model";
import { unchecked } from "../rules/helpers";
import type { Finding } from "../rules/types";
import { entries, field, isObj, items, str } from "../sources/lenient";
import { type ContainerView, isUnknown, type WorkloadView } from "../workload";

/** A NetworkPolicy as the rule reads it. */
export interface NetworkPolicy {
  readonly name: string;
  readonly namespace: string | undefined;
  readonly spec: unknown;
  readonly urn: string;
}

/** The pods NetworkPolicies may let through: the proxy and the broker, each known by more than its label. */
export type ServiceRole = "proxy" | "broker";
interface Service {
  readonly image: string;
  readonly configDir: string;
  /** Its memory folders for runtime files (emptyDir or tmpfs), besides /tmp. */
  readonly runDir: string;
  /** A Secret it may read (the broker's credentials), mounted there. */
  readonly secretsDir?: string;
  /** The variables its image's entry script reads (toolchain/proxy-image.sh, toolchain/broker-image.sh). */
  readonly env: (name: string) => boolean;
  readonly envNames: string;
  /** The variable its entry script takes its configuration from before the mounted file. */
  readonly configEnv: string;
}
export const SERVICES: Readonly<Record<ServiceRole, Service>> = {
  proxy: {
    image: PROXY_IMAGE,
    configDir: PROXY_CONFIG_DIR,
    runDir: PROXY_RUN_DIR,
    env: (n) => n === PROXY_CONFIG_ENV,
    envNames: PROXY_CONFIG_ENV,
    configEnv: PROXY_CONFIG_ENV,
  },
  broker: {
    image: BROKER_IMAGE,
    configDir: BROKER_CONFIG_DIR,
    runDir: BROKER_RUN_DIR,
    secretsDir: BROKER_SECRETS_DIR,
    env: (n) => n === BROKER_CONFIG_ENV || /^SANDBOX_BROKER_CRED_[A-Z0-9_]+$/.test(n),
    envNames: `${BROKER_CONFIG_ENV} and SANDBOX_BROKER_CRED_<ROUTE>`,
    configEnv: BROKER_CONFIG_ENV,
  },
};

/** The key of a service's ConfigMap its image reads (toolchain/proxy-image.sh, toolchain/broker-image.sh). */
export const CONFIG_FILES: Readonly<Record<ServiceRole, string>> = {
  proxy: "squid.conf",
  broker: "haproxy.cfg",
};

/**
 * Why a container that runs a service's image runs more than the image's entry point, or undefined: the kubelet runs
 * exec probes and lifecycle hooks, the engine a healthcheck command, inside the container (with the service's open
 * egress); a loader variable (LD_PRELOAD, PATH, ...) or a file put over the image's own changes what its entry point
 * runs. So: no command but a disabled healthcheck (the image has none, and the toolkit sets none), no uploads, no
 * variable but those the entry script reads, and no mount but the configuration, the Secret (the broker's) and memory
 * at its runtime folder and /tmp. httpGet and tcpSocket probes (the toolkit's readiness probe) run nothing inside.
 */
export function serviceContainerExtra(c: ContainerView, role: ServiceRole): string | undefined {
  const s = SERVICES[role];
  const who = `container "${c.name}"`;
  if (c.execHooks === undefined) return `${who}: its probes and hooks cannot be read`;
  const run = (c.hookCommands ?? []).find((h) => h.args.length > 0);
  if (run !== undefined)
    return `${who} runs a command inside it (${run.args[0]?.path ?? run.what}: ${run.what}); the ${role} runs only its image's entry point`;
  const other = c.execHooks.find((h) => !/^(healthcheck|Healthcheck)$/.test(h));
  if (other !== undefined)
    return `${who} has ${other}, which runs a command or puts files inside it; the ${role} runs only its image's entry point`;
  if (c.envUnknown) return `${who}: its variables cannot be read`;
  for (const e of c.env) {
    if (e.from === "configMapRef" || e.from === "secretRef")
      return `${e.path} sets variables from ${e.from} (names the input does not show); the ${role} takes only ${s.envNames}`;
    if (typeof e.name !== "string" || !s.env(e.name))
      return `${e.path} sets ${JSON.stringify(e.name ?? "(unreadable)")}; the ${role}'s image reads only ${s.envNames} (a loader or shell variable would change what it runs)`;
  }
  if (c.mountsUnknown) return `${who}: its mounts cannot be read`;
  for (const m of c.mounts) {
    const target = typeof m.target === "string" ? m.target.replace(/\/+$/, "") : undefined;
    const memory =
      (m.type === "emptyDir" || m.type === "tmpfs") && (target === s.runDir || target === "/tmp");
    const config = m.type === "configMap" && target === s.configDir;
    const secret = m.type === "secret" && s.secretsDir !== undefined && target === s.secretsDir;
    if (!memory && !config && !secret)
      return `${m.path} mounts ${m.type} at ${JSON.stringify(m.target ?? "(unreadable)")}; the ${role} mounts only its configuration at ${s.configDir}${s.secretsDir === undefined ? "" : `, its Secret at ${s.secretsDir}`} and memory at ${s.runDir} and /tmp (a file put elsewhere could replace what it runs)`;
  }
  if (c.devices.length > 0) return `${who} is given devices; the ${role} has none`;
  return undefined;
}

/** A pod that is the proxy or the broker, with the ConfigMap it reads its configuration from. */
export interface ServicePod {
  readonly role: ServiceRole;
  readonly namespace: string | undefined;
  readonly labels: Readonly<Record<string, string>>;
  readonly configMap: string;
  /** Its configuration is in the input and judged (the ConfigMap, or the variable the image reads first). */
  readonly configured?: boolean;
  /** The workload it is, for messages. */
  readonly workload?: string;
}

/** An image reference without the registry and namespace the runtime fills in (`docker.io/library/`). */
export function bareImage(image: string): string {
  return image.replace(/^(docker\.io\/)?(library\/)?/, "");
}

/**
 * Whether a pod that wears the proxy's or the broker's role label is that service: every container runs its image
 * with the image's own entry point, and one mounts a whole ConfigMap where the image reads its configuration. The
 * ServicePod, or why it is not one.
 */
export function servicePod(w: WorkloadView, role: ServiceRole): ServicePod | string {
  const { image, configDir } = SERVICES[role];
  const labels = isUnknown(w.podLabels) ? {} : (w.podLabels ?? {});
  const ns = w.podNamespace;
  const extra = w.containers.filter((c) => c.role !== "container");
  if (extra.length > 0)
    return `it has ${extra.map((c) => `${c.role} container "${c.name}"`).join(", ")}; the ${role}'s pod runs one container`;
  if (w.containers.length !== 1)
    return `it has ${w.containers.length} containers; the ${role}'s pod runs one container`;
  for (const c of w.containers) {
    if (typeof c.image !== "string" || bareImage(c.image) !== image)
      return `container "${c.name}" runs image ${JSON.stringify(c.image ?? "(none)")}, not ${image}`;
    const arg = c.args[0];
    if (arg !== undefined) return `container "${c.name}" replaces the image's entry point (${arg.path})`;
    const why = serviceContainerExtra(c, role);
    if (why !== undefined) return why;
  }
  const volumes = isUnknown(w.podVolumes) ? [] : (w.podVolumes ?? []);
  // Another mount at or under the folder would stand in for the file the image reads.
  const under = w.containers.flatMap((c) =>
    c.mounts.filter(
      (m) =>
        typeof m.target !== "string" ||
        m.target.replace(/\/+$/, "") === configDir ||
        m.target.startsWith(`${configDir}/`),
    ),
  );
  if (under.length > 1)
    return `${under.length} mounts at or under ${configDir} (${under.map((m) => m.path).join(", ")}), where the image reads one ConfigMap`;
  for (const c of w.containers) {
    for (const m of c.mounts) {
      if (m.type !== "configMap" || typeof m.target !== "string") continue;
      if (m.target.replace(/\/+$/, "") !== configDir) continue;
      const uses = volumes.find((v) => v.name === m.volume)?.configMaps ?? [];
      const [use] = uses;
      if (use === undefined || typeof use.name !== "string") continue;
      if (use.keys !== undefined)
        return `its ConfigMap "${use.name}" is mounted at ${configDir} with \`items\` (only some keys, under other names)`;
      return {
        role,
        namespace: typeof ns === "string" ? ns : undefined,
        labels,
        configMap: use.name,
        workload: `${w.origin.kind} "${w.origin.name}"`,
      };
    }
  }
  return `no container mounts a ConfigMap at ${configDir}, where ${image} reads its configuration`;
}

/**
 * Whether a label selector selects a pod with these labels (apimachinery LabelSelectorAsSelector): every
 * `matchLabels` pair and every `matchExpressions` requirement (`In`, `NotIn`, `Exists`, `DoesNotExist`) holds; an
 * empty selector selects every pod. A requirement the rule cannot read is `unsure`: the caller decides which way it
 * errs.
 */
export function selects(selector: unknown, labels: Readonly<Record<string, string>>): boolean | "unsure" {
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
 * Which directions a NetworkPolicy governs (networking/v1 NetworkPolicySpec.policyTypes): when it lists its types,
 * those; when the list is absent or empty (`len == 0`), always Ingress, and Egress only when it has egress rules (the
 * API server's defaulting, pkg/apis/networking/v1 SetDefaults_NetworkPolicy).
 */
export function policyTypes(spec: unknown): { readonly ingress: boolean; readonly egress: boolean } {
  const listed = items(field(spec, "policyTypes"));
  if (listed.length > 0) return { ingress: listed.includes("Ingress"), egress: listed.includes("Egress") };
  return { ingress: true, egress: items(field(spec, "egress")).length > 0 };
}

/** The first value of a spec not known yet or unreadable, at any depth. */
function hiddenValue(v: unknown): unknown {
  if (isUnknown(v)) return v;
  if (Array.isArray(v)) return v.map(hiddenValue).find((h) => h !== undefined);
  if (isObj(v))
    return Object.values(v)
      .map(hiddenValue)
      .find((h) => h !== undefined);
  return undefined;
}

/**
 * The one value a selector requires of a label (`matchLabels`, or a `matchExpressions` `In` of one value): the
 * selector selects only pods (or namespaces) with that value; its other requirements only narrow it further. Undefined
 * when it does not pin the label to one value, or pins it to two.
 */
export function pinned(selector: unknown, key: string): string | undefined {
  const values = new Set<unknown>();
  const label = field(field(selector, "matchLabels"), key);
  if (label !== undefined) values.add(label);
  for (const e of items(field(selector, "matchExpressions"))) {
    if (field(e, "key") !== key || field(e, "operator") !== "In") continue;
    const v = items(field(e, "values"));
    if (v.length !== 1) return undefined;
    values.add(v[0]);
  }
  const [only] = values;
  return values.size === 1 && typeof only === "string" ? only : undefined;
}

const roleOf = (selector: unknown): string | undefined => pinned(selector, LABELS.role);

/** Why an ingress peer admits pods from outside the policy's namespace (undefined when it does not). */
function openIngressPeer(peer: unknown): string | undefined {
  const ipBlock = field(peer, "ipBlock");
  if (ipBlock !== undefined) return `an ipBlock ${JSON.stringify(str(field(ipBlock, "cidr")) ?? "")}`;
  if (field(peer, "namespaceSelector") !== undefined) return "a namespaceSelector (pods of other namespaces)";
  if (field(peer, "podSelector") === undefined) return "a peer that names no pods (unreadable)";
  return undefined;
}

/**
 * The cluster's DNS, by the namespace its resolver runs in (the API server sets `kubernetes.io/metadata.name` on
 * every Namespace) and the ports a NetworkPolicy sees it on (after the Service's translation): CoreDNS/kube-dns in
 * kube-system on 53 (its container ports are named `dns` and `dns-tcp`), OpenShift's DNS in openshift-dns on 5353
 * (and 53).
 */
const DNS_NAMESPACES: Readonly<Record<string, readonly number[]>> = {
  "kube-system": [53],
  "openshift-dns": [53, 5353],
};
/** CoreDNS's port names (its Deployment's `dns`/UDP and `dns-tcp`/TCP): a named port resolves on the peer pod. */
const DNS_PORT_NAMES = ["dns", "dns-tcp"];
/** NodeLocal DNSCache's link-local address (its documented convention); the cloud metadata address is not DNS. */
const NODE_LOCAL_DNS = "169.254.20.10/32";

/** Whether every port of an egress rule is a DNS port, by number (or, where the peer is a pod, by CoreDNS's names). */
function dnsPorts(rule: unknown, numbers: readonly number[], named: boolean): boolean {
  const ports = items(field(rule, "ports"));
  return (
    ports.length > 0 &&
    ports.every((p) => {
      const port = field(p, "port");
      const protocol = field(p, "protocol");
      const number =
        typeof port === "number" ? port : typeof port === "string" && /^\d+$/.test(port) ? Number(port) : NaN;
      return (
        (numbers.includes(number) || (named && typeof port === "string" && DNS_PORT_NAMES.includes(port))) &&
        field(p, "endPort") === undefined &&
        (protocol === undefined || protocol === "UDP" || protocol === "TCP")
      );
    })
  );
}

/**
 * Whether an egress peer is the way to the cluster's DNS, on DNS ports only: the pods of a DNS namespace (a
 * namespaceSelector that pins its name; a podSelector with it only narrows), or NodeLocal DNSCache's address. Raw
 * port 53 to any other address is a way out (a resolver the task picks), and is not DNS here.
 */
function dnsPeer(peer: unknown, rule: unknown): boolean {
  const ipBlock = field(peer, "ipBlock");
  if (ipBlock !== undefined)
    return (
      field(peer, "namespaceSelector") === undefined &&
      field(peer, "podSelector") === undefined &&
      field(ipBlock, "cidr") === NODE_LOCAL_DNS &&
      dnsPorts(rule, [53], false)
    );
  const ns = pinned(field(peer, "namespaceSelector"), "kubernetes.io/metadata.name");
  const numbers = ns === undefined ? undefined : DNS_NAMESPACES[ns];
  return numbers !== undefined && Object.hasOwn(DNS_NAMESPACES, ns ?? "") && dnsPorts(rule, numbers, true);
}

/** Why an egress peer lets a pod reach more than the proxy, the broker and DNS (undefined when it does not). */
function openEgressPeer(peer: unknown, rule: unknown): string | undefined {
  if (dnsPeer(peer, rule)) return undefined;
  const ipBlock = field(peer, "ipBlock");
  if (ipBlock !== undefined) return `an ipBlock ${JSON.stringify(str(field(ipBlock, "cidr")) ?? "")}`;
  if (field(peer, "namespaceSelector") !== undefined)
    return "a namespaceSelector (pods of other namespaces; only the DNS namespace, kube-system on port 53 or openshift-dns on 53 and 5353, may be named)";
  const role = roleOf(field(peer, "podSelector"));
  if (role !== "proxy" && role !== "broker")
    return "a podSelector that is not the proxy's or the broker's pods";
  return undefined;
}

const ALLOWED_EGRESS = `egress may go only to the proxy's or the broker's pods of the namespace (podSelector sandbox.role=proxy or broker) and to the cluster's DNS on DNS ports (kube-system on 53, dns or dns-tcp; openshift-dns on 53 or 5353; NodeLocal DNSCache ${NODE_LOCAL_DNS} on 53)`;
const ALLOWED_INGRESS = "ingress may come only from pods of the same namespace (a podSelector alone)";

/**
 * What a NetworkPolicy opens beyond the walls, one message per rule: an ingress rule that admits anything from
 * outside its namespace, or an egress rule that reaches beyond the proxy, the broker and DNS. The proxy's and the
 * broker's own policies (their pods identified in `services`) may send them out.
 */
export function judgeNetworkPolicy(p: NetworkPolicy, services: readonly ServicePod[]): Finding[] {
  const who = `NetworkPolicy "${p.name}"`;
  // A value not known yet (or unreadable) anywhere in the spec could open anything: a note (a violation).
  const hidden = hiddenValue(p.spec);
  if (hidden !== undefined) return [unchecked(`${who}: its spec`, "spec", hidden)];
  const out: Finding[] = [];
  const types = policyTypes(p.spec);
  if (types.ingress) {
    items(field(p.spec, "ingress")).forEach((rule, i) => {
      const from = items(field(rule, "from"));
      const why =
        from.length === 0
          ? "has no `from` (every source, outside the namespace too)"
          : from.map(openIngressPeer).find((w) => w !== undefined);
      if (why !== undefined)
        out.push({
          message: `${who}: spec.ingress[${i}] admits ${why}; ${ALLOWED_INGRESS}`,
          path: `spec.ingress[${i}]`,
        });
    });
  }
  if (types.egress) {
    const selector = field(p.spec, "podSelector");
    const role = roleOf(selector);
    const selected = services.filter(
      (s) => s.role === role && s.namespace === p.namespace && selects(selector, s.labels) === true,
    );
    // A service whose configuration is not in the input (its allowlist, its routes) is not judged: a policy is the
    // services' own only when every proxy or broker it selects is identified and judged.
    const unjudged = selected.find((s) => s.configured !== true);
    const own = (role === "proxy" || role === "broker") && selected.length > 0 && unjudged === undefined;
    if (!own) {
      items(field(p.spec, "egress")).forEach((rule, i) => {
        const to = items(field(rule, "to"));
        const why =
          to.length === 0
            ? "has no `to` (every destination)"
            : to.map((peer) => openEgressPeer(peer, rule)).find((w) => w !== undefined);
        if (why === undefined) return;
        const service =
          unjudged !== undefined
            ? `; it selects the ${unjudged.role} ${unjudged.workload ?? ""}, whose configuration (ConfigMap ${JSON.stringify(unjudged.configMap)} with ${CONFIG_FILES[unjudged.role]}, or ${SERVICES[unjudged.role].configEnv}) is not in the input, so it cannot be judged and the policy is not exempt (every ${unjudged.role} it selects must be)`
            : role === "proxy" || role === "broker"
              ? `; it selects sandbox.role=${role}, but no ${role} of namespace ${JSON.stringify(p.namespace ?? "(the provider's)")} in the input (a pod of image ${SERVICES[role].image} that mounts its ConfigMap at ${SERVICES[role].configDir}) is selected by it, so it is not the ${role}'s own policy`
              : "";
        out.push({
          message: `${who}: spec.egress[${i}] ${why.startsWith("has") ? why : `reaches ${why}`}; ${ALLOWED_EGRESS}${service}`,
          path: `spec.egress[${i}]`,
        });
      });
    }
  }
  return out;
}
