/**
 * What an RBAC Role, ClusterRole or binding grants a subject (kinds-builtin.ts `unless`): permissions reach a task
 * through a service account token in its pod, so a role that amounts to host access, credential read or privilege
 * escalation fails closed. Read as the API server's RBAC authorizer matches a request to a rule
 * (k8s.io/kubernetes pkg/apis/rbac/v1 evaluation_helpers.go: `*` matches every verb, group, resource or URL,
 * `*` slash a subresource that subresource of every resource, a trailing `*` a URL prefix), with the risks of Kubernetes' "Role Based
 * Access Control Good Practices" (listing Secrets, workload creation, persistent volume creation, the nodes/proxy
 * subresource, escalate, bind and impersonate, CSRs, token requests, webhooks, namespace modification), and the
 * built-in roles as plugin/pkg/auth/authorizer/rbac/bootstrappolicy (policy.go, controller_policy.go) of the claimed
 * version defines them.
 */
import { isObj } from "../lenient";
import type { ResourceKinds } from "./kind-verdict";

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const strs = (v: unknown): string[] => list(v).filter((x): x is string => typeof x === "string");

/** Subjects that are everyone who reaches the API server (k8s.io/apiserver user and group names). */
const PUBLIC = new Set(["system:unauthenticated", "system:authenticated", "system:anonymous"]);

const WRITE = ["create", "update", "patch"];
const EXEC =
  "runs commands in another pod (a websocket exec, attach or port-forward is a GET), with its mounts, token and network";
const PROXY = "reaches other pods' and Services' ports through the API server, around the NetworkPolicies";
const NODE =
  "reaches the kubelet's API of every node: exec, run and attach in any pod on it (a websocket exec is a GET), root on the node";

/** Grants by group ("" is core), resource (with its subresource) and verbs (none listed: every verb). */
const SENSITIVE: readonly { group: string; resource: string; verbs?: readonly string[]; why: string }[] = [
  {
    group: "",
    resource: "secrets",
    verbs: ["get", "list", "watch"],
    why: "reads Secrets: every credential and service account token they hold",
  },
  { group: "", resource: "nodes/proxy", why: NODE },
  { group: "", resource: "nodes", verbs: ["proxy"], why: NODE },
  { group: "", resource: "pods/exec", verbs: ["get", "create"], why: EXEC },
  { group: "", resource: "pods/attach", verbs: ["get", "create"], why: EXEC },
  { group: "", resource: "pods/portforward", verbs: ["get", "create"], why: EXEC },
  { group: "", resource: "pods/proxy", why: PROXY },
  { group: "", resource: "services/proxy", why: PROXY },
  {
    group: "",
    resource: "pods/ephemeralcontainers",
    verbs: ["update", "patch"],
    why: "adds a container of any image and settings to a running pod, after the rules judged the pod",
  },
  {
    group: "",
    resource: "serviceaccounts/token",
    verbs: ["create"],
    why: "mints tokens of its namespace's service accounts: their rights, for any audience a cloud trusts",
  },
  {
    group: "certificates.k8s.io",
    resource: "certificatesigningrequests/approval",
    verbs: ["update", "patch"],
    why: "approves certificate requests: a client certificate for any user, group or node a signer issues",
  },
  {
    group: "certificates.k8s.io",
    resource: "signers",
    verbs: ["approve", "sign"],
    why: "approves or signs certificates of a signer: a client certificate for any user, group or node",
  },
  {
    group: "certificates.k8s.io",
    resource: "certificatesigningrequests/nodeclient",
    verbs: ["create"],
    why: "has the controller approve node client certificates: a node's identity",
  },
  {
    group: "certificates.k8s.io",
    resource: "certificatesigningrequests/selfnodeclient",
    verbs: ["create"],
    why: "has the controller approve node client certificates: a node's identity",
  },
];

/** RBAC's match of a rule's resource entry to a resource with its subresource (`*`, the name, or `*` slash its subresource). */
function resourceMatches(entry: string, resource: string): boolean {
  if (entry === "*" || entry === resource) return true;
  const sub = resource.includes("/") ? resource.slice(resource.indexOf("/") + 1) : "";
  return sub !== "" && entry === `*/${sub}`;
}

/** Writing a kind the rules judge, fail closed on, or judge with its set makes one at run time, unseen. */
function writeReason(group: string, resource: string, kinds: ResourceKinds): string | undefined {
  if (resource.includes("/")) return undefined;
  const found = kinds(group, resource);
  if (found.length === 0)
    return `${resource} of ${group === "" ? "the core group" : group === "*" ? "any group" : group} is no resource of a kind with a verdict: what its objects do is not known`;
  for (const { group: g, kind, verdict } of found) {
    const named = `${kind} (${g === "core" ? "core" : g})`;
    if (verdict === undefined) return `${named} has no verdict`;
    if (verdict.v === "read" || verdict.v === "unjudged")
      return `${named} is a kind the rules judge or refuse: the subject makes such objects at run time, where no rule sees them`;
    if (verdict.v === "stack")
      return `${named} is judged with its set (${verdict.rules.join(", ")}): the subject changes it at run time, where no rule sees it`;
    // The API server lets a subject create a role or binding only with rights it already holds (escalate and bind
    // aside, refused above); a ConfigMap's condition names controllers' ConfigMaps (kinds-builtin.ts).
    const guarded = g === "rbac.authorization.k8s.io" || (g === "core" && kind === "ConfigMap");
    if (verdict.unless !== undefined && !guarded)
      return `${named} passes only without the settings its verdict refuses: the subject writes them at run time, where no rule sees them`;
  }
  return undefined;
}

/**
 * Subresource writes that change what a wall reads. A status subresource's strategy (k8s.io/kubernetes
 * pkg/registry/<group>/<kind>/strategy.go, `PrepareForUpdate` and `GetResetFields` of its status strategy) keeps the
 * old spec and, for a few kinds, some metadata; the write changes the rest of the object, labels and annotations
 * among them. Deployments' status keeps their labels too, and no wall reads a workload's own labels or status (a
 * NetworkPolicy selects pods and namespaces), so `deployments/status`, `jobs/status` and the like pass; so do reads
 * (`pods/log`, `jobs/status` get) and the requests that store nothing of themselves (`pods/eviction`).
 */
const SUBRESOURCE_WRITES: readonly { group: string; resource: string; why: string }[] = [
  {
    group: "",
    resource: "pods/status",
    why: "the pod status strategy keeps only spec, deletionTimestamp and ownerReferences (pkg/registry/core/pod/strategy.go), so it rewrites a pod's labels: a task relabels itself into the proxy's NetworkPolicies or its identity; and status.podIPs, which EndpointSlices route to",
  },
  {
    group: "",
    resource: "pods/resize",
    why: "it changes a running pod's container resources (pkg/registry/core/pod/strategy.go podResizeStrategy), past the budget bound the pod was judged by",
  },
  {
    group: "",
    resource: "services/status",
    why: "the Service status strategy keeps only spec (pkg/registry/core/service/strategy.go): it sets status.loadBalancer.ingress, whose addresses kube-proxy captures inside the cluster and sends to the Service's endpoints (CVE-2020-8554), and rewrites the Service's labels and annotations, a load balancer controller's settings",
  },
  {
    group: "",
    resource: "nodes/status",
    why: "the node status strategy keeps only spec (pkg/registry/core/node/strategy.go): it rewrites a node's labels, which node selectors and affinity read, its addresses, where the API server dials the kubelet, and the conditions and capacity the scheduler places pods by",
  },
  {
    group: "",
    resource: "namespaces/status",
    why: "the namespace status strategy keeps only spec (pkg/registry/core/namespace/strategy.go): it rewrites the namespace's labels, which NetworkPolicies' namespaceSelector and Pod Security Admission read",
  },
  {
    group: "",
    resource: "resourcequotas/status",
    why: "the quota status strategy keeps only spec (pkg/registry/core/resourcequota/strategy.go): it rewrites status.used, which quota admission charges new pods against, so the budget bound stops holding",
  },
];

/**
 * Why writing a subresource changes what a wall reads, or undefined: the table above, and the scale subresource of
 * any kind that runs pods (`deployments/scale`, `statefulsets/scale`, `replicasets/scale`,
 * `replicationcontrollers/scale`, an operator's), which sets spec.replicas: the budget bound counts every replica.
 */
function subresourceWriteReason(group: string, resource: string, kinds: ResourceKinds): string | undefined {
  const slash = resource.indexOf("/");
  if (slash < 0) return undefined;
  const hit = SUBRESOURCE_WRITES.find(
    (s) => (group === "*" || group === s.group) && resourceMatches(resource, s.resource),
  );
  if (hit !== undefined) return hit.why;
  if (resource.slice(slash + 1) !== "scale") return undefined;
  const found = kinds(group, resource);
  if (found.length === 0)
    return `${resource.slice(0, slash)} of ${group === "" ? "the core group" : group === "*" ? "any group" : group} is no resource of a kind with a verdict: what its replicas run is not known`;
  const runs = found.find((k) => k.verdict === undefined || k.verdict.v !== "inert");
  return runs === undefined
    ? undefined
    : `it sets spec.replicas of ${runs.kind} (${runs.group}): each replica is a pod the budget bound counts (sandbox-require-budget-bound), so more of them at run time exceed it`;
}

/** The stack rules whose objects are walls: removing one (a NetworkPolicy, a quota) opens what it closed. */
const WALL_RULES = ["sandbox-require-proxy-only-egress", "sandbox-require-budget-bound"];

/** Deleting an object of a kind that holds a wall of the set (its egress policies, its budget bound). */
function wallReason(group: string, resource: string, kinds: ResourceKinds): string | undefined {
  if (resource.includes("/")) return undefined;
  for (const { group: g, kind, verdict } of kinds(group, resource))
    if (verdict?.v === "stack" && verdict.rules.some((r) => WALL_RULES.includes(r)))
      return `${kind} (${g}) holds a wall of the set (${verdict.rules.join(", ")}): the subject removes it at run time`;
  return undefined;
}

/** Label sets of the built-in ClusterRoles (bootstrappolicy policy.go): an aggregation selector that matches one. */
const BUILTIN_LABELS: readonly [string, Readonly<Record<string, string>>][] = [
  ["cluster-admin, admin and every system role", {}],
  ["edit and system:aggregate-to-admin", { "rbac.authorization.k8s.io/aggregate-to-admin": "true" }],
  ["system:aggregate-to-edit", { "rbac.authorization.k8s.io/aggregate-to-edit": "true" }],
].map(([n, l]) => [n as string, { "kubernetes.io/bootstrapping": "rbac-defaults", ...(l as object) }]);

/** A label selector's match (apimachinery LabelSelectorAsSelector); an operator it does not know matches. */
function selects(selector: unknown, labels: Readonly<Record<string, string>>): boolean {
  const s = isObj(selector) ? selector : {};
  const has = (k: string) => Object.hasOwn(labels, k);
  for (const [k, v] of Object.entries(isObj(s.matchLabels) ? s.matchLabels : {}))
    if (!has(k) || labels[k] !== v) return false;
  for (const e of list(s.matchExpressions)) {
    const x = isObj(e) ? e : {};
    const key = typeof x.key === "string" ? x.key : "";
    const values = strs(x.values);
    const ok =
      x.operator === "In"
        ? has(key) && values.includes(labels[key] ?? "")
        : x.operator === "NotIn"
          ? !has(key) || !values.includes(labels[key] ?? "")
          : x.operator === "Exists"
            ? has(key)
            : x.operator === "DoesNotExist"
              ? !has(key)
              : true;
    if (!ok) return false;
  }
  return true;
}

/** A ClusterRole whose aggregation takes in the rules of a built-in role that grants too much. */
function aggregation(o: Record<string, unknown>): string | undefined {
  const agg = isObj(o.aggregationRule) ? o.aggregationRule : undefined;
  for (const [i, sel] of list(agg?.clusterRoleSelectors).entries())
    for (const [names, labels] of BUILTIN_LABELS)
      if (selects(sel, labels))
        return `aggregationRule.clusterRoleSelectors[${i}] selects the built-in ${names}: the controller copies their rules (Secrets, pods, exec, tokens) into it (allowed: a selector of rbac.authorization.k8s.io/aggregate-to-view or of labels no built-in role carries)`;
  return undefined;
}

/** The names the project's components give the proxy's and the broker's ConfigMaps (components/model names.ts). */
export const SERVICE_CONFIG_MAP = /-(proxy|broker)-config$/;

const CONFIG_WRITES = ["create", "update", "patch", "delete", "deletecollection"];

/**
 * A write of core ConfigMaps that may reach the proxy's or the broker's configuration: the kubelet syncs a rewritten
 * ConfigMap into the pod's volume, and a restart loads it (squid.conf's `http_access allow all`). Without
 * `resourceNames` it reaches every ConfigMap of its namespace (create and deletecollection carry no name, so their
 * `resourceNames` never match and they stay refused); with them, a name the components give those ConfigMaps
 * (`<project>-proxy-config`, `<project>-broker-config`) is refused, and `mounted` names those a proxy or broker pod
 * of the input mounts (the set-wide check). A write naming only other ConfigMaps passes.
 */
export function configMapWrite(
  r: Record<string, unknown>,
  at: string,
  mounted: ReadonlySet<string> = new Set(),
): string | undefined {
  const verbs = strs(r.verbs);
  const write = verbs.find((v) => v === "*" || CONFIG_WRITES.includes(v));
  if (write === undefined) return undefined;
  if (!strs(r.apiGroups).some((g) => g === "" || g === "*")) return undefined;
  if (!strs(r.resources).some((x) => x === "configmaps" || x === "*")) return undefined;
  const names = strs(r.resourceNames);
  const named =
    " (allowed: name the ConfigMaps it writes in resourceNames, none of them the proxy's or the broker's; a role that must create ConfigMaps, which resourceNames cannot narrow, is refused too: that false deny is the price of keeping the proxy's and broker's configuration out of reach)";
  if (names.length === 0)
    return `${at} allows ${write} on configmaps without resourceNames: every ConfigMap of its namespace, the proxy's squid.conf and the broker's configuration among them, which the kubelet syncs into their pods and a restart loads${named}`;
  const hit = names.find((n) => SERVICE_CONFIG_MAP.test(n) || mounted.has(n));
  if (hit !== undefined)
    return `${at} allows ${write} on configmaps ${JSON.stringify(hit)}, ${SERVICE_CONFIG_MAP.test(hit) ? "the name the project gives the proxy's or the broker's configuration" : "a ConfigMap a proxy or broker pod of the input mounts"}: the kubelet syncs a rewritten one into the pod and a restart loads it${named}`;
  return undefined;
}

/**
 * A Role or ClusterRole that grants host access, credential read or privilege escalation: the rule it breaks, what
 * it allows and why. A role that reads objects holding no credential (ConfigMaps, pods, events) passes.
 */
export function roleGrant(props: unknown, kinds: ResourceKinds): string | undefined {
  const o = isObj(props) ? props : {};
  const allowed =
    " (a task's role may read objects that hold no credential, such as ConfigMaps, pods and events, and write none a rule judges)";
  for (const [i, r] of list(o.rules).entries()) {
    if (!isObj(r)) continue;
    const at = `rules[${i}]`;
    const verbs = strs(r.verbs);
    const resources = strs(r.resources);
    const groups = strs(r.apiGroups);
    const urls = strs(r.nonResourceURLs);
    if (verbs.includes("*") && (resources.includes("*") || urls.includes("*")))
      return `${at} allows every verb on every resource: cluster-admin's powers to a task holding a token of it`;
    const raise = verbs.filter((v) => v === "escalate" || v === "bind" || v === "impersonate");
    if (raise.length > 0)
      return `${at} allows ${raise.join(", ")}: a subject that holds it can give itself any rights`;
    if (verbs.includes("*"))
      return `${at}.verbs "*" allows every verb on ${JSON.stringify([...resources, ...urls])}, escalate, bind and impersonate and any a later version adds among them${allowed}`;
    const wild = resources.find((x) => x.includes("*"));
    if (wild !== undefined)
      return `${at}.resources ${JSON.stringify(wild)} allows ${verbs.join(", ")} on every resource${wild === "*" ? "" : " with that subresource"} of ${JSON.stringify(groups)}, Secrets and pods' exec among them, and any a later version adds${allowed}`;
    const url = urls.find(
      (u) => u === "/*" || u === "/logs" || (u.endsWith("*") && "/logs/".startsWith(u.slice(0, -1))),
    );
    if (url !== undefined)
      return `${at}.nonResourceURLs ${JSON.stringify(url)} reaches ${url === "/*" ? "every URL of the API server" : "the API server's /logs, the control-plane host's log files"}${allowed}`;
    const config = configMapWrite(r, at);
    if (config !== undefined) return config;
    for (const g of groups)
      for (const res of resources) {
        for (const s of SENSITIVE) {
          const verb = verbs.find((v) => s.verbs === undefined || s.verbs.includes(v));
          if ((g === "*" || g === s.group) && resourceMatches(res, s.resource) && verb !== undefined)
            return `${at} allows ${verb} on ${res}${s.group === "" ? "" : ` (${s.group})`}: it ${s.why}${allowed}`;
        }
        const write = verbs.find((v) => WRITE.includes(v));
        const why =
          write === undefined
            ? undefined
            : (subresourceWriteReason(g, res, kinds) ?? writeReason(g, res, kinds));
        if (why !== undefined) return `${at} allows ${write} on ${res}: ${why}${allowed}`;
        const remove = verbs.find((v) => v === "delete" || v === "deletecollection");
        const wall = remove === undefined ? undefined : wallReason(g, res, kinds);
        if (wall !== undefined) return `${at} allows ${remove} on ${res}: ${wall}${allowed}`;
      }
  }
  return aggregation(o);
}

/** Built-in ClusterRoles (bootstrappolicy) that grant nothing the rules refuse. */
const HARMLESS_SYSTEM_ROLES = new Set([
  "view",
  "system:aggregate-to-view",
  "system:discovery",
  "system:basic-user",
  "system:public-info-viewer",
  "system:monitoring",
  "system:service-account-issuer-discovery",
  "system:cluster-trust-bundle-discovery",
  "system:auth-delegator",
  "system:kube-aggregator",
  "system:kube-dns",
  "system:heapster",
  "system:node-proxier",
]);

const BIND_ALLOWED =
  " (allowed: roleRef view, the read-only system roles such as system:discovery, or a role of the input that passes)";

/** What a built-in ClusterRole that grants too much holds (bootstrappolicy policy.go), by name. */
function builtinRole(name: string): string | undefined {
  if (name === "cluster-admin")
    return `it binds cluster-admin: a task holding a token of its subjects controls the cluster${BIND_ALLOWED}`;
  if (name === "edit" || name === "admin" || name === "system:aggregate-to-edit")
    return `roleRef.name ${JSON.stringify(name)} binds the built-in role that reads every Secret of the namespace, creates pods and workloads, execs into pods and mints service account tokens${name === "admin" ? ", and writes roles and bindings" : ""}${BIND_ALLOWED}`;
  if (name.startsWith("system:") && !HARMLESS_SYSTEM_ROLES.has(name))
    return `roleRef.name ${JSON.stringify(name)} binds a built-in role of the control plane, a node or a controller, which reads Secrets, creates pods, approves certificates or reaches the kubelets${BIND_ALLOWED}`;
  return undefined;
}

/** A RoleBinding or ClusterRoleBinding that grants to everyone, or binds a built-in role that grants too much. */
export function bindingGrant(props: unknown): string | undefined {
  const o = isObj(props) ? props : {};
  for (const s of list(o.subjects))
    if (isObj(s) && typeof s.name === "string" && PUBLIC.has(s.name))
      return `it grants its role to ${s.name}: everyone who reaches the API server, with or without a pod`;
  const ref = isObj(o.roleRef) ? o.roleRef : {};
  return ref.kind === "ClusterRole" && typeof ref.name === "string" ? builtinRole(ref.name) : undefined;
}
