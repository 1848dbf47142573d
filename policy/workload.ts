import type { SecondaryNetwork } from "./sources/kubernetes/multus";
import type { UnjudgedField } from "./sources/verdict";
import type { Origin, Val } from "./values";
import type { IngressView, ServiceView, UnjudgedView } from "./workload-exposure";
import type { ArgView, EnvView, FileTextView, HeaderView, HookCommandView } from "./workload-text";
import type { PodVolumeView } from "./workload-volumes";

export * from "./values";
export type { ArgView, EnvView, FileTextView, HeaderView, HookCommandView } from "./workload-text";
/**
 * The normalized view of "a container that will run", whatever wrote it: a `docker.Container`, any Kubernetes pod
 * carrier, or the runtime's launch spec. Rules read only this view, so one rule judges every spelling.
 *
 * Every field that comes from the resource is a {@link Val}: the value, `undefined` when the field is absent, or
 * {@link UNKNOWN} when it cannot be known yet (a preview unknown). Rules must treat UNKNOWN as "cannot be checked",
 * never as a violation.
 */

/**
 * One capability list as the runtime reads it: `caps` canonical (`NET_ADMIN`, `ALL`), `raw` as written, `ineffective`
 * the entries the runtime reads as no capability at all (a Kubernetes drop of `CAP_ALL`, left out of `caps`),
 * `unknown` when any entry (or the list) is not known yet.
 */
export interface CapabilityRead {
  readonly caps: readonly string[];
  readonly raw: readonly string[];
  readonly ineffective: readonly string[];
  readonly unknown: boolean;
}

/** A container's capability lists, each entry as written (any case, optional `CAP_`), and as the runtime reads them. */
export interface CapabilitiesView {
  readonly add: Val<readonly Val<string>[]>;
  readonly drop: Val<readonly Val<string>[]>;
  /** The adds, read the Docker way on every front. */
  readonly added: CapabilityRead;
  /** The drops, read as the workload's runtime applies them. */
  readonly dropped: CapabilityRead;
}

/** A seccomp or AppArmor setting, normalized: `RuntimeDefault`, `Localhost`, `Unconfined`, or absent. */
export type ProfileType = "RuntimeDefault" | "Localhost" | "Unconfined" | "Other";

/** A filesystem the container sees at `target`. */
export interface MountView {
  /** `bind`/`hostPath` expose the host; the others do not. */
  readonly type:
    | "bind"
    | "hostPath"
    | "volume"
    | "tmpfs"
    | "emptyDir"
    | "secret"
    | "configMap"
    | "projected"
    | "other";
  /** The host path for bind and hostPath mounts (with a Kubernetes `subPath` joined), as written. */
  readonly source: Val<string>;
  readonly target: Val<string>;
  readonly readOnly: Val<boolean>;
  /** Mount propagation as written (`rshared`, `Bidirectional`, ...). */
  readonly propagation: Val<string>;
  /** Kubernetes hostPath `type` (`Socket`, `CharDevice`, ...). */
  readonly hostPathType?: Val<string>;
  /** For projected volumes: the source kinds (`serviceAccountToken`, `secret`, ...). */
  readonly projectedSources?: readonly string[];
  /** For projected volumes: the `audience` of each `serviceAccountToken` source (undefined: the API server's). */
  readonly tokenAudiences?: readonly { readonly audience: Val<string>; readonly path: string }[];
  /** The volume's name (Kubernetes), for messages. */
  readonly volume?: string;
  readonly tainted: boolean;
  readonly path: string;
}

/** A port the container declares or publishes. */
export interface PortView {
  readonly containerPort: Val<number>;
  /** The host port: a number, 0 or absent when none is bound. Docker `ports[]` always publish (random when 0). */
  readonly hostPort: Val<number>;
  readonly hostIp: Val<string>;
  /** True when the port is published on the host (Docker `ports`, Kubernetes `hostPort` > 0). */
  readonly published: Val<boolean>;
  readonly path: string;
}

/** The security-relevant view of one container. */
export interface ContainerView {
  readonly name: string;
  /** Regular, init or ephemeral (debug) container. */
  readonly role: "container" | "init" | "ephemeral";
  readonly image: Val<string>;
  readonly privileged: Val<boolean>;
  /** False means escalation is blocked (`allowPrivilegeEscalation: false`, Docker `no-new-privileges`). */
  readonly allowPrivilegeEscalation: Val<boolean>;
  readonly capabilities: CapabilitiesView;
  /** Effective user id after pod/container inheritance; Docker's numeric user. */
  readonly runAsUser: Val<number>;
  readonly runAsGroup: Val<number>;
  readonly runAsNonRoot: Val<boolean>;
  /** A Docker user given by name (`root`, `app`), when not numeric. */
  readonly userName: Val<string>;
  /** Extra groups the process gets (Kubernetes supplementalGroups/fsGroup, Docker groupAdds). */
  readonly extraGroups: Val<readonly Val<string | number>[]>;
  readonly readOnlyRootFilesystem: Val<boolean>;
  readonly seccomp: Val<ProfileType>;
  readonly seccompSource: string;
  /** A Kubernetes `Localhost` profile's `localhostProfile`, as written (judged where the input ships the file). */
  readonly seccompLocalhost?: unknown;
  readonly appArmor: Val<ProfileType>;
  readonly appArmorSource: string;
  /** A Kubernetes `Localhost` AppArmor profile's name, as written (judged where the input ships the profile). */
  readonly appArmorLocalhost?: unknown;
  /** SELinux: `disabled` for Docker `label=disable`, else the options as written. */
  readonly seLinux: Val<{
    readonly disabled: boolean;
    readonly type?: Val<string>;
    readonly user?: Val<string>;
    readonly role?: Val<string>;
  }>;
  readonly procMount: Val<string>;
  /** Kubernetes: the container's own `securityContext.windowsOptions.hostProcess` (a Windows host process). */
  readonly hostProcess?: Val<boolean>;
  /** Kubernetes: `windowsOptions.runAsUserName` (the container's, else the pod's): its user on a Windows node. */
  readonly windowsUserName?: Val<string>;
  /** CPU limit in cores. */
  readonly cpuLimit: Val<number>;
  /** Memory limit in bytes. */
  readonly memoryLimitBytes: Val<number>;
  /** Memory plus swap in bytes (Docker `memorySwap`); -1 means unlimited swap. */
  readonly memorySwapBytes: Val<number>;
  /** Docker's process limit (`PidsLimit`, Compose `pids_limit`): 0 or less is unlimited. Kubernetes sets it per node. */
  readonly pidsLimit?: Val<number>;
  /** True when the API gives this container no resources field (ephemeral containers). */
  readonly resourcesNotSupported: boolean;
  /** Extended resources requested as limits (`nvidia.com/gpu`), by name. */
  readonly extendedResources: readonly string[];
  readonly env: readonly EnvView[];
  /** True when the env list itself is unknown. */
  readonly envUnknown: boolean;
  readonly args: readonly ArgView[];
  readonly ports: readonly PortView[];
  readonly portsUnknown: boolean;
  readonly mounts: readonly MountView[];
  readonly mountsUnknown: boolean;
  /** Raw block devices (`volumeDevices`, Docker `devices`), as paths. */
  readonly devices: readonly Val<string>[];
  /**
   * Probes and lifecycle handlers whose `httpGet`/`tcpSocket` name a `host`: the kubelet connects from the node's
   * network to that address. Each with the host as written (a value that cannot be read is kept, to fail closed).
   */
  readonly hostProbes: readonly { readonly host: Val<string>; readonly path: string }[];
  /**
   * What runs in the container besides its own process, or is put into it before it starts: exec probes and
   * lifecycle hooks, healthchecks, uploaded files; each by where it was written. Absent where the adapter does not
   * read them (a check that needs them then fails closed).
   */
  readonly execHooks?: readonly string[];
  /** The command lines of exec probes, lifecycle hooks and healthchecks (absent where the front has none). */
  readonly hookCommands?: readonly HookCommandView[];
  /** Headers of httpGet probes and hooks, which the kubelet sends to the container. */
  readonly hookHeaders?: readonly HeaderView[];
  /** Files with known text the container gets (uploads, downward-API files of annotations or labels). */
  readonly fileTexts?: readonly FileTextView[];
  /** Where this container sits in the resource, e.g. `spec.template.spec.initContainers[0]`. */
  readonly path: string;
  /**
   * Docker settings that take away the kernel's protected paths (`MaskedPaths: []`, `ReadonlyPaths: []`,
   * `writable-cgroups`), each with where it was written; absent where the front has none.
   */
  readonly weakenedSystemPaths?: readonly { readonly what: Val<string>; readonly path: string }[];
}

/** One network a Docker container joins. */
export interface NetworkView {
  /** The network as written: `bridge`, `host`, `none`, `container:<id>`, or a network's name or id. */
  readonly name: Val<string>;
  /** Where it was written: `networkMode`, or the entry `networksAdvanced[1]` (`networksAdvanced`: the whole list). */
  readonly path: string;
  /** The network's driver, when the input says it (the scanner's Compose reader writes it). */
  readonly driver: Val<string>;
}

/** Host namespaces and their sharing modes. */
export interface NamespacesView {
  readonly hostNetwork: Val<boolean>;
  readonly hostPID: Val<boolean>;
  readonly hostIPC: Val<boolean>;
  /** Host user namespace (Docker `usernsMode: host`; Kubernetes `hostUsers` stays default and is not judged). */
  readonly hostUsers: Val<boolean>;
  readonly hostCgroupns: Val<boolean>;
  /** Host UTS namespace (Docker `utsMode`/`UTSMode: host`, Compose `uts: host`); Kubernetes has none. */
  readonly hostUTS: Val<boolean>;
  /** Docker modes that join another container's namespace (`container:<id>`), as written. */
  readonly joined: readonly string[];
}

/** The job's lifecycle, when the carrier has one. */
export interface LifecycleView {
  /** Normalized restart policy: `never`, `on-failure`, `always`, `unless-stopped`, or as written. */
  readonly restart: Val<string>;
  /** True when the carrier decides restarts itself (Deployment, StatefulSet, ...): the field is not a choice. */
  readonly restartForcedByController: boolean;
  /**
   * Kubernetes containers that restart by a policy of their own (a sidecar's `restartPolicy: Always`, a container's
   * `restartPolicy` or `restartPolicyRules`), each with its normalized policy, whether it has restart rules, and where.
   */
  readonly containerRestarts?: readonly {
    readonly restart: Val<string>;
    readonly rules: boolean;
    readonly path: string;
  }[];
  /** Job fields, for Job and CronJob carriers only. */
  readonly job?: {
    readonly backoffLimit: Val<number>;
    readonly activeDeadlineSeconds: Val<number>;
    readonly ttlSecondsAfterFinished: Val<number>;
    readonly path: string;
  };
}

/**
 * Kubernetes: the pod's own `securityContext`, as Pod Security judges it. A pod-level value is refused even where
 * every container overrides it (it still applies to the pod sandbox and to any container that does not say).
 */
export interface PodLevelView {
  /** Where the pod's securityContext is written (`spec.securityContext`). */
  readonly path: string;
  readonly runAsUser: Val<number>;
  readonly runAsNonRoot: Val<boolean>;
  /** `windowsOptions.hostProcess`: the pod runs as a process on the Windows host. */
  readonly hostProcess: Val<boolean>;
  /**
   * Set when the pod runs on Windows nodes (`os.name`, a node selector or required affinity on the OS label): the node
   * ignores runAsUser and runAsGroup, and each container runs as its `windowsUserName`.
   */
  readonly windows?: { readonly reason: string; readonly path: string };
  readonly seccomp: Val<ProfileType>;
  readonly appArmor: Val<ProfileType>;
  readonly seLinux: Val<{
    readonly type: Val<string>;
    readonly user: Val<string>;
    readonly role: Val<string>;
  }>;
  /** Every `container.apparmor.security.beta.kubernetes.io/*` annotation, for any container name, and its value. */
  readonly appArmorAnnotations: readonly { readonly key: string; readonly value: Val<string> }[];
}

/** One running unit: a Docker container, or a pod (all its containers). */
export interface WorkloadView {
  readonly subject: "workload";
  readonly origin: Origin;
  readonly labels: Readonly<Record<string, string>>;
  /** `sandbox.role` label (task, probe, proxy), when present. */
  readonly role: string | undefined;
  /** `sandbox.project` label, when present. */
  readonly project: string | undefined;
  readonly namespaces: NamespacesView;
  /**
   * Docker containers (`docker.Container`): every network the container joins, as the engine joins them: its
   * network mode (`bridge` when unset), then each `networksAdvanced` entry. Absent for pods and launch specs.
   */
  readonly networks?: readonly NetworkView[];
  /** Docker `publishAllPorts`. */
  readonly publishAllPorts: Val<boolean>;
  /**
   * Networks that give the workload an address of its own on the host's network (Docker `macvlan`, `ipvlan`),
   * reachable from outside the machine without a published port.
   */
  readonly hostLanNetworks?: readonly {
    readonly name: string;
    readonly driver: string;
    readonly path: string;
  }[];
  /**
   * Kubernetes: Multus attachments the pod's annotations ask for (`k8s.v1.cni.cncf.io/networks`, and
   * `v1.multus-cni.io/default-network` replacing its default network), see sources/kubernetes/multus.ts.
   */
  readonly secondaryNetworks?: readonly SecondaryNetwork[];
  readonly sysctls: readonly { readonly name: Val<string>; readonly path: string }[];
  readonly sysctlsUnknown: boolean;
  /**
   * Kubernetes: the labels the pod itself carries (its template's; a controller's own labels are not on its pods),
   * which NetworkPolicies select it by. Absent when the carrier writes no pod metadata.
   */
  readonly podLabels?: Val<Readonly<Record<string, string>>>;
  /** Kubernetes: the namespace the pod runs in (the carrier's `metadata.namespace`, else its template's). */
  readonly podNamespace?: Val<string>;
  /** Kubernetes: the pod's own annotations (its template's), which admission webhooks read, and where they are. */
  readonly podAnnotations?: Val<Readonly<Record<string, string>>>;
  readonly podMetaPath?: string;
  /** Kubernetes: the pod's ServiceAccount (`serviceAccountName`, else the deprecated `serviceAccount`; `default`). */
  readonly serviceAccountName?: Val<string>;
  /** Kubernetes only: undefined when absent (the default mounts a token). */
  readonly automountServiceAccountToken: Val<boolean>;
  /** Runtime class (Kubernetes `runtimeClassName`, Docker `runtime`). */
  readonly runtimeClass: Val<string>;
  readonly lifecycle: LifecycleView;
  /** Pod-level resource limits (Kubernetes 1.32+ `spec.resources`): cpu cores, memory bytes. */
  readonly podLimits: { readonly cpu: Val<number>; readonly memoryBytes: Val<number> };
  /** Docker `deviceRequests`/`gpus` (what `allowGpu` lets through), as short descriptions. */
  readonly deviceRequests: readonly string[];
  /** Device requests not known yet (a computed `gpus`), by what they are: a note, never a violation. */
  readonly deviceRequestsUnknown?: readonly string[];
  /**
   * Docker `deviceCgroupRules`: each opens device numbers in the container's device cgroup (`a *:* rwm` opens
   * every device), whatever any GPU allowance says. As short descriptions.
   */
  readonly deviceCgroupRules?: readonly string[];
  /** Kubernetes: the pod's own security settings (see {@link PodLevelView}). */
  readonly pod?: PodLevelView;
  /** Kubernetes: every pod volume with its source kinds, mounted or not (the node sets each one up). */
  readonly podVolumes?: Val<readonly PodVolumeView[]>;
  /** Kubernetes: the pod's Dynamic Resource Allocation claims (`spec.resourceClaims`), as short descriptions. */
  readonly resourceClaims?: readonly string[];
  /** Pod volumes (Kubernetes) that expose the host but no container mounts: still set up on the node. */
  readonly unmountedHostVolumes: readonly MountView[];
  readonly containers: readonly ContainerView[];
  /** How many copies can run at once (replicas, parallelism); undefined for one. */
  readonly replicas: Val<number>;
  /** Where the pod spec sits in the resource, e.g. `spec.template.spec`. */
  readonly podPath: string;
  /** Parts that could not be read at all during preview (a whole container list), for the "not checked" note. */
  readonly unknownParts: readonly string[];
  /** Parts present but unreadable as a whole (a pod spec that is a string): every rule fails closed on them. */
  readonly unreadableParts: readonly UnreadablePart[];
  /**
   * Fields the input sets that no rule may pass in silence: refused by the source's verdict table, or not in the
   * engine schema the project claims (policy/sources). Absent where the source has no table yet.
   */
  readonly unjudgedFields?: readonly UnjudgedField[];
}

/**
 * An operator's object judged field by field against its pinned CRD schema (policy/sources/kubernetes/crd-fields.ts):
 * the fields outside its pods that fail closed. Its pods are workload views of their own.
 */
export interface FieldsView {
  readonly subject: "fields";
  readonly origin: Origin;
  readonly unjudgedFields: readonly UnjudgedField[];
}

/** Everything a rule may be asked to judge. */
export type { IngressView, ServiceView, UnjudgedView } from "./workload-exposure";
export type { ConfigMapUse, PodVolumeView } from "./workload-volumes";

export type Subject = WorkloadView | ServiceView | IngressView | UnjudgedView | FieldsView;

/** A container's display name in messages: `container "app"`, `init container "setup"`. */
export function containerLabel(c: ContainerView): string {
  const role =
    c.role === "init" ? "init container" : c.role === "ephemeral" ? "ephemeral container" : "container";
  return `${role} "${c.name}"`;
}

/**
 * A part present but unreadable, and where it is one only for want of another object: an `envFrom` ConfigMap whose
 * keys the pod alone does not show (`configMapEnv`: its name and the variables' prefix), read with the ConfigMap when
 * the input holds it (policy/sources/kubernetes/input-objects.ts).
 */
export interface UnreadablePart {
  readonly path: string;
  readonly reason: string;
  readonly configMapEnv?: { readonly name: string; readonly prefix: string; readonly role: string };
}
