/**
 * The verdict of every field of Argo Rollouts' kinds (github.com/argoproj/argo-rollouts, the version
 * crds.generated.ts pins: pkg/apis/rollouts/v1alpha1 Rollout, Experiment, AnalysisTemplate, ClusterAnalysisTemplate,
 * AnalysisRun), keyed `<Kind>.<path under spec>`. Reasons from the controller's own source: rollout/ (sync.go makes
 * the ReplicaSets from the template, templateref.go resolves `workloadRef`, ephemeralmetadata.go writes canary and
 * stable metadata on ReplicaSets and running pods, service.go switches Services' selectors, trafficrouting/ edits
 * the traffic routers' objects, experiment.go builds an Experiment from a step, stepplugin.go runs step plugins),
 * experiments/ (one ReplicaSet per template, service.go a ClusterIP Service per template that asks for one),
 * analysis/ and metricproviders/ (a job metric creates a Job from its spec; every other provider is a request the
 * controller makes itself), utils/analysis (args from Secrets substituted into the metrics' JSON). Pod templates are
 * judged by the pod rules (carriers.ts, crd-rollouts.ts); references to other objects of the set (the workload, the
 * analysis templates, the Services) by the references rule (references-rollouts.ts). A judged field's `hostile` is
 * a `spec` fragment laid over a hardened object of the kind; test/policy/sources/kubernetes/crd-verdicts.test.ts
 * proves one of its rules refuses it.
 */
import { secretValueReason } from "../../../../components/model";
import { inert, judged, refused, type Verdict, type VerdictTable } from "../../verdict";

const PRIV = "sandbox-disallow-privileged";

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const strings = (v: unknown): boolean =>
  isObj(v) && Object.entries(v).every(([k, x]) => k !== "" && typeof x === "string");

/** A label selector of the claimed shape: `matchLabels` (strings) and `matchExpressions` (key, operator, values). */
export function labelSelector(v: unknown): boolean {
  if (!isObj(v)) return false;
  return Object.entries(v).every(([k, x]) => {
    if (k === "matchLabels") return x === null || strings(x);
    if (k !== "matchExpressions") return false;
    if (x === null) return true;
    return (
      Array.isArray(x) &&
      x.every(
        (e) =>
          isObj(e) &&
          Object.entries(e).every(([ek, ev]) =>
            ek === "values"
              ? ev === null || (Array.isArray(ev) && ev.every((s) => typeof s === "string"))
              : (ek === "key" || ek === "operator") && typeof ev === "string",
          ),
      )
    );
  });
}

const SELECTOR =
  "the pods the controller counts as its ReplicaSet's own (a core LabelSelector); only matchLabels and matchExpressions of the claimed shape pass";

const atMostOne = (v: unknown): boolean => v === 1;

const POD_METADATA = (where: string) =>
  `the controller writes these labels and annotations on ${where}, outside the template the rules judged: a mesh injector's label or annotation adds containers, an AppArmor, seccomp or webhook annotation changes the pod, a label changes which NetworkPolicies select it`;

const SECRET_ARG =
  "the controller reads this Secret and substitutes its value for {{args.<name>}} in the metrics (queries, URLs, headers, the job's pod spec): a credential sent where no rule reads it";

const REQUEST = (provider: string) =>
  `the controller itself sends the query to ${provider}, from its own pod and outside the sandbox's egress walls, to an address the object chooses, with the headers, credentials and arguments (Secrets among them) the object gives, and keeps what answers in the run's status`;

/** An argument's text, which the controller substitutes into the metrics (the job's pod among them). */
const ARG_VALUE = refused(
  "the controller substitutes this text for {{args.<name>}} in the metrics, the job's pod among them, where the credential checks do not see it: a value that looks like a credential fails",
  (v) => typeof v === "string" && secretValueReason(v) === undefined,
);

const LIFECYCLE = "when the controller starts, stops, retries or deletes; it opens nothing";
const ANALYSIS_RUN_METADATA =
  "labels and annotations on the AnalysisRun object the controller creates; no pod takes them";
const REFERENCE =
  "it names an AnalysisTemplate (a ClusterAnalysisTemplate with clusterScope), judged as its own object with the set: one the set does not hold fails closed (sandbox-disallow-unjudged-references)";
const SERVICE_REF =
  "it names a Service whose selector the controller narrows to the rollout's pods (the rollouts-pod-template-hash label): the Service is judged with the set, and one the set does not hold fails closed (sandbox-disallow-unjudged-references)";

/** Metric fields at `base` (`AnalysisTemplate.metrics[]`), `wrap` placing a metric in a `spec` fragment. */
function metrics(base: string, wrap: (metric: object) => object): Record<string, Verdict> {
  const job = (spec: object) => wrap({ name: "m", provider: { job: { spec } } });
  const privileged = job({ template: { spec: { containers: [{ securityContext: { privileged: true } }] } } });
  const measurement = inert(
    "how often and how many times the controller measures, and what result passes; it opens nothing",
  );
  return {
    [`${base}.name`]: inert("a name"),
    [`${base}.interval`]: measurement,
    [`${base}.initialDelay`]: measurement,
    [`${base}.count`]: measurement,
    [`${base}.successCondition`]: inert(
      "an expression the controller evaluates over the measured result (expr-lang, no input or output of its own)",
    ),
    [`${base}.failureCondition`]: inert(
      "an expression the controller evaluates over the measured result (expr-lang, no input or output of its own)",
    ),
    [`${base}.failureLimit`]: measurement,
    [`${base}.inconclusiveLimit`]: measurement,
    [`${base}.consecutiveErrorLimit`]: measurement,
    [`${base}.consecutiveSuccessLimit`]: measurement,
    [`${base}.provider`]: inert(
      "the metric's provider; each provider has its own verdict, and one outside the pinned schema fails closed",
    ),
    [`${base}.provider.job`]: judged([PRIV], privileged),
    [`${base}.provider.job.spec`]: judged([PRIV], privileged),
    [`${base}.provider.job.metadata`]: refused(
      "the Job's own metadata; only `labels` pass (the controller writes annotations on the Job, which admission webhooks and queueing controllers act on, and sets its name itself)",
      (v) => isObj(v) && Object.entries(v).every(([k, x]) => k === "labels" && (x === null || strings(x))),
    ),
    [`${base}.provider.prometheus`]: refused(REQUEST("a Prometheus")),
    [`${base}.provider.kayenta`]: refused(REQUEST("a Kayenta")),
    [`${base}.provider.web`]: refused(REQUEST("any URL (a web metric)")),
    [`${base}.provider.datadog`]: refused(
      `${REQUEST("Datadog")}; it reads the Datadog keys from a Secret (secretRef)`,
    ),
    [`${base}.provider.wavefront`]: refused(REQUEST("Wavefront")),
    [`${base}.provider.newRelic`]: refused(REQUEST("New Relic")),
    [`${base}.provider.cloudWatch`]: refused(
      REQUEST("AWS CloudWatch, with the controller's own AWS identity"),
    ),
    [`${base}.provider.graphite`]: refused(REQUEST("a Graphite")),
    [`${base}.provider.influxdb`]: refused(REQUEST("an InfluxDB")),
    [`${base}.provider.skywalking`]: refused(REQUEST("a SkyWalking")),
    [`${base}.provider.plugin`]: refused(
      "a metric plugin: a binary the controller's configuration installs runs this configuration, and no rule reads what it does",
    ),
  };
}

/** The analysis fields a template or run declares at `kind` (args, dry runs, retention). */
function analysisSpec(kind: string): Record<string, Verdict> {
  return {
    [`${kind}.args`]: inert("the arguments substituted into the metrics; each source has its own verdict"),
    [`${kind}.args[].name`]: inert("a name"),
    [`${kind}.args[].value`]: ARG_VALUE,
    [`${kind}.args[].valueFrom`]: inert("where an argument's value comes from"),
    [`${kind}.args[].valueFrom.secretKeyRef`]: refused(SECRET_ARG),
    [`${kind}.args[].valueFrom.fieldRef`]: inert(
      "a field of the rollout itself (its labels, annotations, name), read by the controller",
    ),
    [`${kind}.dryRun`]: inert("metrics whose failures do not fail the run"),
    [`${kind}.measurementRetention`]: inert("how many measurements the run's status keeps"),
  };
}

/** A Rollout's (or a step's) analysis at `base`: the templates it names and its arguments. */
function rolloutAnalysis(base: string): Record<string, Verdict> {
  return {
    [base]: inert("it starts AnalysisRuns of the templates it names; each part has its own verdict"),
    [`${base}.templates`]: inert(REFERENCE),
    [`${base}.args`]: inert(
      "arguments from text, the rollout's own fields or a pod template hash; no Secret (a template's own Secret arguments are judged there)",
    ),
    [`${base}.args[].value`]: ARG_VALUE,
    [`${base}.dryRun`]: inert("metrics whose failures do not fail the run"),
    [`${base}.analysisRunMetadata`]: inert(ANALYSIS_RUN_METADATA),
  };
}

const CANARY = "Rollout.strategy.canary";
const BLUE_GREEN = "Rollout.strategy.blueGreen";
const STEPS = `${CANARY}.steps[]`;
const EXPERIMENT_STEP = `${STEPS}.experiment`;

const ROUTES =
  "the controller writes routes into the traffic router's objects (Ingresses it creates or edits, Istio VirtualServices and DestinationRules, SMI TrafficSplits, Gateway API routes, App Mesh, Traefik, Ambassador, APISIX, ALB annotations, plugins): routes and annotations no rule judged";

const ROLLOUT: VerdictTable = {
  "Rollout.replicas": inert("how many copies of the judged template run (read as the pod's replicas)"),
  "Rollout.selector": refused(SELECTOR, labelSelector),
  "Rollout.template": judged([PRIV], {
    template: { spec: { containers: [{ securityContext: { privileged: true } }] } },
  }),
  "Rollout.workloadRef": inert(
    "it names the Deployment, ReplicaSet or PodTemplate whose pod template the controller copies (templateref.go): the rollout is judged with that template where the set holds it, and fails closed where it does not (sandbox-disallow-unjudged-references)",
  ),
  "Rollout.workloadRef.scaleDown": inert(
    "when the controller scales the named Deployment down (progressively: back up to at most the rollout's replicas while the rollout is not healthy, rollout/replicaset.go); copies of the same judged template",
  ),
  "Rollout.minReadySeconds": inert(LIFECYCLE),
  "Rollout.rollbackWindow": inert(
    "how many past revisions a change back to one of them skips the steps for; the template that runs is the one written",
  ),
  "Rollout.strategy": inert("how the controller replaces pods; each part has its own verdict"),
  "Rollout.revisionHistoryLimit": inert("how many old ReplicaSets the controller keeps, scaled to zero"),
  "Rollout.paused": inert(LIFECYCLE),
  "Rollout.progressDeadlineSeconds": inert(LIFECYCLE),
  "Rollout.progressDeadlineAbort": inert(LIFECYCLE),
  "Rollout.restartAt": inert("the controller deletes pods started before it, which the ReplicaSet replaces"),
  "Rollout.analysis": inert("how many finished AnalysisRuns the controller keeps"),

  [`${CANARY}.canaryService`]: inert(SERVICE_REF),
  [`${CANARY}.stableService`]: inert(SERVICE_REF),
  [`${CANARY}.pingPong`]: inert(SERVICE_REF),
  [`${CANARY}.steps`]: inert("the canary's steps; each has its own verdict"),
  [`${STEPS}.setWeight`]: inert("the share of the replicas (or traffic) the canary gets"),
  [`${STEPS}.pause`]: inert(LIFECYCLE),
  ...rolloutAnalysis(`${STEPS}.analysis`),
  [`${STEPS}.analysis.measurementRetention`]: inert("how many measurements the run's status keeps"),
  [`${STEPS}.setCanaryScale`]: inert("how many canary pods run; each part has its own verdict"),
  [`${STEPS}.setCanaryScale.weight`]: refused(
    "a share of the replicas the canary runs; past 100 it runs more copies than the replicas read",
    (v) => typeof v === "number" && v >= 0 && v <= 100,
  ),
  [`${STEPS}.setCanaryScale.replicas`]: refused(
    "the canary runs this many copies whatever the rollout's replicas: more copies than the replicas read (only 1 passes)",
    atMostOne,
  ),
  [`${STEPS}.setCanaryScale.matchTrafficWeight`]: inert("the canary's share follows the traffic weight"),
  [`${STEPS}.setHeaderRoute`]: refused(ROUTES),
  [`${STEPS}.setMirrorRoute`]: refused(ROUTES),
  [`${STEPS}.plugin`]: refused(
    "a step plugin: a binary the controller's configuration installs runs this configuration, and no rule reads what it does",
  ),
  [EXPERIMENT_STEP]: inert(
    "an Experiment of the rollout's own pods (the canary's judged template, or the stable ReplicaSet's running one); each part has its own verdict",
  ),
  [`${EXPERIMENT_STEP}.templates[].name`]: inert("a name"),
  [`${EXPERIMENT_STEP}.templates[].specRef`]: inert(
    "canary: the rollout's judged template; stable: the template the stable pods already run",
  ),
  [`${EXPERIMENT_STEP}.templates[].replicas`]: refused(
    "the experiment runs this many more copies of the rollout's pods, beside its replicas (only 1 passes)",
    atMostOne,
  ),
  [`${EXPERIMENT_STEP}.templates[].metadata`]: refused(POD_METADATA("the experiment's pods")),
  [`${EXPERIMENT_STEP}.templates[].selector`]: refused(SELECTOR, labelSelector),
  [`${EXPERIMENT_STEP}.templates[].weight`]: refused(ROUTES),
  [`${EXPERIMENT_STEP}.templates[].service`]: inert(
    "a ClusterIP Service (no type: inside the cluster only) over the judged containers' own ports",
  ),
  [`${EXPERIMENT_STEP}.duration`]: inert(LIFECYCLE),
  [`${EXPERIMENT_STEP}.analyses`]: inert(REFERENCE),
  [`${EXPERIMENT_STEP}.analyses[].args[].value`]: ARG_VALUE,
  [`${EXPERIMENT_STEP}.dryRun`]: inert("metrics whose failures do not fail the run"),
  [`${EXPERIMENT_STEP}.analysisRunMetadata`]: inert(ANALYSIS_RUN_METADATA),
  [`${EXPERIMENT_STEP}.scaleDownDelaySeconds`]: inert(LIFECYCLE),
  [`${CANARY}.trafficRouting`]: refused(ROUTES),
  [`${CANARY}.maxUnavailable`]: inert("how many pods may be down during an update"),
  [`${CANARY}.maxSurge`]: inert(
    "how many extra pods an update may run: the new ReplicaSet never passes the replicas, as a Deployment's",
  ),
  ...rolloutAnalysis(`${CANARY}.analysis`),
  [`${CANARY}.analysis.measurementRetention`]: inert("how many measurements the run's status keeps"),
  [`${CANARY}.analysis.startingStep`]: inert(LIFECYCLE),
  [`${CANARY}.antiAffinity`]: inert(
    "the controller adds pod anti-affinity between the canary and stable pods: scheduling only",
  ),
  [`${CANARY}.canaryMetadata`]: refused(POD_METADATA("the canary's ReplicaSet and its running pods")),
  [`${CANARY}.stableMetadata`]: refused(POD_METADATA("the stable ReplicaSet and its running pods")),
  [`${CANARY}.scaleDownDelaySeconds`]: inert(LIFECYCLE),
  [`${CANARY}.scaleDownDelayRevisionLimit`]: inert(LIFECYCLE),
  [`${CANARY}.abortScaleDownDelaySeconds`]: inert(LIFECYCLE),
  [`${CANARY}.dynamicStableScale`]: inert("the stable pods scale down as the canary's traffic grows"),
  [`${CANARY}.minPodsPerReplicaSet`]: inert(
    "the least pods each ReplicaSet keeps, capped at the replicas (utils/replicaset CheckMinPodsPerReplicaSet)",
  ),
  [`${CANARY}.replicaProgressThreshold`]: inert(LIFECYCLE),

  [`${BLUE_GREEN}.activeService`]: inert(SERVICE_REF),
  [`${BLUE_GREEN}.previewService`]: inert(SERVICE_REF),
  [`${BLUE_GREEN}.previewReplicaCount`]: refused(
    "the preview ReplicaSet runs this many copies, beside the active one's replicas, uncapped (only 1 passes)",
    atMostOne,
  ),
  [`${BLUE_GREEN}.autoPromotionEnabled`]: inert(LIFECYCLE),
  [`${BLUE_GREEN}.autoPromotionSeconds`]: inert(LIFECYCLE),
  [`${BLUE_GREEN}.maxUnavailable`]: inert("how many pods may be down during an update"),
  [`${BLUE_GREEN}.scaleDownDelaySeconds`]: inert(LIFECYCLE),
  [`${BLUE_GREEN}.scaleDownDelayRevisionLimit`]: inert(LIFECYCLE),
  [`${BLUE_GREEN}.abortScaleDownDelaySeconds`]: inert(LIFECYCLE),
  ...rolloutAnalysis(`${BLUE_GREEN}.prePromotionAnalysis`),
  [`${BLUE_GREEN}.prePromotionAnalysis.measurementRetention`]: inert(
    "how many measurements the run's status keeps",
  ),
  ...rolloutAnalysis(`${BLUE_GREEN}.postPromotionAnalysis`),
  [`${BLUE_GREEN}.postPromotionAnalysis.measurementRetention`]: inert(
    "how many measurements the run's status keeps",
  ),
  [`${BLUE_GREEN}.antiAffinity`]: inert(
    "the controller adds pod anti-affinity between the preview and active pods: scheduling only",
  ),
  [`${BLUE_GREEN}.previewMetadata`]: refused(POD_METADATA("the preview ReplicaSet and its running pods")),
  [`${BLUE_GREEN}.activeMetadata`]: refused(POD_METADATA("the active ReplicaSet and its running pods")),
};

const EXPERIMENT: VerdictTable = {
  "Experiment.templates": judged([PRIV], {
    templates: [{ template: { spec: { containers: [{ securityContext: { privileged: true } }] } } }],
  }),
  "Experiment.templates[].template": judged([PRIV], {
    templates: [{ template: { spec: { containers: [{ securityContext: { privileged: true } }] } } }],
  }),
  "Experiment.templates[].name": inert("a name"),
  "Experiment.templates[].replicas": inert(
    "how many copies of the judged template run (read as the pod's replicas)",
  ),
  "Experiment.templates[].minReadySeconds": inert(LIFECYCLE),
  "Experiment.templates[].selector": refused(SELECTOR, labelSelector),
  "Experiment.templates[].service": inert(
    "a ClusterIP Service (no type: inside the cluster only) over the judged containers' own ports (experiments/service.go)",
  ),
  "Experiment.duration": inert(LIFECYCLE),
  "Experiment.progressDeadlineSeconds": inert(LIFECYCLE),
  "Experiment.terminate": inert(LIFECYCLE),
  "Experiment.scaleDownDelaySeconds": inert(LIFECYCLE),
  "Experiment.analyses": inert(REFERENCE),
  "Experiment.analyses[].args[].value": ARG_VALUE,
  "Experiment.analyses[].args[].valueFrom.secretKeyRef": refused(SECRET_ARG),
  "Experiment.dryRun": inert("metrics whose failures do not fail the run"),
  "Experiment.measurementRetention": inert("how many measurements the run's status keeps"),
  "Experiment.analysisRunMetadata": inert(ANALYSIS_RUN_METADATA),
};

/** The verdicts of an analysis template's (or run's) spec. */
function template(kind: string): Record<string, Verdict> {
  return {
    [`${kind}.metrics`]: inert("the metrics the controller measures; each part has its own verdict"),
    ...metrics(`${kind}.metrics[]`, (m) => ({ metrics: [m] })),
    ...analysisSpec(kind),
  };
}

export const ARGO_ROLLOUTS_VERDICTS: VerdictTable = {
  ...ROLLOUT,
  ...EXPERIMENT,
  ...template("AnalysisTemplate"),
  "AnalysisTemplate.templates": inert(REFERENCE),
  ...template("ClusterAnalysisTemplate"),
  "ClusterAnalysisTemplate.templates": inert(REFERENCE),
  ...template("AnalysisRun"),
  "AnalysisRun.terminate": inert(LIFECYCLE),
  "AnalysisRun.ttlStrategy": inert(LIFECYCLE),
};
