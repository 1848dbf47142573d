/**
 * Every Kubernetes pod carrier -> workload views, one per pod it runs. Where the pods are is carriers.ts's job
 * (built-in kinds in any group, custom resources by group, anything else by shape); here every container list
 * (containers, initContainers, ephemeralContainers) is read with pod-level security settings inherited the way the
 * kubelet applies them.
 */
import { parseQuantity } from "../quantity";
import {
  type ContainerView,
  isUnknown,
  isUnreadable,
  type MountView,
  type ProfileType,
  UNKNOWN,
  type Val,
  type WorkloadView,
} from "../workload";
import { follow, type PodSite, parseKubeType, podSites } from "./carriers";
import { normalizeRestart } from "./docker-common";
import {
  containerArgs,
  containerEnv,
  containerMounts,
  containerPorts,
  hostProbes,
  type PodVolume,
  podVolumes,
} from "./kube-container";
import {
  at,
  bool,
  entries,
  field,
  items,
  join,
  list,
  noTaint,
  num,
  str,
  strList,
  type TaintCheck,
} from "./read";
import { remapView } from "./remap";
import { findUnreadable } from "./unreadable";

export {
  isPodCarrierType,
  type KubeType,
  POD_CARRIER_KINDS,
  type PodSite,
  parseKubeType,
  podSites,
} from "./carriers";

const SECCOMP_POD_ANNOTATION = "seccomp.security.alpha.kubernetes.io/pod";
const SECCOMP_CONTAINER_ANNOTATION = "container.seccomp.security.alpha.kubernetes.io/";
const APPARMOR_CONTAINER_ANNOTATION = "container.apparmor.security.beta.kubernetes.io/";

/** A seccomp or AppArmor annotation value (`runtime/default`, `docker/default`, `unconfined`, `localhost/x`). */
function annotationProfile(v: Val<string>): Val<ProfileType> {
  if (isUnknown(v) || v === undefined) return v;
  const s = v.trim().toLowerCase();
  if (s === "runtime/default" || s === "docker/default") return "RuntimeDefault";
  if (s === "unconfined") return "Unconfined";
  if (s.startsWith("localhost/")) return "Localhost";
  return "Other";
}

/** A `seccompProfile` / `appArmorProfile` field's `type`. */
function fieldProfile(p: unknown): Val<ProfileType> {
  if (isUnknown(p)) return p;
  const t = str(field(p, "type"));
  if (isUnknown(t) || t === undefined) return t;
  const s = t.trim().toLowerCase();
  if (s === "runtimedefault") return "RuntimeDefault";
  if (s === "unconfined") return "Unconfined";
  if (s === "localhost") return "Localhost";
  return "Other";
}

/** Container value, else pod value: the kubelet's inheritance for fields that exist at both levels. */
function inherit<T>(container: Val<T>, pod: Val<T>): Val<T> {
  return container !== undefined ? container : pod;
}

function quantity(v: unknown): Val<number> {
  if (isUnknown(v)) return v;
  return parseQuantity(v);
}

const NOT_EXTENDED = /^(?:cpu|memory|ephemeral-storage|storage|pods|hugepages-.*)$/;

interface PodSecurity {
  readonly runAsUser: Val<number>;
  readonly runAsGroup: Val<number>;
  readonly runAsNonRoot: Val<boolean>;
  readonly seccomp: Val<ProfileType>;
  readonly seccompAnnotation: Val<ProfileType>;
  readonly appArmor: Val<ProfileType>;
  readonly seLinux: unknown;
  readonly groups: Val<readonly Val<string | number>[]>;
}

function adaptContainer(
  c: unknown,
  cPath: string,
  role: ContainerView["role"],
  pod: PodSecurity,
  annotations: unknown,
  volumes: Map<string, PodVolume>,
  used: Set<string>,
  tainted: TaintCheck,
): ContainerView {
  const name = str(field(c, "name"));
  const cname = typeof name === "string" ? name : `#${cPath}`;
  const sc = field(c, "securityContext");
  const caps = field(sc, "capabilities");
  const limits = at(c, "resources.limits");
  const requests = at(c, "resources.requests");
  const { env, unknown: envUnknown } = containerEnv(c, cPath, tainted, annotations);
  const { mounts, unknown: mountsUnknown } = containerMounts(c, cPath, volumes, used, tainted);
  // Ephemeral containers may not declare ports or resources (the API refuses them), so they are not read.
  const { ports, unknown: portsUnknown } =
    role === "ephemeral" ? { ports: [], unknown: false } : containerPorts(c, cPath);
  const seccompField = fieldProfile(field(sc, "seccompProfile"));
  const seccompAnn = annotationProfile(str(field(annotations, `${SECCOMP_CONTAINER_ANNOTATION}${cname}`)));
  const appArmorField = fieldProfile(field(sc, "appArmorProfile"));
  const appArmorAnn = annotationProfile(str(field(annotations, `${APPARMOR_CONTAINER_ANNOTATION}${cname}`)));
  const seccomp = seccompField ?? seccompAnn ?? pod.seccomp ?? pod.seccompAnnotation;
  const seccompSource =
    seccompField !== undefined
      ? join(cPath, "securityContext.seccompProfile")
      : seccompAnn !== undefined
        ? `annotation ${SECCOMP_CONTAINER_ANNOTATION}${cname}`
        : pod.seccomp !== undefined
          ? "pod securityContext.seccompProfile"
          : `annotation ${SECCOMP_POD_ANNOTATION}`;
  const appArmor = appArmorField ?? appArmorAnn ?? pod.appArmor;
  const seLinuxRaw = inherit(field(sc, "seLinuxOptions"), pod.seLinux);
  const extended = [...entries(limits), ...entries(requests)]
    .map(([k]) => k)
    .filter((k, i, all) => !NOT_EXTENDED.test(k) && all.indexOf(k) === i);
  return {
    name: cname,
    role,
    image: str(field(c, "image")),
    privileged: bool(field(sc, "privileged")),
    allowPrivilegeEscalation: bool(field(sc, "allowPrivilegeEscalation")),
    capabilities: { add: strList(field(caps, "add")), drop: strList(field(caps, "drop")) },
    runAsUser: inherit(num(field(sc, "runAsUser")), pod.runAsUser),
    runAsGroup: inherit(num(field(sc, "runAsGroup")), pod.runAsGroup),
    runAsNonRoot: inherit(bool(field(sc, "runAsNonRoot")), pod.runAsNonRoot),
    userName: undefined,
    extraGroups: pod.groups,
    readOnlyRootFilesystem: bool(field(sc, "readOnlyRootFilesystem")),
    seccomp,
    seccompSource,
    appArmor,
    appArmorSource:
      appArmorField !== undefined
        ? join(cPath, "securityContext.appArmorProfile")
        : appArmorAnn !== undefined
          ? `annotation ${APPARMOR_CONTAINER_ANNOTATION}${cname}`
          : "pod securityContext.appArmorProfile",
    seLinux: isUnknown(seLinuxRaw)
      ? seLinuxRaw
      : seLinuxRaw === undefined
        ? undefined
        : {
            disabled: false,
            type: str(field(seLinuxRaw, "type")),
            user: str(field(seLinuxRaw, "user")),
            role: str(field(seLinuxRaw, "role")),
          },
    procMount: str(field(sc, "procMount")),
    cpuLimit: role === "ephemeral" ? undefined : quantity(field(limits, "cpu")),
    memoryLimitBytes: role === "ephemeral" ? undefined : quantity(field(limits, "memory")),
    memorySwapBytes: undefined,
    resourcesNotSupported: role === "ephemeral",
    extendedResources: extended,
    env,
    envUnknown,
    args: containerArgs(c, cPath, tainted),
    ports,
    portsUnknown,
    mounts,
    mountsUnknown,
    devices: items(field(c, "volumeDevices")).map((d) => str(field(d, "devicePath"))),
    hostProbes: role === "ephemeral" ? [] : hostProbes(c, cPath),
    path: cPath,
  };
}

function labelsOf(...sources: unknown[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const s of sources) for (const [k, v] of entries(s)) if (typeof v === "string") out[k] = v;
  return out;
}

/**
 * Adapts every pod a carrier runs (plain values; preview unknowns as {@link UNKNOWN}): one view per pod, named
 * `<name>/<where>` when there are several. Returns undefined when the object runs no pod the rules can find.
 */
export function adaptKubernetesWorkloads(
  type: string,
  props: unknown,
  name: string,
  tainted: TaintCheck = noTaint,
): WorkloadView[] | undefined {
  const t = parseKubeType(type);
  const sites = podSites(type, props);
  if (t === undefined || sites === undefined || sites.length === 0) return undefined;
  return sites.map((site) => {
    const own = sites.length > 1 ? `${name}/${site.where}` : name;
    const remap = site.remap;
    if (remap === undefined) return adaptPod(type, t.kind, site, own, tainted);
    return remapView(
      adaptPod(type, t.kind, site, own, (p) => tainted(remap(p))),
      remap,
    );
  });
}

/** The first pod of a carrier, for callers that judge one view per resource. */
export function adaptKubernetesWorkload(
  type: string,
  props: unknown,
  name: string,
  tainted: TaintCheck = noTaint,
): WorkloadView | undefined {
  return adaptKubernetesWorkloads(type, props, name, tainted)?.[0];
}

function adaptPod(
  type: string,
  kind: string,
  site: PodSite,
  name: string,
  tainted: TaintCheck,
): WorkloadView {
  const props = site.props;
  const specPath = site.specPath;
  const spec = follow(props, specPath);
  const meta = site.metaPath === undefined ? undefined : follow(props, site.metaPath);
  const annotations = field(meta, "annotations");
  const psc = field(spec, "securityContext");
  const hostNetwork = bool(field(spec, "hostNetwork"));
  const supplemental = list(field(psc, "supplementalGroups"));
  const fsGroup = num(field(psc, "fsGroup"));
  const groups: Val<readonly Val<string | number>[]> = isUnknown(supplemental)
    ? supplemental
    : [
        ...(supplemental ?? []).map((g): Val<number> => (isUnknown(g) ? g : num(g))),
        ...(fsGroup === undefined ? [] : [fsGroup as Val<number>]),
      ];
  const pod: PodSecurity = {
    runAsUser: num(field(psc, "runAsUser")),
    runAsGroup: num(field(psc, "runAsGroup")),
    runAsNonRoot: bool(field(psc, "runAsNonRoot")),
    seccomp: fieldProfile(field(psc, "seccompProfile")),
    seccompAnnotation: annotationProfile(str(field(annotations, SECCOMP_POD_ANNOTATION))),
    appArmor: fieldProfile(field(psc, "appArmorProfile")),
    seLinux: field(psc, "seLinuxOptions"),
    groups,
  };
  const volumes = podVolumes(spec, specPath);
  const used = new Set<string>();
  const containers: ContainerView[] = [];
  const lists: [string, ContainerView["role"]][] = [
    ["initContainers", "init"],
    ["containers", "container"],
    ["ephemeralContainers", "ephemeral"],
  ];
  const unknownParts: string[] = [];
  // The whole resource but its status: a secret or binary value anywhere in what the kubelet reads fails closed.
  const unreadableParts = findUnreadable(props, "", new Set(["status"]));
  unreadableParts.push(...(site.unreadable ?? []));
  if (isUnreadable(spec)) unreadableParts.push({ path: specPath, reason: spec.reason });
  else if (isUnknown(spec)) unknownParts.push(specPath);
  for (const [key, role] of lists) {
    const base = join(specPath, key);
    const l = list(field(spec, key));
    if (isUnreadable(l)) {
      if (!isUnknown(spec)) unreadableParts.push({ path: base, reason: l.reason });
      continue;
    }
    if (isUnknown(l)) {
      // The whole list is unknown: nothing in it can be judged yet; the pack says so instead of guessing.
      if (!isUnknown(spec)) unknownParts.push(base);
      continue;
    }
    (l ?? []).forEach((c, i) => {
      containers.push(adaptContainer(c, join(base, i), role, pod, annotations, volumes, used, tainted));
    });
  }
  const unmountedHostVolumes: MountView[] = [];
  for (const [vname, v] of volumes) {
    if (v.type === "hostPath" && !used.has(vname)) {
      unmountedHostVolumes.push({
        type: "hostPath",
        source: v.hostPath,
        target: undefined,
        readOnly: undefined,
        propagation: undefined,
        hostPathType: v.hostPathType,
        volume: vname,
        tainted: false,
        path: v.path,
      });
    }
  }
  const sysctlsRaw = list(field(psc, "sysctls"));
  const restartRaw = normalizeRestart(str(field(spec, "restartPolicy")));
  const podLimits = at(spec, "resources.limits");
  const labels = labelsOf(at(props, "metadata.labels"), field(meta, "labels"));
  const jobSpec = site.jobPath === undefined ? undefined : follow(props, site.jobPath);
  return {
    subject: "workload",
    origin: { backend: "kubernetes", type, kind, name },
    labels,
    role: labels["sandbox.role"],
    project: labels["sandbox.project"],
    namespaces: {
      hostNetwork,
      hostPID: bool(field(spec, "hostPID")),
      hostIPC: bool(field(spec, "hostIPC")),
      hostUsers: undefined,
      hostCgroupns: undefined,
      hostUTS: undefined,
      joined: [],
    },
    networkMode: undefined,
    publishAllPorts: undefined,
    sysctls: isUnknown(sysctlsRaw)
      ? []
      : (sysctlsRaw ?? []).map((s, i) => ({
          name: str(field(s, "name")),
          path: join(join(specPath, "securityContext.sysctls"), i),
        })),
    sysctlsUnknown: isUnknown(sysctlsRaw),
    automountServiceAccountToken: bool(field(spec, "automountServiceAccountToken")),
    runtimeClass: str(field(spec, "runtimeClassName")),
    lifecycle: {
      restart: restartRaw ?? (site.defaultAlways ? "always" : undefined),
      restartForcedByController: site.controller,
      job:
        site.jobPath === undefined
          ? undefined
          : {
              backoffLimit: num(field(jobSpec, "backoffLimit")),
              activeDeadlineSeconds: num(field(jobSpec, "activeDeadlineSeconds")),
              ttlSecondsAfterFinished: num(field(jobSpec, "ttlSecondsAfterFinished")),
              path: site.jobPath,
            },
    },
    podLimits: { cpu: quantity(field(podLimits, "cpu")), memoryBytes: quantity(field(podLimits, "memory")) },
    deviceRequests: site.devices ?? [],
    unmountedHostVolumes,
    containers,
    replicas: site.replicasPath === undefined ? undefined : num(follow(props, site.replicasPath)),
    podPath: specPath,
    unknownParts,
    unreadableParts,
  };
}
