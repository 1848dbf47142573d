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
  BROKER_IMAGE,
  LABELS,
  PROXY_CONFIG_DIR,
  PROXY_IMAGE,
} from "../../components/model";
import { unchecked } from "../rules/helpers";
import type { Finding } from "../rules/types";
import { entries, field, isObj, items, str } from "../sources/lenient";
import { isUnknown, type WorkloadView } from "../workload";

/** A NetworkPolicy as the rule reads it. */
export interface NetworkPolicy {
  readonly name: string;
  readonly namespace: string | undefined;
  readonly spec: unknown;
  readonly urn: string;
}

/** The pods NetworkPolicies may let through: the proxy and the broker, each known by more than its label. */
export type ServiceRole = "proxy" | "broker";
const SERVICES: Readonly<Record<ServiceRole, { readonly image: string; readonly configDir: string }>> = {
  proxy: { image: PROXY_IMAGE, configDir: PROXY_CONFIG_DIR },
  broker: { image: BROKER_IMAGE, configDir: BROKER_CONFIG_DIR },
};

/** A pod that is the proxy or the broker, with the ConfigMap it reads its configuration from. */
export interface ServicePod {
  readonly role: ServiceRole;
  readonly namespace: string | undefined;
  readonly labels: Readonly<Record<string, string>>;
  readonly configMap: string;
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
  for (const c of w.containers) {
    if (c.role === "ephemeral") continue;
    if (typeof c.image !== "string" || bareImage(c.image) !== image)
      return `container "${c.name}" runs image ${JSON.stringify(c.image ?? "(none)")}, not ${image}`;
    const arg = c.args[0];
    if (arg !== undefined) return `container "${c.name}" replaces the image's entry point (${arg.path})`;
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
      return { role, namespace: typeof ns === "string" ? ns : undefined, labels, configMap: use.name };
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
 * those; when it lists none, always Ingress, and Egress only when it has egress rules (the API server's defaulting).
 */
export function policyTypes(spec: unknown): { readonly ingress: boolean; readonly egress: boolean } {
  const types = field(spec, "policyTypes");
  if (types !== undefined && types !== null) {
    const listed = items(types);
    return { ingress: listed.includes("Ingress"), egress: listed.includes("Egress") };
  }
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

const roleOf = (selector: unknown): unknown => field(field(selector, "matchLabels"), LABELS.role);

/** Why an ingress peer admits pods from outside the policy's namespace (undefined when it does not). */
function openIngressPeer(peer: unknown): string | undefined {
  const ipBlock = field(peer, "ipBlock");
  if (ipBlock !== undefined) return `an ipBlock ${JSON.stringify(str(field(ipBlock, "cidr")) ?? "")}`;
  if (field(peer, "namespaceSelector") !== undefined) return "a namespaceSelector (pods of other namespaces)";
  if (field(peer, "podSelector") === undefined) return "a peer that names no pods (unreadable)";
  return undefined;
}

/** Whether an egress rule is the way to the cluster's DNS: kube-dns of kube-system, on port 53 only. */
function dnsPeer(peer: unknown, rule: unknown): boolean {
  if (field(peer, "ipBlock") !== undefined) return false;
  const ns = field(field(field(peer, "namespaceSelector"), "matchLabels"), "kubernetes.io/metadata.name");
  const app = field(field(field(peer, "podSelector"), "matchLabels"), "k8s-app");
  if (ns !== "kube-system" || app !== "kube-dns") return false;
  const ports = items(field(rule, "ports"));
  return (
    ports.length > 0 &&
    ports.every((p) => {
      const port = field(p, "port");
      const protocol = field(p, "protocol");
      return (
        (port === 53 || port === "53") &&
        field(p, "endPort") === undefined &&
        (protocol === undefined || protocol === "UDP" || protocol === "TCP")
      );
    })
  );
}

/** Why an egress peer lets a pod reach more than the proxy, the broker and DNS (undefined when it does not). */
function openEgressPeer(peer: unknown, rule: unknown): string | undefined {
  if (dnsPeer(peer, rule)) return undefined;
  const ipBlock = field(peer, "ipBlock");
  if (ipBlock !== undefined) return `an ipBlock ${JSON.stringify(str(field(ipBlock, "cidr")) ?? "")}`;
  if (field(peer, "namespaceSelector") !== undefined)
    return "a namespaceSelector (pods of other namespaces; only kube-dns of kube-system on port 53 may be named)";
  const role = roleOf(field(peer, "podSelector"));
  if (role !== "proxy" && role !== "broker")
    return "a podSelector that is not the proxy's or the broker's pods";
  return undefined;
}

const ALLOWED_EGRESS =
  "egress may go only to the proxy's or the broker's pods of the namespace (podSelector sandbox.role=proxy or broker) and to kube-dns of kube-system on port 53";
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
    const own =
      (role === "proxy" || role === "broker") &&
      services.some(
        (s) => s.role === role && s.namespace === p.namespace && selects(selector, s.labels) === true,
      );
    if (!own) {
      items(field(p.spec, "egress")).forEach((rule, i) => {
        const to = items(field(rule, "to"));
        const why =
          to.length === 0
            ? "has no `to` (every destination)"
            : to.map((peer) => openEgressPeer(peer, rule)).find((w) => w !== undefined);
        if (why === undefined) return;
        const service =
          role === "proxy" || role === "broker"
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
