/**
 * Cluster objects whose meaning is another object of the input (part of `sandbox-disallow-unjudged-references`):
 *
 * - A RoleBinding or ClusterRoleBinding grants the rules of the role its `roleRef` names. A role of the input is
 *   judged on its own, a built-in role of the claimed Kubernetes version by what bootstrappolicy gives it
 *   (../sources/kubernetes/rbac-grants.ts); any other role's rules are not known, so the binding fails closed.
 * - A write of ConfigMaps that names, in `resourceNames`, a ConfigMap a proxy or broker pod of the input mounts: the
 *   kubelet syncs a rewritten one into the pod, and a restart loads it (the names the components give those
 *   ConfigMaps, and writes without names, are refused on the role alone).
 * - A validating webhook whose `clientConfig.service` is an ExternalName Service of the input: the API server's
 *   service resolver (k8s.io/apiserver pkg/util/proxy `ResolveCluster`, kube-apiserver's default) sends to
 *   https://<externalName>:<port>, outside the cluster, as for `clientConfig.url`. A Service the input does not hold
 *   keeps the verdict of a cluster Service.
 */
import { BROKER_IMAGE, PROXY_IMAGE } from "../../components/model";
import { unchecked, violation } from "../rules/helpers";
import { resourceKinds } from "../sources/kubernetes/kinds";
import { webhookSendsOut } from "../sources/kubernetes/kinds-conditions";
import { configMapWrite } from "../sources/kubernetes/rbac-grants";
import { parseKubeType } from "../sources/kubernetes/sites";
import { field, isObj, items, str } from "../sources/lenient";
import { adaptResources } from "../sources/subject";
import { isUnknown } from "../workload";
import { bareImage } from "./network-policy";
import type { StackFinding, StackResource } from "./types";

type Input = Pick<StackResource, "type" | "name" | "urn" | "props">;

/**
 * The roles every cluster of the claimed version holds (k8s.io/kubernetes plugin/pkg/auth/authorizer/rbac/
 * bootstrappolicy policy.go, controller_policy.go, namespace_policy.go, with every feature gate).
 */
const BUILTIN_CLUSTER_ROLES = new Set([
  "admin",
  "cluster-admin",
  "edit",
  "view",
  ...[
    "aggregate-to-admin",
    "aggregate-to-edit",
    "aggregate-to-view",
    "auth-delegator",
    "basic-user",
    "certificates.k8s.io:certificatesigningrequests:nodeclient",
    "certificates.k8s.io:certificatesigningrequests:selfnodeclient",
    "certificates.k8s.io:kube-apiserver-client-approver",
    "certificates.k8s.io:kube-apiserver-client-kubelet-approver",
    "certificates.k8s.io:kubelet-serving-approver",
    "certificates.k8s.io:legacy-unknown-approver",
    "cluster-trust-bundle-discovery",
    "discovery",
    "heapster",
    "kube-aggregator",
    "kube-controller-manager",
    "kube-dns",
    "kube-scheduler",
    "kubelet-api-admin",
    "monitoring",
    "node",
    "node-bootstrapper",
    "node-problem-detector",
    "node-proxier",
    "persistent-volume-provisioner",
    "public-info-viewer",
    "service-account-issuer-discovery",
    "volume-scheduler",
  ].map((n) => `system:${n}`),
  ...[
    "attachdetach-controller",
    "certificate-controller",
    "clusterrole-aggregation-controller",
    "cronjob-controller",
    "daemon-set-controller",
    "deployment-controller",
    "device-taint-eviction-controller",
    "disruption-controller",
    "endpoint-controller",
    "endpointslice-controller",
    "endpointslicemirroring-controller",
    "ephemeral-volume-controller",
    "expand-controller",
    "generic-garbage-collector",
    "horizontal-pod-autoscaler",
    "job-controller",
    "kube-apiserver-serving-clustertrustbundle-publisher",
    "legacy-service-account-token-cleaner",
    "namespace-controller",
    "node-controller",
    "persistent-volume-binder",
    "pod-garbage-collector",
    "podcertificaterequestcleaner",
    "podgroup-protection-controller",
    "pv-protection-controller",
    "pvc-protection-controller",
    "replicaset-controller",
    "replication-controller",
    "resource-claim-controller",
    "resourcepoolstatusrequest-controller",
    "resourcequota-controller",
    "root-ca-cert-publisher",
    "route-controller",
    "selinux-warning-controller",
    "service-account-controller",
    "service-cidrs-controller",
    "service-controller",
    "statefulset-controller",
    "storage-version-garbage-collector",
    "storage-version-migrator-controller",
    "ttl-after-finished-controller",
    "ttl-controller",
    "validatingadmissionpolicy-status-controller",
    "volumeattributesclass-protection-controller",
  ].map((n) => `system:controller:${n}`),
]);

/** The built-in Roles, by namespace (namespace_policy.go). */
const BUILTIN_ROLES: Readonly<Record<string, readonly string[]>> = {
  "kube-system": [
    "extension-apiserver-authentication-reader",
    "system::leader-locking-kube-controller-manager",
    "system::leader-locking-kube-scheduler",
    "system:controller:bootstrap-signer",
    "system:controller:cloud-provider",
    "system:controller:token-cleaner",
  ],
  "kube-public": ["system:controller:bootstrap-signer"],
};

/** A core or RBAC object of the input: kind, name, namespace ("" unwritten) and props. */
interface Obj {
  readonly r: Input;
  readonly kind: string;
  readonly name: string;
  readonly namespace: string;
}

function objectsOf(resources: readonly Input[]): Obj[] {
  return resources.flatMap((r) => {
    const t = parseKubeType(r.type);
    if (t === undefined) return [];
    const name = str(field(field(r.props, "metadata"), "name"));
    const ns = str(field(field(r.props, "metadata"), "namespace"));
    return [
      {
        r,
        kind: `${t.group}/${t.kind}`,
        name: typeof name === "string" ? name : "",
        namespace: typeof ns === "string" ? ns : "",
      },
    ];
  });
}

/** Two namespaces that may be one (an unwritten one lands where the set is applied). */
const sameNamespace = (a: string, b: string) => a === "" || b === "" || a === b;

const RBAC = "rbac.authorization.k8s.io";

/** A binding whose roleRef names a role neither in the input nor built in: its rules are not known. */
function bindingFindings(b: Obj, objects: readonly Obj[]): StackFinding[] {
  const ref = field(b.r.props, "roleRef");
  const kind = str(field(ref, "kind"));
  const name = str(field(ref, "name"));
  const at = `${b.kind.slice(RBAC.length + 1)} "${b.r.name}"`;
  if (isUnknown(ref) || isUnknown(kind) || isUnknown(name))
    return [{ ...unchecked(`the role ${at} binds`, "roleRef"), urn: b.r.urn }];
  if (typeof name !== "string" || (kind !== "ClusterRole" && kind !== "Role")) return [];
  if (kind === "ClusterRole") {
    if (BUILTIN_CLUSTER_ROLES.has(name)) return [];
    if (objects.some((o) => o.kind === `${RBAC}/ClusterRole` && o.name === name)) return [];
  } else {
    if (Object.hasOwn(BUILTIN_ROLES, b.namespace) && BUILTIN_ROLES[b.namespace]?.includes(name)) return [];
    if (
      objects.some(
        (o) => o.kind === `${RBAC}/Role` && o.name === name && sameNamespace(o.namespace, b.namespace),
      )
    )
      return [];
  }
  const msg = `${at} binds roleRef ${kind} ${JSON.stringify(name)}, which is neither in the input nor a built-in role of the claimed Kubernetes version: its rules are whatever the cluster holds under that name, so what it grants cannot be judged (declare the ${kind} in the same input, where its rules are judged)`;
  return [{ ...violation(msg, "roleRef.name"), urn: b.r.urn }];
}

/** The ConfigMaps proxy and broker pods of the input mount (by the role label or the image), by namespace. */
function serviceConfigMaps(resources: readonly Input[]): { name: string; namespace: string }[] {
  const out: { name: string; namespace: string }[] = [];
  for (const r of resources) {
    if (!r.type.startsWith("kubernetes:")) continue;
    for (const w of adaptResources(r.type, r.props, r.name)) {
      if (w.subject !== "workload") continue;
      const service =
        w.role === "proxy" ||
        w.role === "broker" ||
        w.containers.some(
          (c) => typeof c.image === "string" && [PROXY_IMAGE, BROKER_IMAGE].includes(bareImage(c.image)),
        );
      if (!service || isUnknown(w.podVolumes)) continue;
      const ns = typeof w.podNamespace === "string" ? w.podNamespace : "";
      for (const v of w.podVolumes ?? [])
        for (const c of v.configMaps ?? [])
          if (typeof c.name === "string") out.push({ name: c.name, namespace: ns });
    }
  }
  return out;
}

/** A role whose ConfigMap writes name a ConfigMap a proxy or broker pod of the input mounts. */
function roleFindings(role: Obj, mounted: readonly { name: string; namespace: string }[]): StackFinding[] {
  const cluster = role.kind === `${RBAC}/ClusterRole`;
  const names = new Set(
    mounted.filter((m) => cluster || sameNamespace(m.namespace, role.namespace)).map((m) => m.name),
  );
  if (names.size === 0) return [];
  for (const [i, rule] of items(field(role.r.props, "rules")).entries()) {
    if (!isObj(rule) || configMapWrite(rule, `rules[${i}]`) !== undefined) continue;
    const why = configMapWrite(rule, `rules[${i}]`, names);
    if (why !== undefined)
      return [
        {
          ...violation(
            `${role.kind.slice(RBAC.length + 1)} "${role.r.name}" ${why}`,
            `rules[${i}].resourceNames`,
          ),
          urn: role.r.urn,
        },
      ];
  }
  return [];
}

/** True when a role may write ConfigMaps it names (a cheap look before any pod is read). */
function namesConfigMaps(o: Obj): boolean {
  return items(field(o.r.props, "rules")).some(
    (rule) =>
      isObj(rule) &&
      items(rule.resourceNames).length > 0 &&
      configMapWrite(rule, "", new Set()) === undefined,
  );
}

/** The findings of bindings, roles and webhooks read with the rest of the input. */
export function clusterReferenceFindings(resources: readonly Input[]): StackFinding[] {
  const objects = objectsOf(resources);
  const out: StackFinding[] = [];
  for (const o of objects)
    if (o.kind === `${RBAC}/RoleBinding` || o.kind === `${RBAC}/ClusterRoleBinding`)
      out.push(...bindingFindings(o, objects));
  const roles = objects.filter(
    (o) => (o.kind === `${RBAC}/Role` || o.kind === `${RBAC}/ClusterRole`) && namesConfigMaps(o),
  );
  if (roles.length > 0) {
    const mounted = serviceConfigMaps(resources);
    for (const role of roles) out.push(...roleFindings(role, mounted));
  }
  const external = objects.filter(
    (o) => o.kind === "core/Service" && str(field(field(o.r.props, "spec"), "type")) === "ExternalName",
  );
  if (external.length > 0)
    for (const o of objects) {
      if (o.kind !== "admissionregistration.k8s.io/ValidatingWebhookConfiguration") continue;
      const why = webhookSendsOut(o.r.props, resourceKinds, (name, namespace, port) => {
        const svc = external.find((e) => e.name === name && sameNamespace(e.namespace, namespace));
        const host = str(field(field(svc?.r.props, "spec"), "externalName"));
        if (svc === undefined) return undefined;
        return `${typeof host === "string" ? JSON.stringify(`https://${host}:${port}`) : "the host it names"} (clientConfig.service ${namespace}/${name} is an ExternalName Service of the input: the API server calls its externalName)`;
      });
      if (why !== undefined)
        out.push({
          ...violation(`ValidatingWebhookConfiguration "${o.r.name}" ${why}`, "webhooks"),
          urn: o.r.urn,
        });
    }
  return out;
}
