/**
 * The settings that make an object of an otherwise inert built-in kind fail closed (kinds-builtin.ts `unless`):
 * RBAC that grants the cluster to everyone or cluster-admin's powers, a validating webhook that receives every
 * Secret, a PersistentVolume whose source the node mounts over its network or from a host-path driver, a Namespace
 * that opts every pod into a service mesh's injector.
 */
import { isObj } from "../lenient";
import { csiDriverClass } from "./csi-drivers";
import { injects } from "./fields";

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const strs = (v: unknown): string[] => list(v).filter((x): x is string => typeof x === "string");

/** Subjects that are everyone who reaches the API server (k8s.io/apiserver user and group names). */
const PUBLIC = new Set(["system:unauthenticated", "system:authenticated", "system:anonymous"]);

/** A RoleBinding or ClusterRoleBinding that grants to everyone, or binds cluster-admin. */
export function bindingGrant(props: unknown): string | undefined {
  const o = isObj(props) ? props : {};
  for (const s of list(o.subjects))
    if (isObj(s) && typeof s.name === "string" && PUBLIC.has(s.name))
      return `it grants its role to ${s.name}: everyone who reaches the API server, with or without a pod`;
  const ref = isObj(o.roleRef) ? o.roleRef : {};
  if (ref.kind === "ClusterRole" && ref.name === "cluster-admin")
    return "it binds cluster-admin: a task holding a token of its subjects controls the cluster";
  return undefined;
}

/** A Role or ClusterRole whose rules give full control, or the verbs that raise a subject's own rights. */
export function roleGrant(props: unknown): string | undefined {
  const o = isObj(props) ? props : {};
  for (const [i, r] of list(o.rules).entries()) {
    if (!isObj(r)) continue;
    const verbs = strs(r.verbs);
    const resources = strs(r.resources);
    if (verbs.includes("*") && (resources.includes("*") || list(r.nonResourceURLs).includes("*")))
      return `rules[${i}] allows every verb on every resource: cluster-admin's powers to a task holding a token of it`;
    const raise = verbs.filter((v) => v === "escalate" || v === "bind" || v === "impersonate");
    if (raise.length > 0)
      return `rules[${i}] allows ${raise.join(", ")}: a subject that holds it can give itself any rights`;
  }
  return undefined;
}

/** A validating webhook that receives every Secret written (its rules name `secrets` or every resource). */
export function webhookSeesSecrets(props: unknown): string | undefined {
  const o = isObj(props) ? props : {};
  for (const [i, w] of list(o.webhooks).entries())
    for (const r of list(isObj(w) ? w.rules : undefined)) {
      const resources = strs(isObj(r) ? r.resources : undefined);
      if (resources.some((x) => x === "*" || x === "*/*" || x === "secrets" || x.startsWith("secrets/")))
        return `webhooks[${i}] is sent every Secret it matches, with its data, by the API server`;
    }
  return undefined;
}

/** PersistentVolume sources the node mounts over its network or through a host program (pod volume rules' list). */
const NETWORK_SOURCES = [
  "nfs",
  "iscsi",
  "rbd",
  "cephfs",
  "glusterfs",
  "fc",
  "quobyte",
  "scaleIO",
  "storageos",
  "flexVolume",
  "flocker",
  "portworxVolume",
];

/** A PersistentVolume a claim hands a pod from the node's network, a host program or a host-path driver. */
export function persistentVolumeSource(props: unknown): string | undefined {
  const spec = isObj(props) && isObj(props.spec) ? props.spec : {};
  for (const k of NETWORK_SOURCES)
    if (spec[k] !== undefined && spec[k] !== null)
      return `its ${k} source is mounted by the node for any pod that claims it (a pod may not mount it itself)`;
  const csi = isObj(spec.csi) ? spec.csi : undefined;
  if (csi !== undefined) {
    const driver = typeof csi.driver === "string" ? csi.driver : "";
    const cls = csiDriverClass(driver);
    if (cls === "network" || cls === "host")
      return `its CSI driver ${JSON.stringify(driver)} mounts ${cls === "host" ? "a folder of the node" : "a network file system on the node"} for any pod that claims it`;
  }
  return undefined;
}

/** A Namespace that opts every pod in it into a mesh injector (a NET_ADMIN init container, unless a CNI plugin). */
export function meshInjection(props: unknown): string | undefined {
  const meta = isObj(props) && isObj(props.metadata) ? props.metadata : {};
  const labels = isObj(meta.labels) ? meta.labels : {};
  const annotations = isObj(meta.annotations) ? meta.annotations : {};
  if (labels["istio-injection"] === "enabled" || typeof labels["istio.io/rev"] === "string")
    return "its label makes Istio inject a proxy and a NET_ADMIN init container into every pod created in it";
  // Linkerd injects for `enabled` and `ingress` (and reads any other value but `disabled` the pod rules' way).
  const linkerd = annotations["linkerd.io/inject"];
  if (injects("linkerd.io/inject", linkerd))
    return `its annotation linkerd.io/inject: ${JSON.stringify(linkerd)} makes Linkerd inject a proxy and a NET_ADMIN init container into every pod created in it`;
  // Kuma reads its Namespace label (and the annotation it used to read) as it reads a pod's.
  for (const [what, map] of [
    ["label", labels],
    ["annotation", annotations],
  ] as const) {
    const kuma = map["kuma.io/sidecar-injection"];
    if (injects("kuma.io/sidecar-injection", kuma))
      return `its ${what} kuma.io/sidecar-injection: ${JSON.stringify(kuma)} makes Kuma inject a sidecar and a NET_ADMIN init container into every pod created in it`;
  }
  return undefined;
}
