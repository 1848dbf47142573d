/**
 * The verdict of every field of KubeRay's kinds (github.com/ray-project/kuberay/ray-operator, the version
 * crds.generated.ts pins: apis/ray/v1 and v1alpha1 RayCluster, RayJob, RayService; one table for both versions),
 * keyed `<Kind>.<path under spec>`. Reasons from the operator's own source (controllers/ray/common/pod.go,
 * service.go; rayjob_controller.go, rayservice_controller.go; controllers/ray/utils). Pod templates are judged by
 * the pod rules (carriers.ts), the autoscaler's options by the rules that judge the container crd-ray.ts adds, the
 * head's Service and Ingress switches by sandbox-disallow-exposed-ports (operator-exposure.ts). A judged field's
 * `hostile` is a `spec` fragment laid over a hardened object of the kind;
 * test/policy/sources/kubernetes/crd-verdicts.test.ts proves one of its rules refuses it.
 */
import { inert, judged, refused, refusedEntries, type Verdict, type VerdictTable } from "../../verdict";
import { serviceExports } from "../tunnel-exposure";

const PRIV = "sandbox-disallow-privileged";
const EXPOSED = "sandbox-disallow-exposed-ports";
const NETADMIN = "sandbox-require-drop-net-admin";
const SECRET = "sandbox-disallow-secret-env";
const LIMITS = "sandbox-require-resource-limits";
const DEVICES = "sandbox-disallow-devices";
const SENSITIVE = "sandbox-disallow-sensitive-host-mounts";
const SOCKET = "sandbox-disallow-runtime-socket";
const JOBMOUNT = "sandbox-require-single-job-mount";

/** The securityContext a hardened autoscaler container needs (it has none of its own). */
const HARDENED = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  runAsUser: 1000,
  runAsGroup: 1000,
  capabilities: { drop: ["ALL"] },
  seccompProfile: { type: "RuntimeDefault" },
};

/**
 * `ray start` flags that size or place the node, or name its ports inside the pod: the operator writes each entry
 * of `rayStartParams` as a flag in the Ray container's command (pod.go `convertParamMap`), unescaped; crd-ray.ts puts them on its command line for the credential checks.
 */
const RAY_START_FLAGS = new Set([
  "num-cpus",
  "num-gpus",
  "memory",
  "object-store-memory",
  "resources",
  "labels",
  "block",
  "port",
  "dashboard-host",
  "dashboard-port",
  "include-dashboard",
  "dashboard-agent-listen-port",
  "dashboard-agent-grpc-port",
  "metrics-export-port",
  "node-manager-port",
  "object-manager-port",
  "min-worker-port",
  "max-worker-port",
  "disable-usage-stats",
]);

/**
 * A value bash reads as one word of the flag, expanding nothing: the operator writes it unescaped (` --key=value `)
 * into the container's `bash -c` script, where whitespace, quotes, `;`, `$`, backticks, `|`, `&`, newlines, globs
 * or braces would add words, flags or commands. Plain text, or one quoted string with no expansion in it (the form
 * KubeRay documents for `resources` and `labels` JSON); not starting with `-`.
 */
const ONE_WORD = /^(?:[A-Za-z0-9_.,:=+/@%][A-Za-z0-9_.,:=+/@%-]*|'[^'\n]*'|"(?:[^"\\$`!\n]|\\")*")?$/;

const rayStartFlag = (k: string, x: unknown): boolean =>
  RAY_START_FLAGS.has(k) && typeof x === "string" && ONE_WORD.test(x);

const RAY_START = `the operator writes each entry unescaped as a \`ray start\` flag (\` --key=value \`) into the Ray container's shell command, where only the credential checks read it; only ${[...RAY_START_FLAGS].join(", ")} pass, each with a value that is one plain word (letters, digits, and . , : = + / @ % _ -, not starting with -) or one quoted string with no $, backtick, ! or newline in it`;

/** Why annotations the operator puts on a Service it creates are refused. */
const SERVICE_ANNOTATIONS = (whose: string): string =>
  `the operator puts these annotations on the ${whose} Service: some export it (a cloud load balancer's, Cilium's service.cilium.io/global, a tunnel operator's), and no rule reads them there`;

/** Why labels the operator keeps on a Service it creates are refused when they export it. */
const SERVICE_LABELS = (whose: string): string =>
  `the operator keeps these labels on the ${whose} Service, where a mesh's export label (Linkerd multicluster's mirror.linkerd.io/exported) opens it to other clusters; other labels pass`;

/** Labels that export no Service (read as a core Service's are, tunnel-exposure.ts). */
const exportsNothing = (labels: unknown): boolean =>
  serviceExports("kubernetes:core/v1:Service", { metadata: { labels } }, "").length === 0;

/** The verdicts of a RayClusterSpec at `base` (`RayCluster`, `RayJob.rayClusterSpec`), `wrap` placing a fragment. */
function cluster(base: string, wrap: (spec: object) => object): Record<string, Verdict> {
  const auto = (options: object) =>
    wrap({ enableInTreeAutoscaling: true, autoscalerOptions: { securityContext: HARDENED, ...options } });
  const autoscaler = (rules: readonly string[], options: object): Verdict =>
    judged(rules, auto(options), { control: auto({}) });
  const head = (h: object) => wrap({ headGroupSpec: h });
  const hostJob = head({
    template: {
      spec: {
        volumes: [{ name: "job", emptyDir: null, hostPath: { path: "/srv/jobs" } }],
        containers: [{ volumeMounts: [{ name: "job", mountPath: "/job", readOnly: true }] }],
      },
    },
  });
  const privileged = { spec: { containers: [{ securityContext: { privileged: true } }] } };
  const nested: Record<string, Verdict> = base.includes(".")
    ? { [base]: judged([PRIV], head({ template: privileged })) }
    : {};
  return {
    ...nested,
    [`${base}.suspend`]: inert("the operator deletes the cluster's pods while it is true"),
    [`${base}.managedBy`]: inert(
      "which controller reconciles the object (KubeRay or Kueue's MultiKueue); the pods are the same spec",
    ),
    [`${base}.enableInTreeAutoscaling`]: judged([NETADMIN], wrap({ enableInTreeAutoscaling: true })),
    [`${base}.autoscalerOptions`]: autoscaler([PRIV], { securityContext: { privileged: true } }),
    [`${base}.autoscalerOptions.securityContext`]: autoscaler([PRIV], {
      securityContext: { privileged: true },
    }),
    [`${base}.autoscalerOptions.resources`]: autoscaler([LIMITS, DEVICES], {
      resources: { limits: { "nvidia.com/gpu": "1" } },
    }),
    [`${base}.autoscalerOptions.env`]: autoscaler([SECRET], {
      env: [{ name: "X", valueFrom: { secretKeyRef: { name: "s", key: "k" } } }],
    }),
    [`${base}.autoscalerOptions.envFrom`]: autoscaler([SECRET], {
      envFrom: [{ secretRef: { name: "creds" } }],
    }),
    // The autoscaler mounts a volume of the head pod: a host folder there, mounted read-only by the Ray container,
    // is mounted by the autoscaler as it says.
    [`${base}.autoscalerOptions.volumeMounts`]: judged(
      [SENSITIVE, SOCKET, JOBMOUNT],
      over(
        auto({ volumeMounts: [{ name: "job", mountPath: "/job", mountPropagation: "Bidirectional" }] }),
        hostJob,
      ),
      {
        control: over(auto({ volumeMounts: [{ name: "job", mountPath: "/job", readOnly: true }] }), hostJob),
      },
    ),
    [`${base}.autoscalerOptions.image`]: inert(
      "the autoscaler's image; its user is judged through the container's runAsUser/runAsNonRoot",
    ),
    [`${base}.autoscalerOptions.imagePullPolicy`]: inert(
      "when the node pulls the image; it runs the same image",
    ),
    [`${base}.autoscalerOptions.idleTimeoutSeconds`]: inert(
      "how long an idle worker lives before scale-down",
    ),
    [`${base}.autoscalerOptions.upscalingMode`]: inert(
      "how fast the autoscaler adds workers of the judged template",
    ),
    [`${base}.autoscalerOptions.version`]: inert(
      "v2 sets the pods' restartPolicy Never and two variables of the operator's own; it adds no privilege",
    ),
    [`${base}.headServiceAnnotations`]: refused(SERVICE_ANNOTATIONS("head's")),
    // service.go `BuildServiceForHeadPod` keeps a custom head Service's own annotations.
    [`${base}.headGroupSpec.headService.metadata.annotations`]: refused(SERVICE_ANNOTATIONS("head's")),
    // It keeps their labels too (the operator's own win).
    [`${base}.headGroupSpec.headService.metadata.labels`]: refused(SERVICE_LABELS("head's"), exportsNothing),
    [`${base}.gcsFaultToleranceOptions`]: refused(
      "the operator adds the Redis address and credentials to the head's environment and a Redis cleanup Job; the head connects out to that address, and no rule reads any of it",
    ),
    [`${base}.headGroupSpec`]: judged([PRIV], head({ template: privileged })),
    [`${base}.headGroupSpec.template`]: judged([PRIV], head({ template: privileged })),
    [`${base}.headGroupSpec.headService`]: judged(
      [EXPOSED],
      head({ headService: { spec: { type: "NodePort" } } }),
    ),
    [`${base}.headGroupSpec.enableIngress`]: judged([EXPOSED], head({ enableIngress: true })),
    [`${base}.headGroupSpec.serviceType`]: judged([EXPOSED], head({ serviceType: "LoadBalancer" })),
    [`${base}.headGroupSpec.resources`]: inert(
      "Ray's logical resources for its own scheduler (`ray start --resources`); the pod's limits are the container's",
    ),
    [`${base}.headGroupSpec.labels`]: refused(
      "the operator adds these labels to the head pod: a mesh injector's label adds containers, a label changes which NetworkPolicies select the pod",
    ),
    [`${base}.headGroupSpec.rayStartParams`]: refusedEntries(RAY_START, rayStartFlag),
    [`${base}.rayVersion`]: inert(
      "the Ray version the operator's feature checks go by; the image is the container's",
    ),
    [`${base}.workerGroupSpecs`]: judged([PRIV], wrap({ workerGroupSpecs: [{ template: privileged }] })),
    [`${base}.workerGroupSpecs[].template`]: judged(
      [PRIV],
      wrap({ workerGroupSpecs: [{ template: privileged }] }),
    ),
    [`${base}.workerGroupSpecs[].suspend`]: inert("the operator deletes the group's pods while it is true"),
    [`${base}.workerGroupSpecs[].groupName`]: inert("a name"),
    [`${base}.workerGroupSpecs[].replicas`]: inert(
      "how many workers of the judged template run (read as the pod's replicas)",
    ),
    [`${base}.workerGroupSpecs[].minReplicas`]: inert(
      "the autoscaler's floor: copies of the judged template",
    ),
    [`${base}.workerGroupSpecs[].maxReplicas`]: inert(
      "the autoscaler's ceiling: copies of the judged template",
    ),
    [`${base}.workerGroupSpecs[].idleTimeoutSeconds`]: inert(
      "how long an idle worker lives before scale-down",
    ),
    [`${base}.workerGroupSpecs[].scaleStrategy`]: inert("which workers the autoscaler deletes"),
    [`${base}.workerGroupSpecs[].numOfHosts`]: refused(
      "each replica runs this many pods (a multi-host group): more copies than the replicas read",
      (v) => v === 1,
    ),
    [`${base}.workerGroupSpecs[].resources`]: inert(
      "Ray's logical resources for its own scheduler (`ray start --resources`); the pod's limits are the container's",
    ),
    [`${base}.workerGroupSpecs[].labels`]: refused(
      "the operator adds these labels to the group's pods: a mesh injector's label adds containers, a label changes which NetworkPolicies select the pod",
    ),
    [`${base}.workerGroupSpecs[].rayStartParams`]: refusedEntries(RAY_START, rayStartFlag),
  };
}

/** `b` laid over `a`: objects merged key by key, anything else replaced (fragments have no lists to merge here). */
function over(a: object, b: object): object {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const x = out[k];
    out[k] =
      typeof x === "object" &&
      x !== null &&
      !Array.isArray(x) &&
      typeof v === "object" &&
      v !== null &&
      !Array.isArray(v)
        ? over(x, v)
        : v;
  }
  return out;
}

const RUNTIME_ENV =
  "a Ray runtime environment adds environment variables, packages, a working directory fetched from a URL, or a container image to the job's processes, and no rule reads it";

const LIFECYCLE = "when the operator stops, retries or deletes the job and its cluster; it opens nothing";

export const KUBERAY_VERDICTS: VerdictTable = {
  ...cluster("RayCluster", (s) => s),

  ...cluster("RayJob.rayClusterSpec", (s) => ({ rayClusterSpec: s })),
  "RayJob.submitterPodTemplate": judged([PRIV], {
    submitterPodTemplate: { spec: { containers: [{ securityContext: { privileged: true } }] } },
  }),
  "RayJob.entrypoint": inert(
    "the job's command, which Ray runs as a driver process in the cluster's judged pods, under their walls",
  ),
  "RayJob.runtimeEnvYAML": refused(RUNTIME_ENV),
  "RayJob.submissionMode": refused(
    "SidecarMode: the operator adds a submitter container to the head pod, which no rule reads",
    (v) => typeof v === "string" && ["K8sJobMode", "HTTPMode", "InteractiveMode"].includes(v),
  ),
  "RayJob.clusterSelector": inert("it names a running RayCluster to submit to, judged as its own object"),
  "RayJob.metadata": inert("the job's metadata as Ray's job API records it; no pod reads it"),
  "RayJob.jobId": inert("a name"),
  "RayJob.entrypointResources": inert("Ray's logical resources for the driver; the pods' limits are judged"),
  "RayJob.entrypointNumCpus": inert("Ray's logical resources for the driver; the pods' limits are judged"),
  "RayJob.entrypointNumGpus": inert("Ray's logical resources for the driver; the pods' limits are judged"),
  "RayJob.managedBy": inert("which controller reconciles the object (KubeRay or Kueue's MultiKueue)"),
  "RayJob.activeDeadlineSeconds": inert(LIFECYCLE),
  "RayJob.backoffLimit": inert(LIFECYCLE),
  "RayJob.submitterConfig": inert(LIFECYCLE),
  "RayJob.deletionStrategy": inert(LIFECYCLE),
  "RayJob.ttlSecondsAfterFinished": inert(LIFECYCLE),
  "RayJob.shutdownAfterJobFinishes": inert(LIFECYCLE),
  "RayJob.suspend": inert(LIFECYCLE),

  ...cluster("RayService.rayClusterConfig", (s) => ({ rayClusterConfig: s })),
  "RayService.serveService": judged([EXPOSED], { serveService: { spec: { type: "LoadBalancer" } } }),
  // service.go `BuildServeService` keeps a custom Serve Service's own annotations.
  "RayService.serveService.metadata.annotations": refused(SERVICE_ANNOTATIONS("Serve")),
  "RayService.serveService.metadata.labels": refused(SERVICE_LABELS("Serve"), exportsNothing),
  "RayService.serveConfigV2": refused(
    `the Serve applications the operator deploys to the cluster; ${RUNTIME_ENV.replace("a Ray runtime environment", "a `runtime_env` in them")}`,
    (v) => typeof v === "string" && !/runtime_env/.test(v),
  ),
  "RayService.upgradeStrategy": inert("how the operator replaces the cluster on a change"),
  "RayService.upgradeStrategy.type": refused(
    "NewClusterWithIncrementalUpgrade: the operator creates a Gateway and HTTPRoutes for the Serve traffic, which no rule reads",
    (v) => v === "NewCluster" || v === "None",
  ),
  "RayService.upgradeStrategy.clusterUpgradeOptions": inert(
    "how fast the operator moves traffic to a new cluster",
  ),
  "RayService.upgradeStrategy.clusterUpgradeOptions.gatewayClassName": refused(
    "the operator creates a Gateway of this class for the Serve traffic, a route no rule reads",
  ),
  "RayService.rayClusterDeletionDelaySeconds": inert(
    "when the operator deletes an old cluster; it opens nothing",
  ),
  "RayService.serviceUnhealthySecondThreshold": inert("when the operator replaces an unhealthy cluster"),
  "RayService.deploymentUnhealthySecondThreshold": inert("when the operator replaces an unhealthy cluster"),
  "RayService.excludeHeadPodFromServeSvc": inert(
    "whether the head pod is behind the Serve Service; it opens nothing",
  ),
};

/**
 * Annotations of the object itself the operator acts on, by key: `ray.io/ft-enabled: "true"` turns GCS fault
 * tolerance on as `gcsFaultToleranceOptions` does (controllers/ray/utils `IsGCSFaultToleranceEnabled`).
 */
export const KUBERAY_ANNOTATIONS: VerdictTable = {
  "ray.io/ft-enabled": refused(
    "the operator turns GCS fault tolerance on: the head connects out to an external Redis whose address and credentials no rule reads",
    (v) => typeof v === "string" && v.toLowerCase() !== "true",
  ),
};
