/**
 * The verdict of every field of Knative Serving's kinds (knative.dev/serving, the version crds.generated.ts pins:
 * pkg/apis/serving/v1 Service, Configuration, Revision, Route; v1beta1 DomainMapping), keyed `<Kind>.<path under
 * spec>`, and of the annotations its controllers read. Reasons from the operator's own source. A Revision's spec is a
 * pod spec with Knative's own fields beside it (Service and Configuration hold one in `template.spec`): the revision
 * reconciler makes a Deployment of it, adding its queue-proxy container in front of the user's
 * (pkg/reconciler/revision/resources/deploy.go `makePodSpec`), and the carriers read it as the pod (carriers.ts). The
 * webhook refuses a pod field outside its mask (pkg/apis/serving/fieldmask.go `PodSpecMask`; some only behind a
 * `kubernetes.podspec-*` feature flag of config-features, which the project cannot see): what the mask holds keeps
 * its pod verdict, what it never holds is refused here. A Service, Route or DomainMapping is an entry point
 * (service.ts `isEntryPoint`).
 */
import { inert, judged, refused, type Verdict, type VerdictTable } from "../../verdict";
import { POD_SPEC_VERDICTS } from "../verdicts";

const PRIV = "sandbox-disallow-privileged";
const UNJUDGED = "sandbox-disallow-unjudged-fields";

/** The PodSpec fields Knative's webhook lets through (`PodSpecMask`), flag-gated ones included. */
const MASK = [
  "serviceAccountName",
  "containers",
  "volumes",
  "imagePullSecrets",
  "enableServiceLinks",
  "automountServiceAccountToken",
  "affinity",
  "topologySpreadConstraints",
  "hostAliases",
  "nodeSelector",
  "runtimeClassName",
  "tolerations",
  "securityContext",
  "shareProcessNamespace",
  "priorityClassName",
  "schedulerName",
  "initContainers",
  "dnsPolicy",
  "dnsConfig",
  "hostIPC",
  "hostPID",
  "hostNetwork",
];

const OUTSIDE_MASK =
  "Knative Serving's webhook refuses a Revision that sets it (pkg/apis/serving/fieldmask.go PodSpecMask: not a field of its pod spec), and the Deployment the controller makes sets its own";

/** A judged verdict whose fragments are placed by `wrap`. */
function placedBy(v: Verdict, wrap: (fragment: unknown) => object): Verdict {
  if (v.v !== "judged") return v;
  return judged(v.rules, wrap(v.hostile), {
    ...(v.control === undefined ? {} : { control: wrap(v.control) }),
    ...(v.config === undefined ? {} : { config: v.config }),
  });
}

/**
 * The verdicts of a RevisionSpec at `base` (`Revision`, `Service.template.spec`), `wrap` placing a revision spec
 * fragment in the kind's spec: the pod fields the mask holds keep the pod's verdicts (the carriers judge the pod
 * as written), the others are refused; the core values inside are walked with the pod's verdicts (fields.ts).
 */
function revisionSpec(base: string, wrap: (fragment: unknown) => object): Record<string, Verdict> {
  const out: Record<string, Verdict> = {};
  for (const [key, v] of Object.entries(POD_SPEC_VERDICTS))
    if (!/[.[{]/.test(key))
      out[`${base}.${key}`] = MASK.includes(key) ? placedBy(v, wrap) : refused(OUTSIDE_MASK);
  return {
    ...out,
    [`${base}.containerConcurrency`]: inert(
      "how many requests the queue-proxy lets into the container at once; it opens nothing",
    ),
    [`${base}.timeoutSeconds`]: inert("how long a request may take before the queue-proxy ends it"),
    [`${base}.responseStartTimeoutSeconds`]: inert(
      "how long the queue-proxy waits for a response's first byte; it opens nothing",
    ),
    [`${base}.idleTimeoutSeconds`]: inert("how long a request may stay idle; it opens nothing"),
  };
}

/** A Service's or Configuration's revision template: metadata and spec of every Revision it stamps. */
function template(kind: string): Record<string, Verdict> {
  const wrap = (fragment: unknown) => ({ template: { spec: fragment } });
  const privileged = wrap({ containers: [{ securityContext: { privileged: true } }] });
  const injected = { template: { metadata: { annotations: { "sidecar.istio.io/inject": "true" } } } };
  return {
    [`${kind}.template`]: judged([PRIV], privileged),
    [`${kind}.template.spec`]: judged([PRIV], privileged),
    [`${kind}.template.metadata`]: judged([UNJUDGED], injected),
    ...revisionSpec(`${kind}.template.spec`, wrap),
  };
}

/** A Route's or a Service's traffic targets: where the Route sends requests, never a pod. */
function traffic(kind: string): Record<string, Verdict> {
  const base = `${kind}.traffic`;
  return {
    [base]: inert(
      "which Revisions receive the Route's requests, in what share: their pods are judged where they are written, the Route's reach on the Route",
    ),
    [`${base}[].tag`]: inert(
      "another host name of the same Route for this target, with the Route's visibility (pkg/reconciler/route/visibility)",
    ),
    [`${base}[].url`]: inert(
      "written by the controller in the status; the webhook refuses it in a spec (TrafficTarget.Validate)",
    ),
  };
}

export const KNATIVE_SERVING_VERDICTS: VerdictTable = {
  ...template("Service"),
  ...traffic("Service"),
  ...template("Configuration"),
  ...revisionSpec("Revision", (fragment) => fragment as object),
  ...traffic("Route"),
  "DomainMapping.ref": inert(
    "the Knative Service or Route whose address the domain serves; the DomainMapping itself is an entry point, judged by the exposure rule",
  ),
  "DomainMapping.tls": inert(
    "the Secret holding the certificate the ingress serves for the domain; it opens nothing",
  ),
};

/** The annotation key domains Knative Serving's controllers read: a key of these without a verdict fails closed. */
export const KNATIVE_ANNOTATION_DOMAINS = [
  "serving.knative.dev/",
  "autoscaling.knative.dev/",
  "features.knative.dev/",
  "networking.knative.dev/",
  "queue.sidecar.serving.knative.dev/",
];

const SCALING =
  "how the autoscaler scales the Revision's pods (pkg/apis/autoscaling): more or fewer copies of a pod judged as written";

const is =
  (...values: string[]) =>
  (v: unknown): boolean =>
    typeof v === "string" && values.includes(v);

/** Knative keys with each of their older spellings (kmap.KeyPriority in pkg/apis/autoscaling and serving). */
const spellings = (domain: string, keys: readonly string[], verdict: Verdict): Record<string, Verdict> =>
  Object.fromEntries(keys.map((k) => [`${domain}/${k}`, verdict]));

const QUEUE_RESOURCES =
  "it sets the requests or limits of the queue-proxy container the controller adds to every pod (pkg/reconciler/revision/resources/queue.go): resources no rule reads";

/**
 * Annotations of a Knative object or of its revision template, by key: scaling and rollout settings are inert; what
 * picks another controller, sizes the queue-proxy or weakens the ingress's TLS is refused.
 */
export const KNATIVE_ANNOTATIONS: VerdictTable = {
  ...spellings(
    "autoscaling.knative.dev",
    [
      "min-scale",
      "minScale",
      "max-scale",
      "maxScale",
      "initial-scale",
      "initialScale",
      "scale-down-delay",
      "scaleDownDelay",
      "metric",
      "target",
      "scale-to-zero-pod-retention-period",
      "scaleToZeroPodRetentionPeriod",
      "metric-aggregation-algorithm",
      "metricAggregationAlgorithm",
      "window",
      "target-utilization-percentage",
      "targetUtilizationPercentage",
      "target-burst-capacity",
      "targetBurstCapacity",
      "panic-window-percentage",
      "panicWindowPercentage",
      "panic-threshold-percentage",
      "panicThresholdPercentage",
      "activation-scale",
    ],
    inert(SCALING),
  ),
  "autoscaling.knative.dev/class": refused(
    "it hands the Revision's PodAutoscaler to the autoscaler of that class; only Knative's own (kpa, hpa) are known",
    is("kpa.autoscaling.knative.dev", "hpa.autoscaling.knative.dev"),
  ),
  ...spellings(
    "serving.knative.dev",
    ["rollout-duration", "rolloutDuration", "progress-deadline"],
    inert("how fast traffic moves to a new Revision, or how long one may take to become ready"),
  ),
  ...spellings(
    "serving.knative.dev",
    ["creator", "lastModifier"],
    inert("the webhook writes the user who made or changed the object; it opens nothing"),
  ),
  ...spellings(
    "serving.knative.dev",
    ["no-gc", "lastPinned", "routes", "routingStateModified"],
    inert("bookkeeping of which Revisions are kept and routed; it opens nothing"),
  ),
  ...spellings(
    "queue.sidecar.serving.knative.dev",
    [
      "resource-percentage",
      "resourcePercentage",
      "cpu-resource-request",
      "cpu-resource-limit",
      "memory-resource-request",
      "memory-resource-limit",
      "ephemeral-storage-resource-request",
      "ephemeral-storage-resource-limit",
    ],
    refused(QUEUE_RESOURCES),
  ),
  "features.knative.dev/queueproxy-podinfo": inert(
    "the controller mounts the pod's own labels and annotations into its queue-proxy (downward API); it opens nothing",
  ),
  "features.knative.dev/http-full-duplex": inert(
    "whether the queue-proxy streams a request and its response at once; it opens nothing",
  ),
  ...spellings(
    "networking.knative.dev",
    ["ingress.class", "ingress-class"],
    refused(
      "it hands the Route to the ingress of that class instead of the cluster's default, whose handling of cluster-local visibility no rule knows",
    ),
  ),
  ...spellings(
    "networking.knative.dev",
    ["certificate.class", "certificate-class"],
    inert("which certificate provider issues the Route's certificate; it opens nothing"),
  ),
  ...spellings(
    "networking.knative.dev",
    ["disable-external-domain-tls", "disable-auto-tls", "disableAutoTLS"],
    refused("it serves the Route's external domain without TLS", is("false", "False")),
  ),
  ...spellings(
    "networking.knative.dev",
    ["http-protocol", "httpOption"],
    refused(
      "it sets whether the Route answers plain HTTP; only `redirected` (to HTTPS) passes",
      is("redirected", "Redirected"),
    ),
  ),
};
