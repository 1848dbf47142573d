/**
 * The verdict of every field of a pod spec (core/v1 PodSpec of the claimed Kubernetes version, schema.generated.ts
 * POD_SPEC) and of a pod template's metadata (ObjectMeta), as policy/sources/verdict.ts defines them. A judged
 * field's `hostile` is a pod spec fragment (merged into a hardened pod: lists by index) that one of its rules
 * refuses; test/policy/sources/kubernetes/verdicts.test.ts walks the generated schema, fails on a field without a
 * verdict, and proves every hostile fragment is refused and every control passes.
 */
import { inert, judged, type Verdict, type VerdictTable } from "../verdict";

const PRIV = "sandbox-disallow-privileged";
const NS = "sandbox-disallow-host-namespaces";
const EXPOSED = "sandbox-disallow-exposed-ports";
const CAPS = "sandbox-disallow-added-capabilities";
const NETADMIN = "sandbox-require-drop-net-admin";
const ESC = "sandbox-disallow-privilege-escalation";
const SECCOMP = "sandbox-disallow-unconfined-seccomp";
const LSM = "sandbox-disallow-unconfined-lsm";
const PROC = "sandbox-disallow-unmasked-proc";
const ROOT = "sandbox-require-non-root";
const RO = "sandbox-require-readonly-rootfs";
const LIMITS = "sandbox-require-resource-limits";
const RESTART = "sandbox-require-no-restart";
const DEVICES = "sandbox-disallow-devices";
const PROBES = "sandbox-disallow-host-probes";
const VOLUMES = "sandbox-disallow-volume-types";
const SYSCTLS = "sandbox-disallow-sysctls";
const SENSITIVE = "sandbox-disallow-sensitive-host-mounts";
const SOCKET = "sandbox-disallow-runtime-socket";
const JOBMOUNT = "sandbox-require-single-job-mount";
const TOKEN = "sandbox-disallow-service-account-token";
const RUNTIME = "sandbox-require-runtime-class";
const SECRET = "sandbox-disallow-secret-env";

const SCHEDULING =
  "it only says where or when the pod is scheduled; every node's pod runs under the same walls";
const NAMING = "a name, a number or a display setting the walls do not depend on";
const TIMING = "timing of probes and shutdown; it opens nothing";

/** A probe or lifecycle handler: exec commands are commands (credentials), httpGet/tcpSocket hosts reach out. */
function handler(
  base: string,
  list: string,
  fragment: (h: object) => object,
  lifecycle = false,
): Record<string, Verdict> {
  const sleep: Record<string, Verdict> = lifecycle
    ? { [`${base}.sleep`]: inert("the kubelet waits; nothing runs") }
    : {};
  return {
    ...sleep,
    [base]: judged([SECRET], { [list]: [fragment({ exec: { command: ["mysql", "-pHunter2Secret"] } })] }),
    [`${base}.exec`]: judged([SECRET], {
      [list]: [fragment({ exec: { command: ["mysql", "-pHunter2Secret"] } })],
    }),
    [`${base}.httpGet`]: judged([PROBES, SECRET], {
      [list]: [fragment({ httpGet: { host: "169.254.169.254", port: 80, path: "/" } })],
    }),
    [`${base}.tcpSocket`]: judged([PROBES], {
      [list]: [fragment({ tcpSocket: { host: "10.0.0.1", port: 22 } })],
    }),
  };
}

/** The verdicts of one container list's element (`containers[]`, `initContainers[]`, `ephemeralContainers[]`). */
function containerVerdicts(list: string): Record<string, Verdict> {
  const b = `${list}[]`;
  const c = (fields: object) => ({ [list]: [fields] });
  const sc = (fields: object) => c({ securityContext: fields });
  const probe = (name: string) => handler(`${b}.${name}`, list, (h) => ({ [name]: h }));
  return {
    [list]: judged([PRIV], c({ securityContext: { privileged: true } })),
    [`${b}.securityContext`]: judged([PRIV], sc({ privileged: true })),
    [`${b}.securityContext.capabilities`]: judged([CAPS], sc({ capabilities: { add: ["SYS_ADMIN"] } })),
    [`${b}.name`]: inert(NAMING),
    [`${b}.image`]: inert(
      "the image's user is judged through runAsUser/runAsNonRoot; its content is not a wall",
    ),
    [`${b}.imagePullPolicy`]: inert("when the node pulls the image; it runs the same image"),
    [`${b}.command`]: judged([SECRET], c({ command: ["mysql", "-pHunter2Secret"] })),
    [`${b}.args`]: judged([SECRET], c({ args: ["--password=Hunter2Secret"] })),
    [`${b}.workingDir`]: inert("the folder the command starts in, inside the container"),
    [`${b}.ports`]: judged([EXPOSED], c({ ports: [{ containerPort: 80, hostPort: 8080 }] })),
    [`${b}.ports[].name`]: inert(NAMING),
    [`${b}.ports[].containerPort`]: inert("a port inside the pod's own network namespace"),
    [`${b}.ports[].protocol`]: inert(NAMING),
    [`${b}.envFrom`]: judged([SECRET], c({ envFrom: [{ secretRef: { name: "creds" } }] })),
    [`${b}.env`]: judged(
      [SECRET],
      c({ env: [{ name: "X", valueFrom: { secretKeyRef: { name: "s", key: "k" } } }] }),
    ),
    [`${b}.resources`]: judged([LIMITS, DEVICES], c({ resources: { limits: { "nvidia.com/gpu": "1" } } })),
    [`${b}.resizePolicy`]: inert("whether a resize restarts the container; the limits are judged"),
    [`${b}.restartPolicy`]: judged([RESTART], c({ restartPolicy: "Always" })),
    [`${b}.restartPolicyRules`]: judged(
      [RESTART],
      c({ restartPolicyRules: [{ action: "Restart", exitCodes: { operator: "In", values: [1] } }] }),
    ),
    [`${b}.volumeMounts`]: judged([SENSITIVE, SOCKET, JOBMOUNT], {
      volumes: [{ name: "job", emptyDir: null, hostPath: { path: "/srv/jobs" } }],
      [list]: [{ volumeMounts: [{ name: "job", mountPath: "/job", mountPropagation: "Bidirectional" }] }],
    }),
    [`${b}.volumeDevices`]: judged([DEVICES], c({ volumeDevices: [{ name: "v", devicePath: "/dev/xvda" }] })),
    ...probe("livenessProbe"),
    ...probe("readinessProbe"),
    ...probe("startupProbe"),
    [`${b}.lifecycle`]: judged(
      [SECRET],
      c({ lifecycle: { postStart: { exec: { command: ["mysql", "-pHunter2Secret"] } } } }),
    ),
    ...handler(`${b}.lifecycle.postStart`, list, (h) => ({ lifecycle: { postStart: h } }), true),
    ...handler(`${b}.lifecycle.preStop`, list, (h) => ({ lifecycle: { preStop: h } }), true),
    [`${b}.lifecycle.stopSignal`]: inert("the signal the runtime stops the container with"),
    [`${b}.terminationMessagePath`]: inert(
      "a file inside the container the kubelet reads the last message from",
    ),
    [`${b}.terminationMessagePolicy`]: inert("where the kubelet takes the last message from"),
    [`${b}.stdin`]: inert("an attachable input stream, reached only through the API server"),
    [`${b}.stdinOnce`]: inert("an attachable input stream, reached only through the API server"),
    [`${b}.tty`]: inert("a terminal for an attached stream"),
    [`${b}.securityContext.capabilities.add`]: judged([CAPS], sc({ capabilities: { add: ["SYS_ADMIN"] } })),
    [`${b}.securityContext.capabilities.drop`]: judged(
      [NETADMIN],
      sc({ capabilities: { drop: ["CHOWN"] } }),
      {
        control: sc({ capabilities: { drop: ["ALL"] } }),
      },
    ),
    [`${b}.securityContext.privileged`]: judged([PRIV], sc({ privileged: true })),
    [`${b}.securityContext.seLinuxOptions`]: judged([LSM], sc({ seLinuxOptions: { type: "spc_t" } })),
    [`${b}.securityContext.windowsOptions`]: judged([PRIV], sc({ windowsOptions: { hostProcess: true } })),
    [`${b}.securityContext.runAsUser`]: judged([ROOT], sc({ runAsUser: 0 })),
    [`${b}.securityContext.runAsGroup`]: judged([ROOT], sc({ runAsGroup: 0 })),
    [`${b}.securityContext.runAsNonRoot`]: judged([ROOT], sc({ runAsNonRoot: false, runAsUser: 0 })),
    [`${b}.securityContext.readOnlyRootFilesystem`]: judged([RO], sc({ readOnlyRootFilesystem: false })),
    [`${b}.securityContext.allowPrivilegeEscalation`]: judged([ESC], sc({ allowPrivilegeEscalation: true })),
    [`${b}.securityContext.procMount`]: judged([PROC], sc({ procMount: "Unmasked" })),
    [`${b}.securityContext.seccompProfile`]: judged(
      [SECCOMP],
      sc({ seccompProfile: { type: "Unconfined" } }),
    ),
    [`${b}.securityContext.appArmorProfile`]: judged([LSM], sc({ appArmorProfile: { type: "Unconfined" } })),
  };
}

/**
 * Fields the API server refuses on an ephemeral container (core validation `validateEphemeralContainers`: ports,
 * probes, lifecycle, resources, resize and restart settings): such a pod is never created.
 */
const EPHEMERAL_REFUSED = [
  "ports",
  "resources",
  "resizePolicy",
  "restartPolicy",
  "restartPolicyRules",
  "livenessProbe",
  "readinessProbe",
  "startupProbe",
  "lifecycle",
];

function ephemeralVerdicts(): Record<string, Verdict> {
  const out = containerVerdicts("ephemeralContainers");
  for (const k of Object.keys(out))
    if (
      EPHEMERAL_REFUSED.some(
        (f) => k === `ephemeralContainers[].${f}` || k.startsWith(`ephemeralContainers[].${f}.`),
      )
    )
      delete out[k];
  out["ephemeralContainers[].targetContainerName"] = inert(
    "an ephemeral container joins that container's processes, inside the pod; nothing of the node",
  );
  for (const f of EPHEMERAL_REFUSED)
    out[`ephemeralContainers[].${f}`] = inert(
      "the API server refuses it on an ephemeral container: nothing runs",
    );
  return out;
}

const pod = (fields: object) => fields;
const psc = (fields: object) => ({ securityContext: fields });

/** Every PodSpec field; a verdict covers the fields under it that have none of their own. */
export const POD_SPEC_VERDICTS: VerdictTable = {
  volumes: judged(
    [VOLUMES, SENSITIVE, SOCKET],
    pod({ volumes: [{ name: "v", nfs: { server: "10.0.0.1", path: "/" } }] }),
  ),
  "volumes[].name": inert(NAMING),
  "volumes[].hostPath": judged(
    [SOCKET, SENSITIVE],
    pod({ volumes: [{ name: "h", hostPath: { path: "/var/run/docker.sock" } }] }),
  ),
  ...containerVerdicts("initContainers"),
  ...containerVerdicts("containers"),
  ...ephemeralVerdicts(),
  restartPolicy: judged([RESTART], pod({ restartPolicy: "Always" })),
  terminationGracePeriodSeconds: inert(TIMING),
  activeDeadlineSeconds: inert(
    "a deadline that ends the pod sooner; the Job's lifecycle is judged on the Job",
  ),
  dnsPolicy: inert("which resolver the pod asks; what may leave the pod is judged on its NetworkPolicies"),
  dnsConfig: inert("resolver settings; what may leave the pod is judged on its NetworkPolicies"),
  nodeSelector: inert(SCHEDULING),
  serviceAccountName: judged([TOKEN], pod({ automountServiceAccountToken: true })),
  serviceAccount: judged([TOKEN], pod({ automountServiceAccountToken: true })),
  automountServiceAccountToken: judged([TOKEN], pod({ automountServiceAccountToken: true })),
  nodeName: inert(SCHEDULING),
  hostNetwork: judged([NS, EXPOSED], pod({ hostNetwork: true })),
  hostPID: judged([NS], pod({ hostPID: true })),
  hostIPC: judged([NS], pod({ hostIPC: true })),
  shareProcessNamespace: inert(
    "the pod's own containers see each other's processes, and nothing of the node",
  ),
  securityContext: judged([LSM], psc({ seLinuxOptions: { type: "spc_t" } })),
  "securityContext.seLinuxOptions": judged([LSM], psc({ seLinuxOptions: { type: "spc_t" } })),
  "securityContext.windowsOptions": judged([PRIV], psc({ windowsOptions: { hostProcess: true } })),
  "securityContext.supplementalGroups": judged([ROOT], psc({ supplementalGroups: [0] })),
  "securityContext.supplementalGroupsPolicy": inert(
    "whether the image's groups are merged; groups are judged",
  ),
  "securityContext.fsGroup": judged([ROOT], psc({ fsGroup: 0 })),
  "securityContext.fsGroupChangePolicy": inert("when volume ownership is changed; the group is judged"),
  "securityContext.sysctls": judged(
    [SYSCTLS],
    psc({ sysctls: [{ name: "kernel.core_pattern", value: "|/x" }] }),
  ),
  "securityContext.seccompProfile": judged([SECCOMP], psc({ seccompProfile: { type: "Unconfined" } }), {
    config: { [SECCOMP]: { judgePodLevel: true } },
  }),
  "securityContext.appArmorProfile": judged([LSM], psc({ appArmorProfile: { type: "Unconfined" } })),
  "securityContext.seLinuxChangePolicy": inert("how volumes are relabelled; the labels are judged"),
  imagePullSecrets: inert("credentials the node uses to pull images; the task never sees them"),
  hostname: inert(NAMING),
  subdomain: inert(NAMING),
  hostnameOverride: inert(NAMING),
  setHostnameAsFQDN: inert(NAMING),
  affinity: inert(SCHEDULING),
  schedulerName: inert(SCHEDULING),
  tolerations: inert(SCHEDULING),
  hostAliases: inert(
    "lines of the pod's own /etc/hosts; what may leave the pod is judged on its NetworkPolicies",
  ),
  priorityClassName: inert(SCHEDULING),
  priority: inert(SCHEDULING),
  preemptionPolicy: inert(SCHEDULING),
  readinessGates: inert("conditions that mark the pod ready; nothing runs from them"),
  runtimeClassName: judged([RUNTIME], pod({ runtimeClassName: "runc" }), {
    config: { [RUNTIME]: { allowed: ["gvisor"] } },
  }),
  enableServiceLinks: inert("environment variables naming the namespace's Services' cluster addresses"),
  overhead: inert("set by the runtime class at admission; the pod's limits are judged"),
  topologySpreadConstraints: inert(SCHEDULING),
  os: inert("the node's operating system the pod asks for"),
  hostUsers: inert("false gives the pod its own user namespace (safer); absent or true is the default"),
  schedulingGates: inert(SCHEDULING),
  schedulingGroup: inert(SCHEDULING),
  resourceClaims: judged([DEVICES], pod({ resourceClaims: [{ name: "gpu", resourceClaimName: "gpu" }] })),
  resources: judged(
    [LIMITS],
    pod({ resources: { limits: { memory: "1Ti", cpu: "64" } }, containers: [{ resources: null }] }),
    {
      config: { [LIMITS]: { maxMemoryMb: 1024 } },
    },
  ),
};

/** Every ObjectMeta field of a pod template (annotations are read by the seccomp and AppArmor rules). */
export const OBJECT_META_VERDICTS: VerdictTable = {
  name: inert(NAMING),
  generateName: inert(NAMING),
  namespace: inert("the namespace the pod runs in; its quota and policies are judged by the stack rules"),
  selfLink: inert("written by the API server"),
  uid: inert("written by the API server"),
  resourceVersion: inert("written by the API server"),
  generation: inert("written by the API server"),
  creationTimestamp: inert("written by the API server"),
  deletionTimestamp: inert("written by the API server"),
  deletionGracePeriodSeconds: inert("written by the API server"),
  labels: inert("labels select the pod for Services and NetworkPolicies, which are judged with the stack"),
  annotations: judged([SECCOMP, LSM], {
    annotations: { "container.apparmor.security.beta.kubernetes.io/task": "unconfined" },
  }),
  ownerReferences: inert("garbage collection of the pod with its owner"),
  finalizers: inert("what must happen before the object is deleted"),
  managedFields: inert("written by the API server: who set which field"),
};
