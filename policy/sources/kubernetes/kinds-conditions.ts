/**
 * The settings that make an object of an otherwise inert built-in kind fail closed (kinds-builtin.ts `unless`):
 * RBAC that grants the cluster to everyone or cluster-admin's powers, a validating webhook that receives every
 * Secret, a PersistentVolume whose source the node mounts over its network or from a host-path driver, a Namespace
 * that opts every pod into a service mesh's injector.
 */
import { isObj } from "../lenient";
import { csiDriverClass } from "./csi-drivers";
import { injects } from "./fields";
import type { ResourceKinds } from "./kind-verdict";

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const strs = (v: unknown): string[] => list(v).filter((x): x is string => typeof x === "string");

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

/**
 * Where the API server sends a webhook's requests when that is outside the cluster, for `clientConfig.service`
 * (name, namespace, port): its description, or undefined for a Service of the cluster or one the input lacks.
 */
export type OutsideService = (name: string, namespace: string, port: number) => string | undefined;

/**
 * A validating webhook the API server calls at a URL (`clientConfig.url`: a host outside the cluster, where no
 * NetworkPolicy holds), or through a Service `outside` resolves outside the cluster (an ExternalName Service of the
 * input: k8s.io/apiserver pkg/util/proxy `ResolveCluster` sends to https://<externalName>:<port>), with objects that
 * carry task specs or credentials: literal env values, proxy settings, workflow parameters. Every kind it matches
 * must be one that holds neither (a kind the verdicts call inert or judge with its set); a service of the cluster,
 * or one the input does not hold, keeps the verdict above.
 */
export function webhookSendsOut(
  props: unknown,
  kinds: ResourceKinds,
  outside: OutsideService = () => undefined,
): string | undefined {
  const o = isObj(props) ? props : {};
  for (const [i, w] of list(o.webhooks).entries()) {
    const client = isObj(w) && isObj(w.clientConfig) ? w.clientConfig : {};
    const svc = isObj(client.service) ? client.service : undefined;
    const to =
      typeof client.url === "string"
        ? JSON.stringify(client.url)
        : svc !== undefined && typeof svc.name === "string" && typeof svc.namespace === "string"
          ? outside(svc.name, svc.namespace, typeof svc.port === "number" ? svc.port : 443)
          : undefined;
    if (to === undefined) continue;
    for (const r of list(isObj(w) ? w.rules : undefined)) {
      const rule = isObj(r) ? r : {};
      for (const g of strs(rule.apiGroups))
        for (const res of strs(rule.resources)) {
          const found = res.startsWith("*") ? [] : kinds(g, res);
          const carries =
            found.length === 0 || found.some((k) => k.verdict?.v !== "inert" && k.verdict?.v !== "stack");
          if (carries)
            return `webhooks[${i}] sends ${res}${g === "" ? "" : ` (${g})`} objects, which carry task specs or credentials, to ${to} outside the cluster (allowed: a webhook of a cluster Service that is no ExternalName, or one outside that matches only kinds that hold neither)`;
        }
    }
  }
  return undefined;
}

/** A validating webhook that receives Secrets, or sends what a task runs with out of the cluster. */
export function webhookSettings(props: unknown, kinds: ResourceKinds): string | undefined {
  return webhookSeesSecrets(props) ?? webhookSendsOut(props, kinds);
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

/**
 * The newest Pod Security version whose checks refuse more than the one before (pod-security-admission policy
 * check_hostProbesAndhostLifecycle.go: probes' and lifecycle hooks' `host` from v1.34; later versions only relax).
 */
const PSA_NEWEST_REFUSAL = 34;

/**
 * A Namespace whose Pod Security enforce label is weaker than restricted, or pinned to a version older than the
 * checks the rules stand beside, read as pod-security-admission api/helpers.go `PolicyToEvaluate` reads them: a
 * level other than privileged, baseline or restricted is restricted, a version other than `latest` or `v1.<n>` is
 * the latest. No label is the cluster's own default, which the input does not hold.
 */
export function podSecurityLevel(props: unknown): string | undefined {
  const meta = isObj(props) && isObj(props.metadata) ? props.metadata : {};
  const labels = isObj(meta.labels) ? meta.labels : {};
  const level = labels["pod-security.kubernetes.io/enforce"];
  const allowed = 'enforce "restricted" at "latest" or v1.34 and later';
  if (level === "privileged" || level === "baseline")
    return `its label pod-security.kubernetes.io/enforce: ${JSON.stringify(level)} lets the API server admit pods in it that Pod Security restricted refuses (allowed: ${allowed}, or no label)`;
  const version = labels["pod-security.kubernetes.io/enforce-version"];
  const m = typeof version === "string" ? /^v1\.([0-9]|[1-9][0-9]*)$/.exec(version) : null;
  if (m !== null && Number(m[1]) < PSA_NEWEST_REFUSAL)
    return `its label pod-security.kubernetes.io/enforce-version: ${JSON.stringify(version)} enforces the checks of Kubernetes ${version}, without those added since (a probe's or lifecycle hook's host, from v1.34) (allowed: ${allowed})`;
  return undefined;
}

/** A Namespace that weakens Pod Security or opts every pod into a mesh injector. */
export function namespaceSettings(props: unknown): string | undefined {
  return podSecurityLevel(props) ?? meshInjection(props);
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
