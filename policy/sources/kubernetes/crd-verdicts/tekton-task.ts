/**
 * The verdicts of Tekton's task spec and pod template (github.com/tektoncd/pipeline pkg/apis/pipeline/v1 and v1beta1
 * TaskSpec, Step, Sidecar, StepTemplate; pkg/apis/pipeline/pod Template), wherever a kind holds them: a Task's spec,
 * a TaskRun's `taskSpec`, a pipeline task's `taskSpec`, a run's pod templates. Reasons from the operator's own
 * source (pkg/pod/pod.go `Build`, pkg/pod/creds_init.go, pkg/reconciler/taskrun/resources/apply.go). The readers
 * rebuild one pod per task (crd-pods.ts `tektonPod`): a container per step (the step template merged under it,
 * params substituted), the sidecars, the task's volumes, and from the run's pod template its securityContext,
 * hostNetwork, automountServiceAccountToken, runtimeClassName, volumes and env; every other part of the pod Tekton
 * makes is refused here unless it cannot weaken a wall.
 */
import { inert, judged, refused, type Verdict } from "../../verdict";

export const PRIV = "sandbox-disallow-privileged";
export const SECRET = "sandbox-disallow-secret-env";
const VOLUMES = "sandbox-disallow-volume-types";
const SENSITIVE = "sandbox-disallow-sensitive-host-mounts";
const SOCKET = "sandbox-disallow-runtime-socket";
const NS = "sandbox-disallow-host-namespaces";
const EXPOSED = "sandbox-disallow-exposed-ports";
const TOKEN = "sandbox-disallow-service-account-token";
const RUNTIME = "sandbox-require-runtime-class";
const LSM = "sandbox-disallow-unconfined-lsm";
const DEVICES = "sandbox-disallow-devices";

/** A credential as a script or a value writes it (a GitHub token's shape). */
export const TOKEN_VALUE = "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB";

const GPU = { limits: { "nvidia.com/gpu": "1", cpu: "500m", memory: "512Mi" } };

/** Places a fragment of a task spec, pod template or the kind's own spec where the kind holds it. */
export type Wrap = (fragment: object) => object;

export const NAMING = "a name or a description; nothing runs from it";
export const REMOVED =
  "PipelineResources were removed from Tekton: its webhook refuses an object that sets them (a disallowed field in v1beta1 task_validation.go and the others), and the controller reads none";

/** A step's or sidecar's own Tekton fields, beside the container fields the pod rules judge. */
function stepOwn(base: string): Record<string, Verdict> {
  return {
    [`${base}.displayName`]: inert(NAMING),
    [`${base}.onError`]: inert(
      "whether the task goes on after the step fails; the next steps are judged too",
    ),
    [`${base}.timeout`]: inert("the entrypoint ends the step when it passes; it opens nothing"),
    [`${base}.stdoutConfig`]: inert(
      "the entrypoint copies the step's output to this file inside the step's own container",
    ),
    [`${base}.stderrConfig`]: inert(
      "the entrypoint copies the step's errors to this file inside the step's own container",
    ),
    [`${base}.results`]: inert(
      "files the step writes under /tekton/steps; the controller reads them into the run's status",
    ),
    [`${base}.when`]: inert("skips the step when false; a skipped step runs nothing"),
    [`${base}.workspaces`]: inert(
      "which of the task's workspaces this step mounts, and where; the volume behind it has its verdict on the run that binds it (only an emptyDir passes)",
    ),
    [`${base}.ref`]: inert(
      "names the StepAction the step runs: the readers put it in the step where the input holds it, and the stack rule on references fails closed where it does not, or where a resolver fetches it",
    ),
    [`${base}.params`]: inert(
      "values substituted into the named StepAction, which is judged as the step with them where the input holds it",
    ),
  };
}

/**
 * The verdicts of a TaskSpec at `base` (`Task`, `TaskRun.taskSpec`, `Pipeline.tasks[].taskSpec`), `wrap` placing a
 * task spec fragment in the kind's spec. The hardened objects' first param is `msg`, and their first step's script
 * exports it.
 */
export function taskSpec(base: string, wrap: Wrap): Record<string, Verdict> {
  const step = (s: object) => wrap({ steps: [s] });
  const sidecarPriv = wrap({
    sidecars: [{ name: "s", image: "busybox:1.36", securityContext: { privileged: true } }],
  });
  const secretEnv = [{ name: "T", valueFrom: { secretKeyRef: { name: "creds", key: "token" } } }];
  return {
    [`${base}.displayName`]: inert(NAMING),
    [`${base}.description`]: inert(NAMING),
    [`${base}.steps`]: judged([PRIV], step({ securityContext: { privileged: true } })),
    ...stepOwn(`${base}.steps[]`),
    [`${base}.steps[].script`]: judged(
      [SECRET],
      step({ script: `#!/bin/sh\nexport GITHUB_TOKEN=${TOKEN_VALUE}\n` }),
    ),
    [`${base}.steps[].env`]: judged([SECRET], step({ env: secretEnv })),
    [`${base}.steps[].computeResources`]: judged([DEVICES], step({ computeResources: GPU })),
    [`${base}.steps[].envFrom`]: judged([SECRET], step({ envFrom: [{ secretRef: { name: "creds" } }] })),
    [`${base}.sidecars`]: judged([PRIV], sidecarPriv),
    [`${base}.sidecars[].script`]: judged(
      [SECRET],
      wrap({
        sidecars: [
          { name: "s", image: "busybox:1.36", script: `#!/bin/sh\nexport GITHUB_TOKEN=${TOKEN_VALUE}\n` },
        ],
      }),
    ),
    // v1 names a sidecar's requests and limits `computeResources` (v1beta1 `resources`); the pod gets them as its.
    [`${base}.sidecars[].computeResources`]: judged(
      [DEVICES],
      wrap({ sidecars: [{ computeResources: GPU }] }),
    ),
    [`${base}.sidecars[].workspaces`]: inert(
      "which of the task's workspaces the sidecar mounts, and where; the volume behind it has its verdict on the run that binds it (only an emptyDir passes)",
    ),
    // Tekton merges the template under every step (pkg/apis/pipeline/v1 MergeStepsWithStepTemplate), not the sidecars.
    [`${base}.stepTemplate`]: judged(
      [SECRET],
      wrap({ stepTemplate: { envFrom: [{ secretRef: { name: "creds" } }] } }),
    ),
    [`${base}.stepTemplate.env`]: judged([SECRET], wrap({ stepTemplate: { env: secretEnv } })),
    [`${base}.volumes`]: judged(
      [VOLUMES, SENSITIVE, SOCKET],
      wrap({ volumes: [{ name: "v", nfs: { server: "10.0.0.1", path: "/" } }] }),
    ),
    [`${base}.params`]: inert(
      "the task's params; each value is substituted into the steps before they are judged",
    ),
    // The readers substitute the default where the run and the pipeline task give no value (templating.ts).
    [`${base}.params[].default`]: judged([SECRET], wrap({ params: [{ default: TOKEN_VALUE }] })),
    [`${base}.results`]: inert(
      "files the steps write under /tekton/results; the controller reads them into the run's status",
    ),
    [`${base}.workspaces`]: inert(
      "the workspaces the task mounts in its steps, and where; the volume behind each has its verdict on the run that binds it (only an emptyDir passes)",
    ),
    [`${base}.resources`]: inert(REMOVED),
  };
}

const SCHEDULING = "which nodes may run the pod";
const COPIED = (what: string) =>
  `Tekton copies ${what} from the pod template into the task's pod (pkg/pod/pod.go \`Build\`); no rule reads it there`;

const windows = (v: unknown): boolean =>
  typeof v === "object" &&
  v !== null &&
  !Array.isArray(v) &&
  Object.entries(v).every(([k, x]) => typeof x === "string" && (k !== "kubernetes.io/os" || x === "linux"));

/** The verdicts of a pod template (pkg/apis/pipeline/pod Template) at `base`, `wrap` placing a template fragment. */
export function podTemplate(base: string, wrap: Wrap): Record<string, Verdict> {
  return {
    [base]: judged([NS, EXPOSED], wrap({ hostNetwork: true })),
    [`${base}.hostNetwork`]: judged([NS, EXPOSED], wrap({ hostNetwork: true })),
    [`${base}.securityContext`]: judged(
      [LSM],
      wrap({ securityContext: { seLinuxOptions: { type: "spc_t" } } }),
    ),
    [`${base}.automountServiceAccountToken`]: judged([TOKEN], wrap({ automountServiceAccountToken: true })),
    [`${base}.runtimeClassName`]: judged([RUNTIME], wrap({ runtimeClassName: "runc" }), {
      config: { [RUNTIME]: { allowed: ["gvisor"] } },
    }),
    [`${base}.volumes`]: judged(
      [VOLUMES, SENSITIVE, SOCKET],
      wrap({ volumes: [{ name: "v", nfs: { server: "10.0.0.1", path: "/" } }] }),
    ),
    // Tekton appends these to every step's and sidecar's env, over their own (pod.go).
    [`${base}.env`]: judged(
      [SECRET],
      wrap({ env: [{ name: "T", valueFrom: { secretKeyRef: { name: "creds", key: "token" } } }] }),
    ),
    [`${base}.nodeSelector`]: refused(
      `${COPIED("the node selector")}: \`kubernetes.io/os: windows\` makes Tekton build a Windows pod (pod.go \`usesWindows\`: other scripts, no step security defaults); a selector that names no other system than linux passes`,
      windows,
    ),
    [`${base}.tolerations`]: refused(
      `${COPIED("the tolerations")}: they let the pod onto tainted nodes, the control plane's among them`,
    ),
    [`${base}.affinity`]: refused(
      `${COPIED("the affinity")}: it places the pod beside other workloads or on chosen nodes`,
    ),
    [`${base}.topologySpreadConstraints`]: refused(COPIED("the spread constraints")),
    [`${base}.dnsConfig`]: refused(
      `${COPIED("the resolver settings")}: the steps resolve names through servers of the input's choosing`,
    ),
    [`${base}.hostAliases`]: refused(
      `${COPIED("the /etc/hosts lines")}: the steps reach other addresses under names they trust`,
    ),
    [`${base}.imagePullSecrets`]: refused(
      `${COPIED("the pull secrets")}; the controller also reads them to fetch the images' entrypoints from their registries (pkg/pod/entrypoint_lookup_impl.go)`,
    ),
    [`${base}.dnsPolicy`]: inert("which resolver the pod asks; its settings (dnsConfig) are refused"),
    [`${base}.enableServiceLinks`]: inert(
      "environment variables naming the namespace's Services' cluster addresses",
    ),
    [`${base}.hostUsers`]: inert(
      "false gives the pod its own user namespace (safer); absent or true is the default",
    ),
    [`${base}.priorityClassName`]: inert(SCHEDULING),
    [`${base}.schedulerName`]: inert(SCHEDULING),
  };
}

/** A service account other than the namespace's default. */
export const SERVICE_ACCOUNT = refused(
  "the task's pod runs as this account: Tekton mounts every Secret of it annotated tekton.dev/git-* or tekton.dev/docker-* into each step (pkg/pod/creds_init.go) and the controller pulls images with its pull secrets, none of which a rule reads; only default passes",
  (v) => v === "default",
);

const scratch = (v: unknown): boolean =>
  typeof v === "object" &&
  v !== null &&
  !Array.isArray(v) &&
  Object.entries(v).every(
    ([k, x]) =>
      (k === "medium" && (x === "" || x === "Memory")) || (k === "sizeLimit" && typeof x === "string"),
  );

/** The sources a run binds a workspace to (pkg/workspace/apply.go): each becomes a volume mounted in every step. */
export function workspaceBindings(base: string): Record<string, Verdict> {
  const mounted = (what: string) =>
    `Tekton makes ${what} a volume of the task's pod and mounts it in every step (pkg/workspace/apply.go); the readers do not put it in the pod they judge`;
  return {
    [base]: inert("binds the task's or pipeline's workspaces to volumes; each source has its own verdict"),
    [`${base}[].name`]: inert(NAMING),
    [`${base}[].subPath`]: inert("the folder of the volume the steps see"),
    [`${base}[].emptyDir`]: refused(
      `${mounted("the scratch folder")}; an emptyDir of its two fields (medium "" or Memory, a sizeLimit) passes, as it does in a pod`,
      scratch,
    ),
    [`${base}[].configMap`]: refused(mounted("the ConfigMap")),
    [`${base}[].secret`]: refused(mounted("the Secret")),
    [`${base}[].projected`]: refused(mounted("the projected sources (service account tokens among them)")),
    [`${base}[].csi`]: refused(mounted("the CSI driver's volume")),
    [`${base}[].persistentVolumeClaim`]: refused(
      `${mounted("the claim")}; a PipelineRun's claim also starts an affinity assistant StatefulSet beside it (pkg/reconciler/pipelinerun/affinity_assistant.go)`,
    ),
    [`${base}[].volumeClaimTemplate`]: refused(
      `Tekton creates a PersistentVolumeClaim from it (its storage class may provision a host folder) and ${mounted("the claim")}; a PipelineRun's also starts an affinity assistant StatefulSet`,
    ),
  };
}
