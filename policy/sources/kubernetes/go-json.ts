/**
 * Kubernetes YAML and JSON text as a Go controller decodes it into k8s.io/api types: the Kubernetes YAML library
 * (sigs.k8s.io/yaml `YAMLToJSON`, YAML 1.1: `<<` merge keys, `yes`/`on` booleans; ./yaml.ts) or the text itself
 * when it opens with `{` (argo-workflows workflow/util/util.go `ConvertYAMLToJSON`), then Go's encoding/json, which
 * matches a key to a struct field without regard to case (`SecurityContext`, `PRIVILEGED`, with the Kelvin sign
 * and the long s folding to k and s: bytes.EqualFold). Keys that fold to the same field are decoded in the order
 * json.Marshal wrote them (sorted by bytes), each into what the one before left: objects and list elements merge,
 * other values are replaced.
 */
import { parseAllDocuments } from "yaml";
import { isObj } from "../lenient";
import { kubeYamlToJson } from "./yaml";
import { splitKubeStream } from "./yaml-stream";

/** Every JSON field name of k8s.io/api core/v1 types.go and the pod metadata's (k8s.io/api v0.36.3; DaemonEndpoint's status `Port` left out). */
const NAMES = `
  accessModes action active activeDeadlineSeconds add address addresses affinity allocatable
  allocateLoadBalancerNodePorts allocatedResourceStatuses allocatedResources allocatedResourcesStatus
  allowPrivilegeEscalation apiGroup apiVersion appArmorProfile appProtocol architecture args assigned
  audience automountServiceAccountToken availableReplicas awsElasticBlockStore azureDisk azureFile binaryData
  bootID cachingMode capabilities capacity cephfs certificateChainPath chapAuthDiscovery chapAuthSession
  cinder claimName claimRef claims clientIP clusterIP clusterIPs clusterTrustBundle command component
  conditionType conditions config configMap configMapKeyRef configMapRef configSource container containerID
  containerName containerPort containerRuntimeVersion containerStatuses containers controllerExpandSecretRef
  controllerPublishSecretRef count credentialBundlePath csi currentVolumeAttributesClassName daemonEndpoints
  data dataSource dataSourceRef datasetName datasetUUID declaredFeatures default defaultMode defaultRequest
  devicePath directory diskName diskURI divisor dnsConfig dnsPolicy downwardAPI driver drop effect emptyDir
  enableServiceLinks endpoints endpointsNamespace env envFrom ephemeral ephemeralContainerStatuses
  ephemeralContainers error eventTime evictionTime exec exitCode exitCodes expirationSeconds
  extendedResourceClaimStatus externalID externalIPs externalName externalTrafficPolicy failureThreshold fc
  features fieldPath fieldRef fileKeyRef finalizers finishedAt firstTimestamp flexVolume flocker follow
  fsGroup fsGroupChangePolicy fsType fullyLabeledReplicas gateway gcePersistentDisk gid gitRepo glusterfs
  gmsaCredentialSpec gmsaCredentialSpecName group grpc hard health healthCheckNodePort host hostAliases
  hostIP hostIPC hostIPs hostNetwork hostPID hostPath hostPort hostProcess hostUsers hostname
  hostnameOverride hostnames httpGet httpHeaders image imageID imagePullPolicy imagePullSecrets imageRef
  images immutable ingress initContainerStatuses initContainers initialDelaySeconds initiatorName
  insecureSkipTLSVerifyBackend internalTrafficPolicy involvedObject ip ipFamilies ipFamily ipFamilyPolicy
  ipMode iqn iscsi iscsiInterface items kernelVersion key keyPath keyType keyring kind kubeProxyVersion
  kubeletConfigKey kubeletEndpoint kubeletVersion labelSelector lastHeartbeatTime lastKnownGood
  lastObservedTime lastPhaseTransitionTime lastProbeTime lastState lastTimestamp lastTransitionTime level
  lifecycle limitBytes limits linux livenessProbe loadBalancer loadBalancerClass loadBalancerIP
  loadBalancerSourceRanges local localhostProfile lun machineID matchExpressions matchFields
  matchLabelExpressions matchLabelKeys max maxExpirationSeconds maxLimitRequestRatio maxSkew medium message
  metadata min minDomains minReadySeconds mismatchLabelKeys mode modifyVolumeStatus monitors mountOptions
  mountPath mountPropagation name names nameservers namespace namespaceSelector namespaces nfs nodeAffinity
  nodeAffinityPolicy nodeAllocatableResourceClaimStatuses nodeExpandSecretRef nodeInfo nodeName nodePort
  nodePublishSecretRef nodeSelector nodeSelectorTerms nodeStageSecretRef nodeTaintsPolicy nominatedNodeName
  notReadyAddresses observedGeneration operatingSystem operator optional options os osImage overhead
  partition path pdID pdName periodSeconds persistentVolumeClaim persistentVolumeReclaimPolicy phase
  photonPersistentDisk podAffinity podAffinityTerm podAntiAffinity podCIDR podCIDRs podCertificate
  podController podGroupName podIP podIPs podSignature pool port portals ports portworxVolume postStart
  preStop preemptionPolicy preferAvoidPods preference preferredDuringSchedulingIgnoredDuringExecution prefix
  previous priority priorityClassName privileged procMount projected protectionDomain protocol providerID
  publishNotReadyAddresses pullPolicy qosClass quobyte range rbd readOnly readOnlyRootFilesystem
  readinessGates readinessProbe ready readyReplicas reason recursiveReadOnly recursiveReadOnlyMounts
  reference registry related replicas reportingComponent reportingInstance repository request requestMappings
  requestName requests required requiredDuringSchedulingIgnoredDuringExecution
  requiredDuringSchedulingRequiredDuringExecution resize resizePolicy resizeStatus resource resourceClaimName
  resourceClaimStatuses resourceClaimTemplateName resourceClaims resourceFieldRef resourceID resourceName
  resourceVersion resources restartCount restartPolicy restartPolicyRules revision role runAsGroup
  runAsNonRoot runAsUser runAsUserName running runtimeClassName runtimeHandlers scaleIO schedulerName
  schedulingGates schedulingGroup scheme scopeName scopeSelector scopes seLinuxChangePolicy seLinuxOptions
  searches seccompProfile seconds secret secretFile secretKeyRef secretName secretNamespace secretRef secrets
  securityContext selector series server service serviceAccount serviceAccountName serviceAccountToken
  sessionAffinity sessionAffinityConfig setHostnameAsFQDN shareName shareProcessNamespace signal signerName
  sinceSeconds sinceTime sizeBytes sizeLimit sleep source sources spec sslEnabled startTime started startedAt
  startupProbe state status stderr stdin stdinOnce stdout stopSignal storageClassName storageMode
  storagePolicyID storagePolicyName storagePool storageos stream stringData subPath subPathExpr subdomain
  subsets successThreshold supplementalGroups supplementalGroupsPolicy swap sysctls system systemUUID
  tailLines taints target targetContainerName targetPort targetPortal targetRef
  targetVolumeAttributesClassName targetWWNs tcpSocket template templateRef tenant terminated
  terminationGracePeriodSeconds terminationMessagePath terminationMessagePolicy timeAdded timeoutSeconds
  timestamps tolerationSeconds tolerations topologyKey topologyKeys topologySpreadConstraints
  trafficDistribution tty type uid unschedulable used user userAnnotations userNamespaces value valueFrom
  values volume volumeAttributes volumeAttributesClassName volumeClaimTemplate volumeDevices volumeHandle
  volumeID volumeMode volumeMounts volumeName volumeNamespace volumePath volumeStatus volumes volumesAttached
  volumesInUse vsphereVolume waiting weight whenUnsatisfiable windowsOptions workingDir workloadRef wwids
`
  .trim()
  .split(/\s+/)
  .concat(["labels", "annotations", "generateName", "finalizers", "ownerReferences"]); // metav1.ObjectMeta

/**
 * encoding/json's fold of a key (fold.go foldName, what bytes.EqualFold compares): an ASCII letter upper-cased; any
 * other character the smallest of those it is equal to under Unicode's simple case folding, one character for one
 * (the Kelvin sign is K, the long s is S, the dotless i is I; a ligature such as U+FB06 folds to no "ST", as it
 * would under full case mapping).
 */
export function goFold(s: string): string {
  let out = "";
  for (const ch of s) {
    const c = ch.codePointAt(0) ?? 0;
    out += c < 0x80 ? ch.toUpperCase() : String.fromCodePoint(foldRune(c));
  }
  return out;
}

const FOLDED = new Map<number, number>();

/** The smallest character reachable from `c` by one-character upper- and lower-case mappings. */
function foldRune(c: number): number {
  const known = FOLDED.get(c);
  if (known !== undefined) return known;
  const seen = new Set([c]);
  const queue = [c];
  for (let x = queue.pop(); x !== undefined; x = queue.pop())
    for (const y of [String.fromCodePoint(x).toUpperCase(), String.fromCodePoint(x).toLowerCase()]) {
      const cps = [...y];
      const cp = cps.length === 1 ? (cps[0]?.codePointAt(0) ?? x) : x;
      if (!seen.has(cp)) {
        seen.add(cp);
        queue.push(cp);
      }
    }
  const min = Math.min(...seen);
  FOLDED.set(c, min);
  return min;
}

const BY_FOLD = new Map(NAMES.map((n) => [goFold(n), n]));

/** Fields whose values are maps with the user's own keys (labels, quantities): their keys are taken as written. */
const MAP_FIELDS = new Set([
  "labels",
  "annotations",
  "nodeSelector",
  "limits",
  "requests",
  "overhead",
  "volumeAttributes",
  "options",
  "matchLabels",
]);

/**
 * Go's decoding of `next` into what an earlier key with the same field left (`prev`). A null leaves a value field (a
 * bool, a string, a struct) as it was and empties a pointer, map or slice: it is read as leaving it, the stricter.
 */
function decodeInto(prev: unknown, next: unknown): unknown {
  if (prev === undefined) return next;
  if (next === null) return prev;
  if (Array.isArray(prev) && Array.isArray(next))
    return next.map((x, i) => (i < prev.length ? decodeInto(prev[i], x) : x));
  if (isObj(prev) && isObj(next)) {
    const out: Record<string, unknown> = { ...prev };
    for (const [k, v] of Object.entries(next)) out[k] = k in prev ? decodeInto(prev[k], v) : v;
    return out;
  }
  return next;
}

const byBytes = (a: string, b: string): number => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return Buffer.compare(x, y);
};

/** A value as encoding/json decodes it into the Kubernetes types: every key that names a field in any case is that field. */
export function goDecode(v: unknown, userMap = false): unknown {
  if (Array.isArray(v)) return v.map((x) => goDecode(x));
  if (!isObj(v) || userMap) return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).sort(byBytes)) {
    const name = BY_FOLD.get(goFold(k)) ?? k;
    const value = goDecode(v[k], MAP_FIELDS.has(name));
    out[name] = Object.hasOwn(out, name) ? decodeInto(out[name], value) : value;
  }
  return out;
}

/** The value of a YAML or JSON text as `ConvertYAMLToJSON` and JSON parsing give it; throws what does not parse. */
export function controllerText(text: string): unknown {
  if (/^\s*\{/.test(text)) return JSON.parse(text);
  return kubeYamlDocuments(text)[0] ?? null;
}

/** Every document of a YAML stream, each as the Kubernetes YAML library reads it (kubectl's cut of the stream). */
export function kubeYamlDocuments(text: string): unknown[] {
  const split = splitKubeStream(text);
  if (split.error !== undefined) throw new Error(split.error.message);
  const out: unknown[] = [];
  for (const piece of split.pieces) {
    const docs = parseAllDocuments(piece.text, { uniqueKeys: false, merge: false });
    const doc = (Array.isArray(docs) ? docs : [docs])[0];
    if (doc === undefined) continue;
    if (doc.errors.length > 0) throw new Error(doc.errors[0]?.message.split("\n")[0] ?? "not valid YAML");
    const value = kubeYamlToJson(doc, piece.text);
    if (value !== null && value !== undefined) out.push(value);
  }
  return out;
}
