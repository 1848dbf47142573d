/**
 * The verdict of every field of Argo Workflows' user-written kinds (github.com/argoproj/argo-workflows/v3, the
 * version crds.generated.ts pins: pkg/apis/workflow/v1alpha1 Workflow, WorkflowTemplate, ClusterWorkflowTemplate,
 * CronWorkflow), keyed `<Kind>.<path under spec>`. Reasons from the controller's own source
 * (workflow/controller/workflowpod.go `createWorkflowPod`, `setupServiceAccount`, `addMetadata`; operator.go;
 * agent.go; artifact_gc.go; workflow/executor). The pods of a workflow's templates are rebuilt by crd-argo.ts and
 * judged by the pod rules: every field it carries into them is judged; a field the controller puts into a pod or
 * another object that no reader carries is refused. The internal kinds the controller and the executor write
 * (WorkflowTaskSet, WorkflowTaskResult, WorkflowArtifactGCTask) keep their kind verdicts; a WorkflowEventBinding is
 * judged by the templates it submits (references-argo-events.ts).
 * A judged field's `hostile` is a `spec` fragment laid over a hardened object of the kind;
 * test/policy/sources/kubernetes/crd-verdicts.test.ts proves one of its rules refuses it.
 */
import { inert, judged, refused, type Verdict, type VerdictTable } from "../../verdict";
import {
  artifact,
  call,
  keySelector,
  labelSelector,
  locations,
  namesOnly,
  noInjector,
  POD_METADATA,
  PRIV,
  parameters,
} from "./argo-parts";

const TOKEN = "sandbox-disallow-service-account-token";
const NS = "sandbox-disallow-host-namespaces";
const VOLUMES = "sandbox-disallow-volume-types";
const LSM = "sandbox-disallow-unconfined-lsm";

const SCHEDULING = "where the pod is scheduled; it runs under the same walls on any node";
const LIFECYCLE = "when the workflow's steps run, retry, stop or are cleaned up; it opens nothing";
const NO_READER = (what: string) =>
  `the controller puts ${what} into every pod of the workflow (workflowpod.go), and the reader that rebuilds those pods does not carry it: no rule reads it there`;

/** A container spec that runs privileged, as a pod fragment of a template. */
const privileged = { securityContext: { privileged: true } };
const PRIV_PATCH = JSON.stringify({ containers: [{ name: "main", securityContext: { privileged: true } }] });

type Wrap = (fragment: object) => object;

/**
 * The verdicts of a Template at `t` (`Workflow.templates[]`, `Workflow.templateDefaults`); `wrap` places a
 * template fragment in a spec over the hardened object's first template (a container template named `main`),
 * `spec` a fragment of the whole spec (whose second template runs `main` as a step).
 */
function template(t: string, wrap: Wrap, spec: Wrap, defaults: boolean): Record<string, Verdict> {
  const onMain = (f: object) => wrap(f);
  const takesP = { inputs: { parameters: [{ name: "p" }] }, podSpecPatch: "{{inputs.parameters.p}}" };
  const args = { arguments: { parameters: [{ name: "p", value: PRIV_PATCH }] } };
  const stepHostile = spec({ templates: [takesP, { steps: [[args]] }] });
  const taskHostile = spec({
    templates: [takesP, { steps: undefined, dag: { tasks: [{ name: "first", template: "main", ...args }] } }],
  });
  const hookHostile = spec({
    templates: [takesP, { steps: [[{ hooks: { exit: { template: "main", ...args } } }]] }],
  });
  // A default is merged under the template, whose own fields win (operator.go `mergedTemplateDefaultsInto`): the
  // hostile default sets what the hardened template leaves unset.
  const spc = { securityContext: { seLinuxOptions: { type: "spc_t" } } };
  const as: Record<string, object> = {
    container: {},
    script: { container: undefined, script: { image: "x", source: "true" } },
    containerSet: { container: undefined, containerSet: { containers: [{ name: "a", image: "x" }] } },
  };
  const body = (k: string, own: object): Verdict =>
    defaults
      ? judged(
          [PRIV, LSM],
          spec({
            templateDefaults: { [k]: k === "containerSet" ? { containers: [{ name: "a", ...spc }] } : spc },
            templates: [as[k]],
          }),
        )
      : judged([PRIV], onMain(own));
  const out: Record<string, Verdict> = {
    ...(t.endsWith("[]") ? {} : { [t]: judged([PRIV], onMain({ podSpecPatch: PRIV_PATCH })) }),
    [`${t}.name`]: inert("a name"),
    [`${t}.container`]: body("container", { container: privileged }),
    [`${t}.script`]: body("script", {
      container: undefined,
      script: { image: "x", source: "true", ...privileged },
    }),
    [`${t}.containerSet`]: body("containerSet", {
      container: undefined,
      containerSet: { containers: [{ name: "a", image: "x", ...privileged }] },
    }),
    [`${t}.containerSet.volumeMounts`]: refused(
      "the controller adds these mounts to every container of the set (workflowpod.go), which the reader does not: a mount no rule reads",
    ),
    [`${t}.containerSet.retryStrategy`]: inert(LIFECYCLE),
    [`${t}.containerSet.containers[].dependencies`]: inert("which container of the set starts after which"),
    [`${t}.initContainers`]: judged(
      [PRIV],
      onMain({ initContainers: [{ name: "i", image: "x", ...privileged }] }),
    ),
    [`${t}.sidecars`]: judged([PRIV], onMain({ sidecars: [{ name: "s", image: "x", ...privileged }] })),
    [`${t}.initContainers[].mirrorVolumeMounts`]: refused(
      "the controller copies the main container's volume mounts into this container (workflowpod.go), which the reader does not",
    ),
    [`${t}.sidecars[].mirrorVolumeMounts`]: refused(
      "the controller copies the main container's volume mounts into this container (workflowpod.go), which the reader does not",
    ),
    [`${t}.volumes`]: judged(
      [VOLUMES],
      onMain({ volumes: [{ name: "v", nfs: { server: "10.0.0.1", path: "/" } }] }),
    ),
    [`${t}.securityContext`]: judged(
      [LSM],
      onMain({ securityContext: { seLinuxOptions: { type: "spc_t" } } }),
    ),
    [`${t}.podSpecPatch`]: judged([PRIV], onMain({ podSpecPatch: PRIV_PATCH })),
    [`${t}.automountServiceAccountToken`]: judged([TOKEN], onMain({ automountServiceAccountToken: true })),
    [`${t}.serviceAccountName`]: judged(
      [TOKEN],
      onMain({ serviceAccountName: "x", automountServiceAccountToken: true }),
    ),
    [`${t}.executor`]: inert(
      "the service account whose token the controller mounts only into its own executor containers (init, wait: workflowpod.go `newExecContainer`); the task's containers get none of it",
    ),
    [`${t}.metadata`]: refused(POD_METADATA, noInjector),
    [`${t}.nodeSelector`]: inert(SCHEDULING),
    [`${t}.affinity`]: refused(NO_READER("this affinity")),
    [`${t}.tolerations`]: refused(NO_READER("these tolerations")),
    [`${t}.hostAliases`]: refused(NO_READER("these /etc/hosts lines")),
    [`${t}.schedulerName`]: inert(SCHEDULING),
    [`${t}.priorityClassName`]: inert(SCHEDULING),
    ...parameters(
      `${t}.inputs`,
      onMain({ ...takesP, inputs: { parameters: [{ name: "p", default: PRIV_PATCH }] } }),
    ),
    ...artifact(`${t}.outputs.artifacts[]`),
    [`${t}.outputs`]: inert("what the executor reads back from the step when it ends"),
    [`${t}.outputs.parameters[].valueFrom.configMapKeyRef`]: refused(
      "the controller reads the value from a ConfigMap: core/v1.ConfigMapKeySelector holds only name, key and optional",
      keySelector,
    ),
    [`${t}.archiveLocation`]: inert(
      "where the step's output artifacts are saved; each storage has its own verdict",
    ),
    ...locations(`${t}.archiveLocation`),
    [`${t}.steps`]: inert("which templates run in which order; each template is judged as its own"),
    [`${t}.dag`]: inert("which templates run in which order; each template is judged as its own"),
    ...(defaults ? {} : call(`${t}.steps[][]`, stepHostile, hookHostile)),
    ...(defaults ? {} : call(`${t}.dag.tasks[]`, taskHostile, hookHostile)),
    [`${t}.resource`]: judged(
      [PRIV],
      onMain({
        container: undefined,
        resource: {
          action: "create",
          manifest:
            "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n  - {name: x, image: x, securityContext: {privileged: true}}\n",
        },
      }),
    ),
    [`${t}.resource.flags`]: refused(
      "the executor passes these flags to kubectl (workflow/executor/resource.go): another server, credentials or files no rule reads",
    ),
    [`${t}.resource.manifestFrom`]: refused(
      "the executor applies a manifest it fetches from an artifact when the step runs; the scan cannot read it",
    ),
    [`${t}.resource.setOwnerReference`]: inert("whether the workflow owns the object, for its deletion"),
    [`${t}.resource.successCondition`]: inert(LIFECYCLE),
    [`${t}.resource.failureCondition`]: inert(LIFECYCLE),
    [`${t}.data`]: inert(
      "the executor's own container reads and filters a list (operator.go `executeData`); its pod's settings are the template's, judged",
    ),
    ...artifact(`${t}.data.source.artifactPaths`),
    [`${t}.http`]: refused(
      "the controller runs the request from its agent pod (agent.go), a pod no rule sees, to any address, with header values from Secrets",
    ),
    [`${t}.plugin`]: refused(
      "the controller runs it in its agent pod with the cluster's executor plugins as sidecars (agent.go), a pod no rule sees",
    ),
    [`${t}.suspend`]: inert(LIFECYCLE),
    [`${t}.daemon`]: inert("the step's pod keeps running beside the next steps; the pod is judged"),
    [`${t}.activeDeadlineSeconds`]: inert(LIFECYCLE),
    [`${t}.timeout`]: inert(LIFECYCLE),
    [`${t}.retryStrategy`]: inert(LIFECYCLE),
    [`${t}.parallelism`]: inert("how many of the template's steps run at once; copies of judged pods"),
    [`${t}.failFast`]: inert(LIFECYCLE),
    [`${t}.metrics`]: inert("Prometheus metrics the controller itself emits about the step"),
    [`${t}.synchronization`]: inert("a mutex or semaphore the controller holds while the step runs"),
    [`${t}.synchronization.semaphore.configMapKeyRef`]: refused(
      "the semaphore's size from a ConfigMap: core/v1.ConfigMapKeySelector holds only name, key and optional",
      keySelector,
    ),
    [`${t}.synchronization.semaphores[].configMapKeyRef`]: refused(
      "the semaphore's size from a ConfigMap: core/v1.ConfigMapKeySelector holds only name, key and optional",
      keySelector,
    ),
    [`${t}.memoize`]: inert("the controller reuses an earlier step's outputs from a ConfigMap cache"),
    [`${t}.memoize.cache.configMap`]: refused(
      "the cache's ConfigMap: core/v1.ConfigMapKeySelector holds only name, key and optional",
      keySelector,
    ),
    [`${t}.annotations`]: inert(
      "annotations the controller reads for the node's display in the workflow's status; no pod gets them",
    ),
  };
  if (defaults)
    for (const f of ["steps", "dag", "resource"])
      out[`${t}.${f}`] = refused(
        `a default ${f} is merged into every ${f} template (operator.go \`mergedTemplateDefaultsInto\`), which the readers of ${f} templates do not do`,
      );
  return out;
}

/** The verdicts of a WorkflowSpec at `w` (`Workflow`, `CronWorkflow.workflowSpec`); `wrap` places a fragment. */
function workflowSpec(w: string, wrap: Wrap): Record<string, Verdict> {
  const at = (f: string) => `${w}.${f}`;
  const onFirst: Wrap = (f) => wrap({ templates: [f] });
  const spec = (f: object) => wrap(f);
  const entryHostile = spec({
    arguments: { parameters: [{ name: "p", value: PRIV_PATCH }] },
    podSpecPatch: "{{workflow.parameters.p}}",
  });
  const nested: Record<string, Verdict> = w.includes(".")
    ? { [w]: judged([PRIV], onFirst({ container: privileged })) }
    : {};
  return {
    ...nested,
    ...template(at("templates[]"), onFirst, spec, false),
    [at("templates")]: judged([PRIV], onFirst({ container: privileged })),
    ...template(at("templateDefaults"), (f) => spec({ templateDefaults: f }), spec, true),
    [at("entrypoint")]: inert("which template runs first; each template is judged as its own"),
    ...parameters(at("arguments"), entryHostile),
    [at("serviceAccountName")]: judged(
      [TOKEN],
      spec({ serviceAccountName: "x", automountServiceAccountToken: true }),
    ),
    [at("automountServiceAccountToken")]: judged([TOKEN], spec({ automountServiceAccountToken: true })),
    [at("executor")]: inert(
      "the service account whose token the controller mounts only into its own executor containers (init, wait: workflowpod.go `setupServiceAccount`); required when the pods' token is not mounted",
    ),
    [at("volumes")]: judged(
      [VOLUMES],
      spec({ volumes: [{ name: "v", nfs: { server: "10.0.0.1", path: "/" } }] }),
    ),
    [at("volumeClaimTemplates")]: refused(
      "the controller creates these claims and adds them as volumes to every pod (operator.go `createPVCs`): storage no rule reads",
    ),
    [at("volumeClaimGC")]: inert(LIFECYCLE),
    [at("hostNetwork")]: judged([NS], spec({ hostNetwork: true })),
    [at("securityContext")]: judged([LSM], spec({ securityContext: { seLinuxOptions: { type: "spc_t" } } })),
    [at("podSpecPatch")]: judged([PRIV], spec({ podSpecPatch: PRIV_PATCH })),
    [at("podMetadata")]: refused(POD_METADATA, noInjector),
    [at("nodeSelector")]: inert(SCHEDULING),
    [at("affinity")]: refused(NO_READER("this affinity")),
    [at("tolerations")]: refused(NO_READER("these tolerations")),
    [at("hostAliases")]: refused(NO_READER("these /etc/hosts lines")),
    [at("dnsConfig")]: refused(NO_READER("these resolver settings")),
    [at("dnsPolicy")]: inert(
      "which resolver the pods ask; what may leave them is judged on their NetworkPolicies",
    ),
    [at("imagePullSecrets")]: refused(
      "the node pulls the pods' images with these Secrets: core/v1.LocalObjectReference holds only a name",
      namesOnly,
    ),
    [at("schedulerName")]: inert(SCHEDULING),
    [at("podPriorityClassName")]: inert(SCHEDULING),
    [at("priority")]: inert("the order the controller runs workflows in"),
    [at("podDisruptionBudget")]: refused(
      "the controller creates a PodDisruptionBudget for the workflow's pods (operator.go), an object no rule reads",
    ),
    [at("artifactRepositoryRef")]: refused(
      "a ConfigMap whose repository settings (an address, the Secrets holding its credentials) the executor uses for every artifact; no rule reads it",
    ),
    [at("artifactGC")]: refused(
      "the controller runs artifact garbage collection pods with these labels, annotations, service account and pod patch (artifact_gc.go), pods no rule sees; only the strategy and forceFinalizerRemoval pass",
      (v) =>
        typeof v === "object" &&
        v !== null &&
        Object.entries(v).every(
          ([k, x]) =>
            (k === "strategy" && typeof x === "string") ||
            (k === "forceFinalizerRemoval" && typeof x === "boolean"),
        ),
    ),
    [at("archiveLogs")]: inert("whether the pods' logs are saved to the artifact repository"),
    [at("parallelism")]: inert("how many pods run at once; copies of judged pods"),
    [at("suspend")]: inert(LIFECYCLE),
    [at("onExit")]: inert("which template runs when the workflow ends; it is judged as its own"),
    [at("ttlStrategy")]: inert(LIFECYCLE),
    [at("activeDeadlineSeconds")]: inert(LIFECYCLE),
    [at("podGC")]: inert(LIFECYCLE),
    [at("podGC.labelSelector")]: refused(
      "which pods the controller deletes: a meta/v1.LabelSelector",
      labelSelector,
    ),
    [at("retryStrategy")]: inert(LIFECYCLE),
    [at("shutdown")]: inert(LIFECYCLE),
    [at("metrics")]: inert("Prometheus metrics the controller itself emits about the workflow"),
    [at("synchronization")]: inert("a mutex or semaphore the controller holds while the workflow runs"),
    [at("synchronization.semaphore.configMapKeyRef")]: refused(
      "the semaphore's size from a ConfigMap: core/v1.ConfigMapKeySelector holds only name, key and optional",
      keySelector,
    ),
    [at("synchronization.semaphores[].configMapKeyRef")]: refused(
      "the semaphore's size from a ConfigMap: core/v1.ConfigMapKeySelector holds only name, key and optional",
      keySelector,
    ),
    [at("workflowTemplateRef")]: inert(
      "it names the WorkflowTemplate whose spec runs under this one: references.ts joins the two as the controller does, judged with the set, and one the input does not hold fails closed",
    ),
    [at("hooks")]: inert(
      "templates of the workflow run when the expression holds; each is judged as its own",
    ),
    ...parameters(
      at("hooks{}.arguments"),
      spec({
        hooks: { exit: { template: "main", arguments: { parameters: [{ name: "p", value: PRIV_PATCH }] } } },
        templates: [{ inputs: { parameters: [{ name: "p" }] }, podSpecPatch: "{{inputs.parameters.p}}" }],
      }),
    ),
    [at("hooks{}.templateRef")]: inert(
      "it names a WorkflowTemplate's template: references.ts adds it to the workflow's templates",
    ),
    [at("workflowMetadata")]: inert("labels and annotations of the Workflow object itself; no pod gets them"),
  };
}

const CRON = "CronWorkflow";

export const ARGO_WORKFLOWS_VERDICTS: VerdictTable = {
  ...workflowSpec("Workflow", (f) => f),
  ...workflowSpec("WorkflowTemplate", (f) => f),
  ...workflowSpec("ClusterWorkflowTemplate", (f) => f),
  ...workflowSpec(`${CRON}.workflowSpec`, (f) => ({ workflowSpec: f })),
  [`${CRON}.schedule`]: inert("when the controller submits a workflow"),
  [`${CRON}.schedules`]: inert("when the controller submits a workflow"),
  [`${CRON}.timezone`]: inert("when the controller submits a workflow"),
  [`${CRON}.when`]: inert("when the controller submits a workflow"),
  [`${CRON}.concurrencyPolicy`]: inert("whether workflows of the schedule overlap; each is the judged spec"),
  [`${CRON}.suspend`]: inert("the controller submits nothing while it is true"),
  [`${CRON}.startingDeadlineSeconds`]: inert("how late a missed run may start"),
  [`${CRON}.successfulJobsHistoryLimit`]: inert("how many finished workflows are kept"),
  [`${CRON}.failedJobsHistoryLimit`]: inert("how many failed workflows are kept"),
  [`${CRON}.stopStrategy`]: inert("when the controller stops submitting"),
  [`${CRON}.workflowMetadata`]: refused(
    "the metadata of every Workflow the controller submits: only its name, generateName, labels and annotations pass (the Workflow object's, no pod's)",
    (v) =>
      typeof v === "object" &&
      v !== null &&
      !Array.isArray(v) &&
      Object.entries(v).every(([k, x]) =>
        k === "name" || k === "generateName"
          ? typeof x === "string"
          : (k === "labels" || k === "annotations") &&
            typeof x === "object" &&
            x !== null &&
            !Array.isArray(x) &&
            Object.values(x).every((s) => typeof s === "string"),
      ),
  ),
};
