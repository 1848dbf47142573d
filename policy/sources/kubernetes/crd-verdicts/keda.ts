/**
 * The verdict of every field of KEDA's kinds (github.com/kedacore/keda/v2, the version crds.generated.ts pins:
 * apis/keda/v1alpha1 ScaledJob, ScaledObject, TriggerAuthentication, ClusterTriggerAuthentication), keyed
 * `<Kind>.<path under spec>`. Reasons from the operator's own source: pkg/scaling/executor (scale_jobs.go creates up
 * to maxReplicaCount Jobs from `jobTargetRef`, its pod's restartPolicy OnFailure when unset; scale_scaledobjects.go
 * scales the target through its /scale subresource), controllers/keda (an HPA over the target, up to
 * maxReplicaCount), pkg/scaling/scalers_builder.go (each trigger's scaler runs inside the operator's own pod: all
 * but cpu, memory, cron and kubernetes-workload query an address or a cloud API the trigger names),
 * pkg/scaling/resolver (a TriggerAuthentication's sources, read by the operator with its own identity and handed to
 * the scalers). A ScaledJob's pod template is judged by the pod rules (carriers.ts, crd-keda.ts), priced by the
 * budget bound as maxReplicaCount Jobs of `parallelism` pods; a ScaledObject's target by the references rule and
 * the budget bound (references-keda.ts, policy/stack/autoscalers.ts).
 */
import { inert, judged, refused, type Verdict, type VerdictTable } from "../../verdict";

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Scalers that send nothing outside the cluster (scalers_builder.go `buildScaler`). */
export const KEDA_QUIET_TRIGGERS: readonly string[] = ["cpu", "memory", "cron", "kubernetes-workload"];

const TRIGGER_TYPE =
  "the scaler the KEDA operator builds for the trigger, inside its own pod and outside the sandbox's egress walls: every type but cpu and memory (the metrics API), cron (the clock) and kubernetes-workload (a count of the namespace's pods) queries an address, a database, a queue or a cloud API the trigger's metadata names, with the credentials its authentication gives; only those four pass";

const CREDENTIALS = (what: string) =>
  `the KEDA operator reads ${what} with its own identity and hands it to the scalers of the triggers that name this authentication, which send it from the operator's pod, outside the sandbox's egress walls, to the addresses the triggers choose: a credential injected where no rule reads it`;

const LIFECYCLE = "when the operator polls, waits or deletes; it opens nothing";

/** A core HPAScalingRules of the claimed shape (autoscaling/v2). */
const scalingRules = (v: unknown): boolean =>
  isObj(v) &&
  Object.entries(v).every(([k, x]) => {
    if (k === "stabilizationWindowSeconds") return x === null || typeof x === "number";
    if (k === "selectPolicy") return x === null || typeof x === "string";
    if (k === "tolerance") return x === null || typeof x === "string" || typeof x === "number";
    if (k !== "policies") return false;
    return (
      x === null ||
      (Array.isArray(x) &&
        x.every(
          (p) =>
            isObj(p) &&
            Object.entries(p).every(([pk, pv]) =>
              pk === "type"
                ? typeof pv === "string"
                : ["value", "periodSeconds"].includes(pk) && typeof pv === "number",
            ),
        ))
    );
  });

/** A core HorizontalPodAutoscalerBehavior of the claimed shape: `scaleUp` and `scaleDown` rules only. */
export const hpaBehavior = (v: unknown): boolean =>
  isObj(v) &&
  Object.entries(v).every(
    ([k, x]) => (k === "scaleUp" || k === "scaleDown") && (x === null || scalingRules(x)),
  );

/** The trigger fields of the list at `base` (`ScaledJob.triggers`). */
function triggers(base: string): Record<string, Verdict> {
  return {
    [base]: inert("the triggers the operator's scalers read; each part has its own verdict"),
    [`${base}[].type`]: refused(
      TRIGGER_TYPE,
      (v) => typeof v === "string" && KEDA_QUIET_TRIGGERS.includes(v),
    ),
    [`${base}[].name`]: inert("a name"),
    [`${base}[].metadata`]: inert(
      "the settings of the scaler the trigger's type names (its address, query, threshold): judged with the type, and only types that send nothing pass",
    ),
    [`${base}[].useCachedMetrics`]: inert("the operator reuses its last reading; it opens nothing"),
    [`${base}[].metricType`]: inert("how the HPA compares the reading (AverageValue, Value, Utilization)"),
    [`${base}[].authenticationRef`]: refused(
      CREDENTIALS(
        "the credentials of the TriggerAuthentication (or ClusterTriggerAuthentication, in the operator's own namespace) named",
      ),
    ),
  };
}

const SCALED_JOB: VerdictTable = {
  "ScaledJob.jobTargetRef": judged(["sandbox-disallow-privileged"], {
    jobTargetRef: { template: { spec: { containers: [{ securityContext: { privileged: true } }] } } },
  }),
  "ScaledJob.pollingInterval": inert(LIFECYCLE),
  "ScaledJob.successfulJobsHistoryLimit": inert("how many finished Jobs the operator keeps"),
  "ScaledJob.failedJobsHistoryLimit": inert("how many failed Jobs the operator keeps"),
  "ScaledJob.rolloutStrategy": inert(
    "whether an update deletes the running Jobs; the Jobs are the judged template",
  ),
  "ScaledJob.rollout": inert("whether an update deletes the running Jobs; the Jobs are the judged template"),
  "ScaledJob.envSourceContainerName": inert(
    "the container whose environment the scalers read `...FromEnv` metadata from: only the scalers that send nothing pass",
  ),
  "ScaledJob.minReplicaCount": inert(
    "the fewest Jobs the operator keeps running, active or not: the budget bound prices the most of it and maxReplicaCount",
  ),
  "ScaledJob.maxReplicaCount": inert(
    "the most Jobs running at once (100 when unset): the budget bound prices that many Jobs, each of its parallelism",
  ),
  "ScaledJob.scalingStrategy": inert("how many Jobs of the allowed most the operator starts for a reading"),
  ...triggers("ScaledJob.triggers"),
};

const SCALED_OBJECT: VerdictTable = {
  "ScaledObject.scaleTargetRef": inert(
    "it names the object the operator scales through its /scale subresource (a Deployment when the kind is unset): it must be an apps Deployment, StatefulSet or ReplicaSet or an Argo Rollout of the set, where its pods are judged and the budget bound prices it at the ScaledObject's most replicas; any other fails closed (sandbox-disallow-unjudged-references)",
  ),
  "ScaledObject.scaleTargetRef.envSourceContainerName": inert(
    "the container whose environment the scalers read `...FromEnv` metadata from: only the scalers that send nothing pass",
  ),
  "ScaledObject.pollingInterval": inert(LIFECYCLE),
  "ScaledObject.initialCooldownPeriod": inert(LIFECYCLE),
  "ScaledObject.cooldownPeriod": inert(LIFECYCLE),
  "ScaledObject.idleReplicaCount": inert("the replicas while no trigger is active, fewer than the least"),
  "ScaledObject.minReplicaCount": inert(
    "the least replicas; the budget bound prices the most of it and the maximum",
  ),
  "ScaledObject.maxReplicaCount": inert(
    "the HPA's maxReplicas (100 when unset): the budget bound prices the target at it, as an HPA's",
  ),
  "ScaledObject.advanced": inert("the HPA the operator makes; each part has its own verdict"),
  "ScaledObject.advanced.horizontalPodAutoscalerConfig": inert("the HPA's name and behavior"),
  "ScaledObject.advanced.horizontalPodAutoscalerConfig.name": inert("the name of the HPA the operator makes"),
  "ScaledObject.advanced.horizontalPodAutoscalerConfig.behavior": refused(
    "how fast the HPA scales up and down (a core HorizontalPodAutoscalerBehavior), never past maxReplicaCount; only the claimed shape passes (scaleUp and scaleDown: stabilizationWindowSeconds, selectPolicy, tolerance, policies of type, value and periodSeconds)",
    hpaBehavior,
  ),
  "ScaledObject.advanced.restoreToOriginalReplicaCount": inert(
    "on deletion the operator scales the target back to its own replicas, which were priced",
  ),
  "ScaledObject.advanced.scalingModifiers": inert(
    "an expression over the triggers' readings (expr-lang, computed in the operator, no input or output of its own) and its targets",
  ),
  "ScaledObject.fallback": inert(
    "the replicas the HPA asks for while the triggers fail, within maxReplicaCount; it opens nothing",
  ),
  ...triggers("ScaledObject.triggers"),
};

/** A TriggerAuthentication's (or ClusterTriggerAuthentication's) credential sources. */
function authentication(kind: string): Record<string, Verdict> {
  return {
    [`${kind}.podIdentity`]: refused(
      CREDENTIALS("tokens of the cloud identity named (the operator's own workload identity)"),
    ),
    [`${kind}.secretTargetRef`]: refused(CREDENTIALS("each Secret key named")),
    [`${kind}.configMapTargetRef`]: refused(CREDENTIALS("each ConfigMap key named")),
    [`${kind}.env`]: refused(
      CREDENTIALS("the value of each variable named in the target's container (Secrets resolved)"),
    ),
    [`${kind}.filePath`]: refused(CREDENTIALS("a file of its own pod (parameters as a JSON map)")),
    [`${kind}.hashiCorpVault`]: refused(CREDENTIALS("secrets fetched from the Vault address named")),
    [`${kind}.azureKeyVault`]: refused(CREDENTIALS("secrets fetched from the Azure Key Vault named")),
    [`${kind}.gcpSecretManager`]: refused(CREDENTIALS("secrets fetched from GCP Secret Manager")),
    [`${kind}.awsSecretManager`]: refused(CREDENTIALS("secrets fetched from AWS Secrets Manager")),
    [`${kind}.boundServiceAccountToken`]: refused(
      CREDENTIALS("a token it requests for each ServiceAccount named (TokenRequest)"),
    ),
    [`${kind}.oauth2`]: refused(
      CREDENTIALS("a token fetched from the token URL named, with the client Secret named"),
    ),
    [`${kind}.azureServicePrincipal`]: refused(
      CREDENTIALS("an Azure service principal's secret or certificate from the Secrets named"),
    ),
  };
}

export const KEDA_VERDICTS: VerdictTable = {
  ...SCALED_JOB,
  ...SCALED_OBJECT,
  ...authentication("TriggerAuthentication"),
  ...authentication("ClusterTriggerAuthentication"),
};
