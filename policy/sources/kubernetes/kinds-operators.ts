/**
 * Operators' kinds whose verdict is not "read by a pod carrier or entry-point reader" (those come from carriers.ts,
 * crd-pods.ts and service.ts, see kinds.ts): policy engines and mutation (admission-time changes to pods, objects
 * generated from rules), and operators' configuration kinds that start nothing. Each from its project's API types:
 *
 * - Kyverno v1.15 (kyverno/kyverno api/kyverno/v1 `Rule`: `mutate`, `generate`, `validate`, `verifyImages`;
 *   api/policies.kyverno.io: MutatingPolicy, GeneratingPolicy, ValidatingPolicy, ImageValidatingPolicy,
 *   DeletingPolicy and their Namespaced forms; api/kyverno/v2 PolicyException, CleanupPolicy);
 * - OPA Gatekeeper v3.20 (apis/mutations: Assign, AssignMetadata, ModifySet, AssignImage; templates.gatekeeper.sh
 *   ConstraintTemplate; constraints.gatekeeper.sh, one kind per template; expansion.gatekeeper.sh ExpansionTemplate);
 * - Kubewarden v1.x (policies.kubewarden.io ClusterAdmissionPolicy, AdmissionPolicy and their Group forms:
 *   `spec.mutating`; PolicyServer runs a Deployment from flattened settings);
 * - jsPolicy (policy.jspolicy.com JsPolicy `spec.type`: Validating, Mutating, Controller);
 * - cert-manager v1.18 (cert-manager.io Certificate, CertificateRequest, Issuer, ClusterIssuer: an ACME issuer's
 *   `http01` solvers start solver pods and public routes; acme.cert-manager.io Order, Challenge);
 * - Prometheus operator v0.85 (monitoring.coreos.com: scrape and alert configuration kinds are inert; Prometheus,
 *   PrometheusAgent, Alertmanager, ThanosRuler run StatefulSets from flattened settings and `containers` overrides);
 * - External Secrets v0.19 (external-secrets.io ExternalSecret, ClusterExternalSecret, SecretStore,
 *   ClusterSecretStore, PushSecret: they write Secrets, judged where pods read them);
 * - Flux v2.6 (source.toolkit.fluxcd.io sources only fetch artifacts, which the Kustomization and HelmRelease that
 *   apply them are refused for; notification and image automation kinds start nothing in the cluster);
 * - CSI snapshots (snapshot.storage.k8s.io VolumeSnapshot, VolumeSnapshotClass, VolumeSnapshotContent);
 * - Security Profiles Operator v1.0 (kubernetes-sigs/security-profiles-operator api/: seccompprofile v1/v1beta1,
 *   selinuxprofile v1/v1alpha2 SelinuxProfile and RawSelinuxProfile, apparmorprofile v1/v1alpha1, profilebinding,
 *   profilerecording, spod SecurityProfilesOperatorDaemon, secprofnodestatus): a SeccompProfile is judged where a pod
 *   names its file (policy/stack/disallow-unjudged-references.ts); a SelinuxProfile's type is refused on the pod by
 *   the LSM rule unless allowed by name; a ProfileBinding and a ProfileRecording make the operator's webhook change
 *   pods at admission (internal/pkg/webhooks/binding, recording); an AppArmorProfile is judged where a pod names it
 *   (Localhost), and refused by itself in complain mode; raw SELinux policies are installed on every node with rules
 *   the project does not read;
 * - Tekton Pipelines v1.11.0 (tekton.dev): StepAction (v1beta1, v1alpha1) runs only as a step that names it, and is
 *   judged there; ClusterTask is registered by no API package of the release (it was removed), and a `taskRef` of
 *   that kind is a custom task there; CustomRun and Run go to a custom task's own controller; a VerificationPolicy
 *   only adds signature checks; resolution.tekton.dev ResolutionRequest makes the resolvers fetch what it names;
 * - Knative Serving v0.50.0 (autoscaling.internal.knative.dev): PodAutoscaler and Metric are the controller's own
 *   state, made for each Revision;
 * - agent-sandbox v1.0.1 (extensions/api/v1beta1 SandboxClaim, SandboxWarmPool): sandboxes of a SandboxTemplate;
 * - Kubeflow Trainer v2.0.0 (pkg/apis/trainer/v1alpha1 TrainJob): the pods of a training runtime;
 * - KEDA v2.21.0 (apis/keda/v1alpha1: a ScaledObject scales an object of the set, judged with it; a
 *   TriggerAuthentication is read only for a trigger that names it; apis/eventing/v1alpha1 CloudEventSource and
 *   ClusterCloudEventSource send the operator's events to an address they name).
 */
import { isObj } from "../lenient";
import type { KindTable, KindVerdict } from "./kind-verdict";
import { appArmorProfileObjectReason } from "./spo-apparmor";

const inert = (why: string, unless?: (props: unknown) => string | undefined): KindVerdict =>
  unless === undefined ? { v: "inert", why } : { v: "inert", why, unless };
const unjudged = (why: string): KindVerdict => ({ v: "unjudged", why });
const through = (why: string, unless?: (props: unknown) => string | undefined): KindVerdict =>
  unless === undefined ? { v: "through", why } : { v: "through", why, unless };
const stack = (rules: readonly string[]): KindVerdict => ({ v: "stack", rules });

const MUTATES = "changes pods at admission, after the rules judged them: what runs is not what was judged";
const GENERATES = "creates objects from its rules (pods, routes, bindings) that the input does not show";
const FLATTENED =
  "its operator runs pods from flattened settings and container overrides the project pins no schema for";

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const spec = (props: unknown): unknown => (isObj(props) ? props.spec : undefined);

/** A Kyverno policy's rules that change or create objects. */
function kyvernoRules(props: unknown): string | undefined {
  const s = spec(props);
  const rules = isObj(s) ? s.rules : undefined;
  if (rules !== undefined && !Array.isArray(rules)) return "its rules are not a list the rules can read";
  for (const [i, r] of list(rules).entries()) {
    if (!isObj(r)) return `rules[${i}] is not an object the rules can read`;
    if (r.mutate !== undefined && r.mutate !== null) return `rules[${i}] mutates: it ${MUTATES}`;
    if (r.generate !== undefined && r.generate !== null) return `rules[${i}] generates: it ${GENERATES}`;
  }
  return undefined;
}

/** A Kubewarden policy with `spec.mutating` (a flag; anything but false counts). */
function kubewardenMutating(props: unknown): string | undefined {
  const s = spec(props);
  const m = isObj(s) ? s.mutating : undefined;
  return m === undefined || m === false
    ? undefined
    : `spec.mutating is ${JSON.stringify(m)}: the policy ${MUTATES}`;
}

/** A jsPolicy of type Mutating or Controller (Validating is the default). */
function jsPolicyType(props: unknown): string | undefined {
  const s = spec(props);
  const t = isObj(s) ? s.type : undefined;
  if (t === undefined || t === "Validating") return undefined;
  return t === "Mutating"
    ? `spec.type is "Mutating": the policy ${MUTATES}`
    : `spec.type is ${JSON.stringify(t)}: a controller policy runs code that creates and changes objects`;
}

/** An ACME issuer with HTTP-01 solvers: cert-manager starts a solver pod and a public route per challenge. */
function acmeHttpSolvers(props: unknown): string | undefined {
  const s = spec(props);
  const acme = isObj(s) ? s.acme : undefined;
  const solvers = isObj(acme) ? acme.solvers : undefined;
  for (const [i, solver] of list(solvers).entries())
    if (isObj(solver) && solver.http01 !== undefined && solver.http01 !== null)
      return `spec.acme.solvers[${i}].http01 makes cert-manager start a solver pod and a public route for each challenge`;
  return undefined;
}

const PROMETHEUS_CONFIG = "scrape or alerting configuration for a Prometheus; it starts nothing itself";
const FLUX_SOURCE =
  "a Flux source only fetches an artifact; what applies it (Kustomization, HelmRelease) fails closed itself";
const EXTERNAL_SECRETS =
  "it writes Secrets from a store; a Secret reaches a task only through the pod's references, judged there";

export const OPERATOR_KINDS: KindTable = {
  "kyverno.io": {
    ClusterPolicy: inert("a policy that only validates or verifies images refuses objects", kyvernoRules),
    Policy: inert("a policy that only validates or verifies images refuses objects", kyvernoRules),
    PolicyException: inert("it exempts objects from Kyverno policies, not from these rules"),
    CleanupPolicy: inert("it deletes objects; it creates and changes none"),
    ClusterCleanupPolicy: inert("it deletes objects; it creates and changes none"),
    UpdateRequest: unjudged(`Kyverno acts on it to apply mutate and generate rules: it ${GENERATES}`),
  },
  "policies.kyverno.io": {
    MutatingPolicy: unjudged(`it ${MUTATES}`),
    NamespacedMutatingPolicy: unjudged(`it ${MUTATES}`),
    GeneratingPolicy: unjudged(`it ${GENERATES}`),
    NamespacedGeneratingPolicy: unjudged(`it ${GENERATES}`),
    ValidatingPolicy: inert("it can only refuse objects"),
    NamespacedValidatingPolicy: inert("it can only refuse objects"),
    ImageValidatingPolicy: inert("it verifies image signatures; at most it pins an image to its digest"),
    NamespacedImageValidatingPolicy: inert(
      "it verifies image signatures; at most it pins an image to its digest",
    ),
    DeletingPolicy: inert("it deletes objects; it creates and changes none"),
    NamespacedDeletingPolicy: inert("it deletes objects; it creates and changes none"),
    PolicyException: inert("it exempts objects from Kyverno policies, not from these rules"),
  },
  "mutations.gatekeeper.sh": {
    Assign: unjudged(`it ${MUTATES}`),
    AssignMetadata: unjudged(`it ${MUTATES}`),
    ModifySet: unjudged(`it ${MUTATES}`),
    AssignImage: unjudged(`it ${MUTATES}`),
  },
  "templates.gatekeeper.sh": { ConstraintTemplate: inert("it defines a validating constraint") },
  "expansion.gatekeeper.sh": {
    ExpansionTemplate: inert("it tells Gatekeeper's validation how a workload expands into pods"),
  },
  "policies.kubewarden.io": {
    ClusterAdmissionPolicy: inert("a validating policy can only refuse objects", kubewardenMutating),
    AdmissionPolicy: inert("a validating policy can only refuse objects", kubewardenMutating),
    ClusterAdmissionPolicyGroup: inert("a policy group can only refuse objects"),
    AdmissionPolicyGroup: inert("a policy group can only refuse objects"),
    PolicyServer: unjudged(FLATTENED),
  },
  "policy.jspolicy.com": {
    JsPolicy: inert("a validating policy can only refuse objects", jsPolicyType),
    JsPolicyBundle: inert("the code of a JsPolicy; the policy's type says what it may do"),
    JsPolicyViolations: inert("a report of refused requests"),
  },
  "cert-manager.io": {
    Certificate: inert("it asks an issuer for a certificate stored in a Secret"),
    CertificateRequest: inert("it asks an issuer to sign a request"),
    Issuer: inert("a certificate authority's settings", acmeHttpSolvers),
    ClusterIssuer: inert("a certificate authority's settings", acmeHttpSolvers),
  },
  "acme.cert-manager.io": {
    Order: inert("cert-manager's record of an ACME order; its issuer says how challenges are solved"),
    Challenge: unjudged("cert-manager solves it with a solver pod and a route the input does not show"),
  },
  "monitoring.coreos.com": {
    ServiceMonitor: inert(PROMETHEUS_CONFIG),
    PodMonitor: inert(PROMETHEUS_CONFIG),
    Probe: inert(PROMETHEUS_CONFIG),
    PrometheusRule: inert(PROMETHEUS_CONFIG),
    ScrapeConfig: inert(PROMETHEUS_CONFIG),
    AlertmanagerConfig: inert(PROMETHEUS_CONFIG),
    Prometheus: unjudged(FLATTENED),
    PrometheusAgent: unjudged(FLATTENED),
    Alertmanager: unjudged(FLATTENED),
    ThanosRuler: unjudged(FLATTENED),
  },
  "external-secrets.io": {
    ExternalSecret: inert(EXTERNAL_SECRETS),
    ClusterExternalSecret: inert(EXTERNAL_SECRETS),
    SecretStore: inert(EXTERNAL_SECRETS),
    ClusterSecretStore: inert(EXTERNAL_SECRETS),
    PushSecret: inert("it copies a Secret to an outside store; it starts nothing in the cluster"),
  },
  "source.toolkit.fluxcd.io": Object.fromEntries(
    ["GitRepository", "HelmRepository", "HelmChart", "OCIRepository", "Bucket", "ExternalArtifact"].map(
      (k) => [k, inert(FLUX_SOURCE)],
    ),
  ),
  "notification.toolkit.fluxcd.io": {
    Alert: inert("it forwards Flux events to a provider"),
    Provider: inert("where Flux sends its events"),
    Receiver: inert("a webhook Flux's notification controller serves; it opens no route of its own"),
  },
  "image.toolkit.fluxcd.io": {
    ImageRepository: inert("it lists an image repository's tags"),
    ImagePolicy: inert("it picks an image tag"),
    ImageUpdateAutomation: inert(
      "it writes image tags to a Git repository, which a Kustomization (refused) applies",
    ),
  },
  "security-profiles-operator.x-k8s.io": {
    SeccompProfile: through(
      "a seccomp profile the operator writes to every node; a pod that names its file (Localhost operator/...) is judged by its content with the rest of its set",
    ),
    SelinuxProfile: through(
      "an SELinux type for pods that select it; the LSM rule refuses a pod's SELinux type outside the confined container types",
    ),
    RawSelinuxProfile: unjudged(
      "raw SELinux policy installed on every node, whose rules the project does not read: it may grant the container types anything",
    ),
    AppArmorProfile: through(
      "an AppArmor profile the operator loads on every node under its name, an allow list over the operator's fixed denies; a pod that names it (Localhost) is judged with it in its set",
      appArmorProfileObjectReason,
    ),
    ProfileBinding: unjudged(
      `it binds a profile to every pod that runs its image: the operator's webhook ${MUTATES}`,
    ),
    ProfileRecording: unjudged(
      `it records the syscalls of the pods it selects: the operator's webhook ${MUTATES} (a recording profile filters nothing)`,
    ),
    SecurityProfilesOperatorDaemon: unjudged(
      "it configures the operator's privileged daemon on every node (host paths, recorders, log enricher) from flattened settings the project pins no schema for",
    ),
    SecurityProfileNodeStatus: inert("the operator's record of a profile's state on one node"),
  },
  // agent-sandbox's claims and warm pools run pods only from a SandboxTemplate, a pod carrier judged as its own
  // object; what a claim adds to the pod is judged field by field (crd-verdicts/agent-sandbox.ts).
  "extensions.agents.x-k8s.io": {
    SandboxClaim: through(
      "it takes a sandbox made from the SandboxTemplate its warm pool names, judged as its own object; what the claim adds to the pod is judged field by field",
    ),
    SandboxWarmPool: through(
      "it keeps sandboxes of the SandboxTemplate it names ready, judged as its own object; its fields are judged one by one",
    ),
  },
  // Kubeflow Trainer's TrainJob runs the pods of the runtime it names, a pod carrier judged as its own object; what
  // the job changes in them is judged field by field (crd-verdicts/kubeflow-trainer.ts).
  "trainer.kubeflow.org": {
    TrainJob: through(
      "it runs the pods of the TrainingRuntime or ClusterTrainingRuntime it names, judged as its own object; what the job changes in them is judged field by field",
    ),
  },
  "tekton.dev": {
    ClusterTask: unjudged(
      "Tekton Pipelines v1.11.0, the release the project claims, registers no ClusterTask (pkg/apis/pipeline/v1beta1/register.go): a release that serves it runs pods from fields the project pins no schema for",
    ),
    CustomRun: unjudged(
      "a custom task: its own controller, not Tekton's, decides what runs (pkg/apis/pipeline/v1beta1 CustomRun)",
    ),
    Run: unjudged(
      "a custom task: its own controller, not Tekton's, decides what runs (pkg/apis/pipeline/v1alpha1 Run)",
    ),
    VerificationPolicy: inert(
      "it makes Tekton check the signatures of the Tasks, Pipelines and StepActions it runs, failing or warning on a mismatch (pkg/trustedresources); it starts nothing",
    ),
    StepAction: through(
      "it runs only as a step that names it (`ref`), which is judged with it (policy/stack/disallow-unjudged-references.ts)",
    ),
  },
  "autoscaling.internal.knative.dev": {
    PodAutoscaler: unjudged(
      "Knative Serving's own state: the revision reconciler makes one for each Revision and the autoscaler scales that Revision's Deployment from it (pkg/apis/autoscaling/v1alpha1); written by hand it scales a Deployment the project may not judge",
    ),
    Metric: unjudged(
      "Knative Serving's own state: the autoscaler scrapes the pods it names (pkg/apis/autoscaling/v1alpha1); written by hand it points the autoscaler at pods the project may not judge",
    ),
  },
  "resolution.tekton.dev": {
    ResolutionRequest: unjudged(
      "Tekton's resolvers fetch what it names (a git repository, an HTTP address, a bundle, a hub entry, an object of another namespace) from inside the cluster with their own credentials; the controller makes one for each remote reference it runs",
    ),
  },
  // Argo Workflows: the kinds the controllers rebuild pods from are read (kinds.ts); a WorkflowEventBinding submits a
  // WorkflowTemplate of the set with the event's values as its arguments (references-argo-events.ts).
  "argoproj.io": {
    WorkflowEventBinding: stack(["sandbox-disallow-unjudged-references"]),
  },
  // KEDA: a ScaledJob is a pod carrier (carriers.ts); the other kinds' fields are judged one by one
  // (crd-verdicts/keda.ts).
  "keda.sh": {
    ScaledObject: stack(["sandbox-disallow-unjudged-references", "sandbox-require-budget-bound"]),
    TriggerAuthentication: through(
      "the KEDA operator reads it only for a trigger that names it (authenticationRef), refused there; its credential sources are refused field by field",
    ),
    ClusterTriggerAuthentication: through(
      "the KEDA operator reads it only for a trigger that names it (authenticationRef), refused there; its credential sources are refused field by field",
    ),
  },
  "eventing.keda.sh": {
    CloudEventSource: unjudged(
      "the KEDA operator sends its events about the namespace's scaled objects to the HTTP address or Azure Event Grid topic it names, from its own pod and outside the sandbox's egress walls (apis/eventing/v1alpha1, not pinned)",
    ),
    ClusterCloudEventSource: unjudged(
      "the KEDA operator sends its events about every namespace's scaled objects to the HTTP address or Azure Event Grid topic it names, from its own pod and outside the sandbox's egress walls (apis/eventing/v1alpha1, not pinned)",
    ),
  },
  "snapshot.storage.k8s.io": {
    VolumeSnapshot: inert("a snapshot of a claim; a pod mounting a restored claim is judged on the pod"),
    VolumeSnapshotClass: inert("how snapshots are taken"),
    VolumeSnapshotContent: inert("a snapshot's storage record"),
  },
};

/**
 * Groups whose every kind is inert: one kind per constraint template (Gatekeeper constraints validate only).
 */
export const INERT_GROUPS: Readonly<Record<string, string>> = {
  "constraints.gatekeeper.sh": "a Gatekeeper constraint can only refuse objects",
};
