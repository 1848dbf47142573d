/**
 * The verdict of every field of agent-sandbox's kinds (sigs.k8s.io/agent-sandbox, the version crds.generated.ts
 * pins: api/v1beta1 Sandbox; extensions/api/v1beta1 SandboxTemplate, SandboxClaim, SandboxWarmPool), keyed
 * `<Kind>.<path under spec>`. Reasons from the operator's own source (controllers/sandbox_controller.go,
 * extensions/controllers). A judged field's `hostile` is a `spec` fragment laid over a hardened object of the kind;
 * test/policy/sources/kubernetes/crd-verdicts.test.ts proves one of its rules refuses it.
 */
import { inert, judged, refused, type Verdict, type VerdictTable } from "../../verdict";

const PRIV = "sandbox-disallow-privileged";
const UNJUDGED = "sandbox-disallow-unjudged-fields";

const CLAIMS =
  "the controller creates a PersistentVolumeClaim from each template and mounts it in the sandbox's pod: its storage class (which may provision a host folder) and size are judged by no rule";

/** The pod template: judged by every pod rule (carriers.ts reads `spec.podTemplate`). */
function blueprint(kind: string): Record<string, Verdict> {
  const privileged = { podTemplate: { spec: { containers: [{ securityContext: { privileged: true } }] } } };
  const injected = { podTemplate: { metadata: { annotations: { "sidecar.istio.io/inject": "true" } } } };
  return {
    [`${kind}.podTemplate`]: judged([PRIV], privileged),
    [`${kind}.podTemplate.spec`]: judged([PRIV], privileged),
    [`${kind}.podTemplate.metadata`]: judged([UNJUDGED], injected),
    [`${kind}.podTemplate.metadata.labels`]: judged([UNJUDGED], {
      podTemplate: { metadata: { labels: { "istio.io/rev": "default" } } },
    }),
    [`${kind}.podTemplate.metadata.annotations`]: judged([UNJUDGED], injected),
    [`${kind}.volumeClaimTemplates`]: refused(CLAIMS),
    [`${kind}.service`]: inert(
      "the controller makes a headless Service (clusterIP None) for the sandbox's pod: a DNS name inside the cluster, no port or address beyond the pod's own",
    ),
  };
}

const is =
  (...values: string[]) =>
  (v: unknown): boolean =>
    typeof v === "string" && values.includes(v);

export const AGENT_SANDBOX_VERDICTS: VerdictTable = {
  ...blueprint("Sandbox"),
  "Sandbox.shutdownTime": inert("when the controller deletes the sandbox; it opens nothing"),
  "Sandbox.shutdownPolicy": inert("whether the expired Sandbox object is deleted or kept; it opens nothing"),
  "Sandbox.operatingMode": inert("Running or Suspended: the controller deletes the pod while suspended"),

  ...blueprint("SandboxTemplate"),
  "SandboxTemplate.networkPolicy": refused(
    "the controller writes a NetworkPolicy for every sandbox of the template from these rules, which no rule reads (left out, it writes its own default: ingress from the sandbox router only)",
  ),
  "SandboxTemplate.networkPolicyManagement": refused(
    "Unmanaged: the controller writes no NetworkPolicy for the template's sandboxes, so their traffic is whatever the namespace allows",
    is("Managed"),
  ),
  "SandboxTemplate.envVarsInjectionPolicy": refused(
    "it lets a SandboxClaim add environment variables to the template's pod, outside the template the rules judged",
    is("Disallowed"),
  ),
  "SandboxTemplate.volumeClaimTemplatesPolicy": refused(
    "it lets a SandboxClaim add volume claims to the template's pod, outside the template the rules judged",
    is("Disallowed"),
  ),

  "SandboxClaim.warmPoolRef": inert(
    "it names the warm pool a sandbox is taken from; the pool's SandboxTemplate is judged as its own object",
  ),
  "SandboxClaim.lifecycle": inert("when the controller deletes the claim and its sandbox; it opens nothing"),
  "SandboxClaim.additionalPodMetadata": refused(
    "the controller adds these labels and annotations to the sandbox's pod: a mesh injector's key adds containers, a label changes which NetworkPolicies select the pod",
  ),
  "SandboxClaim.env": refused(
    "the controller adds these variables to the sandbox's container, outside the template the rules judged",
  ),
  "SandboxClaim.volumeClaimTemplates": refused(CLAIMS),

  "SandboxWarmPool.replicas": inert(
    "how many sandboxes of the template the pool keeps ready: copies of a template judged as its own object",
  ),
  "SandboxWarmPool.sandboxTemplateRef": inert("it names the SandboxTemplate, judged as its own object"),
  "SandboxWarmPool.updateStrategy": inert("when the pool replaces its stale sandboxes; it opens nothing"),
};

/**
 * Annotations of the object itself the controller acts on, by key: `agents.x-k8s.io/pod-name` makes a Sandbox
 * track (and adopt, when it is labelled adoptable) the pod of that name (controllers/sandbox_controller.go
 * `resolvePodName`).
 */
export const AGENT_SANDBOX_ANNOTATIONS: VerdictTable = {
  "agents.x-k8s.io/pod-name": refused(
    "the controller takes the pod of this name as the sandbox's, in place of one made from the template the rules judged",
  ),
};
