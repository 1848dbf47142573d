/**
 * The verdict of every built-in kind of the Kubernetes version the project claims (schema.generated.ts
 * BUILTIN_KINDS, from k8s.io/api, apiextensions-apiserver and kube-aggregator): how the rules see an object of it.
 * test/policy/sources/kubernetes/kinds.test.ts fails when a generated kind has no verdict here, or a verdict names
 * a kind the version does not have.
 */
import { isObj } from "../lenient";
import { policyLeaksSecretData } from "./admission-cel";
import { controllerDefaults } from "./controller-config";
import { csiDriverClass } from "./csi-drivers";
import type { KindVerdict } from "./kind-verdict";
import { namespaceSettings, persistentVolumeSource, webhookSettings } from "./kinds-conditions";
import { bindingGrant, roleGrant } from "./rbac-grants";

/**
 * A StorageClass whose provisioner mounts a network file system on the node, or makes each claim a folder of the
 * node, by the driver table inline csi volumes and PersistentVolumes are judged by (csi-drivers.ts): a pod's claim
 * of the class (a generic ephemeral volume's among them) gets what no pod may mount itself. A block-storage or
 * unknown provisioner passes: its volumes are judged with the claims that mount them.
 */
function storageClassProvisioner(props: unknown): string | undefined {
  const p = isObj(props) ? props.provisioner : undefined;
  if (typeof p !== "string")
    return p === undefined ? undefined : "its provisioner is not a text the rules can read";
  const cls = csiDriverClass(p.trim());
  if (cls === "network")
    return `its provisioner ${JSON.stringify(p)} mounts a network file system on the node for every claim of the class, outside the egress walls (allowed: a block-storage provisioner)`;
  if (cls === "host")
    return `its provisioner ${JSON.stringify(p)} makes every claim of the class a folder on the node, which no rule sees (allowed: a block-storage provisioner)`;
  return undefined;
}

const read = (by: string): KindVerdict => ({ v: "read", by });
const stack = (rules: readonly string[]): KindVerdict => ({ v: "stack", rules });
const through = (why: string): KindVerdict => ({ v: "through", why });
const inert = (why: string): KindVerdict => ({ v: "inert", why });
const unjudged = (why: string): KindVerdict => ({ v: "unjudged", why });

const PERMISSIONS =
  "permissions reach a task only with a service account token in its pod, which the pod's rules judge";
const POD_CARRIER = read(
  "the pod carriers' reader (policy/sources/kubernetes/carriers.ts): every pod it runs",
);
const REQUEST =
  "a request the API server answers and stores nothing of (a review, an eviction, a binding): nothing runs from it";
const CLUSTER_STATE =
  "cluster bookkeeping written by the control plane; it starts nothing and opens no route";
const DEVICES =
  "devices reach a pod only through the pod's own claims, which sandbox-disallow-devices judges on the pod";
const MUTATES =
  "it changes every pod it matches at admission, after the rules judged the pod as written: what runs is not what was judged";

/** A CustomResourceDefinition whose conversion runs a webhook: stored objects are rewritten by a service. */
function conversionWebhook(props: unknown): string | undefined {
  const spec = isObj(props) ? props.spec : undefined;
  const conversion = isObj(spec) ? spec.conversion : undefined;
  const strategy = isObj(conversion) ? conversion.strategy : undefined;
  if (strategy === undefined || strategy === "None") return undefined;
  return `its conversion strategy is ${JSON.stringify(strategy)}: a webhook rewrites its objects between versions after the rules judged them`;
}

/** group -> kind -> verdict, for every built-in kind. */
export const BUILTIN_KIND_VERDICTS: Readonly<Record<string, Readonly<Record<string, KindVerdict>>>> = {
  "admissionregistration.k8s.io": {
    MutatingAdmissionPolicy: unjudged(MUTATES),
    MutatingAdmissionPolicyBinding: unjudged(`it puts a mutating admission policy in force: ${MUTATES}`),
    MutatingWebhookConfiguration: unjudged(`it sends pods to a webhook that may patch them: ${MUTATES}`),
    ValidatingAdmissionPolicy: {
      v: "inert",
      why: "it can only refuse objects, never change or create one",
      unless: policyLeaksSecretData,
    },
    ValidatingAdmissionPolicyBinding: inert("it puts a validating policy in force, which can only refuse"),
    ValidatingWebhookConfiguration: {
      v: "inert",
      why: "a validating webhook can only refuse objects, never change one",
      unless: webhookSettings,
    },
  },
  "apiextensions.k8s.io": {
    CustomResourceDefinition: {
      v: "inert",
      why: "it defines a kind; objects of that kind are judged by their own kind",
      unless: conversionWebhook,
    },
  },
  "apiregistration.k8s.io": {
    APIService: unjudged(
      "it routes a whole API group to a service of its own, which may create and change objects the rules never see",
    ),
  },
  apps: {
    ControllerRevision: unjudged(
      "it holds a workload's pod template as raw data that a rollback restores without the rules seeing it",
    ),
    DaemonSet: POD_CARRIER,
    Deployment: POD_CARRIER,
    ReplicaSet: POD_CARRIER,
    Scale: inert(REQUEST),
    StatefulSet: POD_CARRIER,
  },
  "authentication.k8s.io": {
    SelfSubjectReview: inert(REQUEST),
    TokenRequest: inert(REQUEST),
    TokenReview: inert(REQUEST),
  },
  "authorization.k8s.io": {
    LocalSubjectAccessReview: inert(REQUEST),
    SelfSubjectAccessReview: inert(REQUEST),
    SelfSubjectRulesReview: inert(REQUEST),
    SubjectAccessReview: inert(REQUEST),
  },
  autoscaling: {
    HorizontalPodAutoscaler: stack(["sandbox-require-budget-bound"]),
    Scale: inert(REQUEST),
  },
  batch: { CronJob: POD_CARRIER, Job: POD_CARRIER },
  "certificates.k8s.io": {
    CertificateSigningRequest: unjudged(
      "once approved, it yields a certificate that authenticates to the API server or a node as its signer allows",
    ),
    ClusterTrustBundle: inert("trust anchors a pod may read; it grants no access and starts nothing"),
    PodCertificateRequest: unjudged(
      "it yields a certificate bound to a pod's identity, a credential that reaches the task",
    ),
  },
  "coordination.k8s.io": { Lease: inert(CLUSTER_STATE), LeaseCandidate: inert(CLUSTER_STATE) },
  core: {
    Binding: inert(REQUEST),
    ComponentStatus: inert(CLUSTER_STATE),
    ConfigMap: {
      v: "through",
      why: "its data reaches a pod only through the pod's references (env, envFrom, volumes), judged on the pod",
      unless: controllerDefaults,
    },
    Endpoints: inert(
      "it names where a Service sends traffic inside the cluster; what may leave a pod is judged on the pod's NetworkPolicies",
    ),
    Event: inert(CLUSTER_STATE),
    LimitRange: stack(["sandbox-require-budget-bound"]),
    Namespace: {
      v: "inert",
      why: "a namespace starts nothing; every pod in it is judged by the rules",
      unless: namespaceSettings,
    },
    Node: unjudged("it registers a machine the scheduler may place pods on, outside the cluster's own nodes"),
    PersistentVolume: {
      v: "inert",
      why: "a host-path or local volume is judged with the claims that mount it (sandbox-disallow-host-path-claims)",
      unless: persistentVolumeSource,
    },
    PersistentVolumeClaim: stack(["sandbox-disallow-host-path-claims"]),
    Pod: POD_CARRIER,
    PodStatusResult: inert(REQUEST),
    PodTemplate: POD_CARRIER,
    RangeAllocation: inert(CLUSTER_STATE),
    ReplicationController: POD_CARRIER,
    ResourceQuota: stack(["sandbox-require-budget-bound"]),
    Secret: through(
      "its data reaches a pod only through the pod's references, which sandbox-disallow-secret-env judges on the pod",
    ),
    Service: read(
      "the Service reader (policy/sources/kubernetes/service.ts): its type, node ports, external IPs",
    ),
    ServiceAccount: through(
      "its token and the identity its annotations bind reach a pod only through the pod that names it, judged there",
    ),
  },
  "discovery.k8s.io": {
    EndpointSlice: inert(
      "it names where a Service sends traffic inside the cluster; what may leave a pod is judged on the pod's NetworkPolicies",
    ),
  },
  "events.k8s.io": { Event: inert(CLUSTER_STATE) },
  extensions: {
    DaemonSet: POD_CARRIER,
    Deployment: POD_CARRIER,
    Ingress: read("the entry points' reader (policy/sources/kubernetes/service.ts)"),
    NetworkPolicy: stack(["sandbox-require-proxy-only-egress"]),
    ReplicaSet: POD_CARRIER,
    Scale: inert(REQUEST),
  },
  "flowcontrol.apiserver.k8s.io": {
    FlowSchema: inert("API request fairness; it starts nothing"),
    PriorityLevelConfiguration: inert("API request fairness; it starts nothing"),
  },
  "internal.apiserver.k8s.io": { StorageVersion: inert(CLUSTER_STATE) },
  "networking.k8s.io": {
    IPAddress: inert(CLUSTER_STATE),
    Ingress: read("the entry points' reader (policy/sources/kubernetes/service.ts)"),
    IngressClass: inert(
      "it names an ingress controller; each Ingress that uses it is judged as an entry point",
    ),
    NetworkPolicy: stack(["sandbox-require-proxy-only-egress"]),
    ServiceCIDR: inert("the cluster's Service address ranges; it opens no route from outside"),
  },
  "node.k8s.io": { RuntimeClass: stack(["sandbox-disallow-weak-runtime-class"]) },
  policy: {
    Eviction: inert(REQUEST),
    PodDisruptionBudget: inert("it only slows voluntary evictions; it starts nothing"),
  },
  "rbac.authorization.k8s.io": {
    ClusterRole: { v: "inert", why: PERMISSIONS, unless: roleGrant },
    ClusterRoleBinding: { v: "inert", why: PERMISSIONS, unless: bindingGrant },
    Role: { v: "inert", why: PERMISSIONS, unless: roleGrant },
    RoleBinding: { v: "inert", why: PERMISSIONS, unless: bindingGrant },
  },
  "resource.k8s.io": {
    DeviceClass: inert(DEVICES),
    DeviceTaintRule: inert(DEVICES),
    ResourceClaim: inert(DEVICES),
    ResourceClaimTemplate: inert(DEVICES),
    ResourcePoolStatusRequest: inert(REQUEST),
    ResourceSlice: inert(DEVICES),
  },
  "scheduling.k8s.io": {
    PodGroup: inert("it groups pods for scheduling; each pod is judged on its own"),
    PriorityClass: inert("it orders pods for scheduling and preemption; it starts nothing"),
    Workload: inert("it groups pods for scheduling; each pod is judged on its own"),
  },
  "storage.k8s.io": {
    CSIDriver: inert("it describes an installed driver; each pod's volumes of it are judged on the pod"),
    CSINode: inert(CLUSTER_STATE),
    CSIStorageCapacity: inert(CLUSTER_STATE),
    StorageClass: {
      v: "inert",
      why: "it names how claims get volumes; a claim bound to a host folder is judged on the pod that mounts it",
      unless: storageClassProvisioner,
    },
    VolumeAttachment: inert(CLUSTER_STATE),
    VolumeAttributesClass: inert("it sets a volume's performance attributes; it mounts nothing"),
  },
  "storagemigration.k8s.io": { StorageVersionMigration: inert(CLUSTER_STATE) },
};
