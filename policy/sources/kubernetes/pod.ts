/**
 * One pod of a Kubernetes carrier -> its workload view: pod-level settings (host namespaces, sysctls, volumes,
 * restart and Job lifecycle, pod limits, labels and namespace) and every container list (containers,
 * initContainers, ephemeralContainers) read by container.ts with the pod's security settings inherited.
 */
import {
  type ContainerView,
  isUnknown,
  isUnreadable,
  type MountView,
  type Val,
  type WorkloadView,
} from "../../workload";
import { normalizeRestart } from "../docker/spellings";
import {
  at,
  bool,
  entries,
  field,
  isObj,
  join,
  list,
  num,
  str,
  type TaintCheck,
  unreadable,
} from "../lenient";
import { findUnreadable } from "../unreadable";
import { follow } from "./carriers";
import { adaptContainer, podVolumes, quantity } from "./container";
import { podSpecFields } from "./fields";
import { isBuiltInKind } from "./kind-verdict";
import { secondaryNetworks } from "./multus";
import { podLevel, podSecurity } from "./security";
import { type PodSite, parseKubeType } from "./sites";
import { podResourceClaims, podVolumeSources } from "./volumes";

function labelsOf(...sources: unknown[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const s of sources) for (const [k, v] of entries(s)) if (typeof v === "string") out[k] = v;
  return out;
}

/** A label map: its text values; unknown or unreadable as a whole as the map is. */
function labelMap(v: unknown): Val<Record<string, string>> {
  if (isUnknown(v) || v === undefined) return v;
  return isObj(v) ? labelsOf(v) : unreadable(v, "a map of labels");
}

/**
 * The view of the pod at `site` of a `kind` object named `name`; `carrierNamespace` is the object's own
 * `metadata.namespace` (a rebuilt pod does not carry it).
 */
export function adaptPod(
  type: string,
  kind: string,
  site: PodSite,
  name: string,
  tainted: TaintCheck,
  carrierNamespace: Val<string>,
): WorkloadView {
  const props = site.props;
  const specPath = site.specPath;
  const spec = follow(props, specPath);
  const meta = site.metaPath === undefined ? undefined : follow(props, site.metaPath);
  const annotations = field(meta, "annotations");
  const psc = field(spec, "securityContext");
  const hostNetwork = bool(field(spec, "hostNetwork"));
  const pod = podSecurity(spec, annotations);
  const volumes = podVolumes(spec, specPath, meta);
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
  const containerRestarts = containerRestartsOf(spec, specPath);
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
    publishAllPorts: undefined,
    secondaryNetworks: secondaryNetworks(annotations, site.metaPath),
    sysctls: isUnknown(sysctlsRaw)
      ? []
      : (sysctlsRaw ?? []).map((s, i) => ({
          name: str(field(s, "name")),
          path: join(join(specPath, "securityContext.sysctls"), i),
        })),
    sysctlsUnknown: isUnknown(sysctlsRaw),
    podLabels: labelMap(field(meta, "labels")),
    podAnnotations: labelMap(annotations),
    ...(site.metaPath === undefined ? {} : { podMetaPath: site.metaPath }),
    serviceAccountName:
      str(field(spec, "serviceAccountName")) ?? str(field(spec, "serviceAccount")) ?? "default",
    podNamespace: carrierNamespace ?? str(field(meta, "namespace")),
    automountServiceAccountToken: bool(field(spec, "automountServiceAccountToken")),
    runtimeClass: str(field(spec, "runtimeClassName")),
    lifecycle: {
      restart: restartRaw ?? (site.defaultAlways ? "always" : undefined),
      restartForcedByController: site.controller,
      containerRestarts,
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
    pod: podLevel(spec, specPath, pod, annotations),
    podVolumes: podVolumeSources(spec, specPath),
    resourceClaims: podResourceClaims(spec, specPath),
    unmountedHostVolumes,
    containers,
    replicas:
      site.replicas ?? (site.replicasPath === undefined ? undefined : num(follow(props, site.replicasPath))),
    podPath: specPath,
    unknownParts,
    unreadableParts,
    // The claimed version's PodSpec and ObjectMeta hold a built-in kind's pod; an operator's pod template is its
    // CRD's schema, which may add fields of its own.
    ...(builtIn(type) && site.remap === undefined && site.vm !== true
      ? { unjudgedFields: podSpecFields(spec, specPath, meta, site.metaPath) }
      : {}),
  };
}

function builtIn(type: string): boolean {
  const t = parseKubeType(type);
  return t !== undefined && isBuiltInKind(t);
}

/**
 * Containers that restart by their own policy, whatever the pod's: an init container with `restartPolicy: Always` is
 * a sidecar the kubelet restarts each time it exits (GA in 1.33), and a container's own `restartPolicy` and
 * `restartPolicyRules` (ContainerRestartRules, beta and on by default since 1.35) override the pod's. Ephemeral
 * containers take neither field. A container that writes `restartPolicy: Never` and no rule is not listed.
 */
function containerRestartsOf(
  spec: unknown,
  specPath: string,
): { restart: Val<string>; rules: boolean; path: string }[] {
  const out: { restart: Val<string>; rules: boolean; path: string }[] = [];
  for (const key of ["initContainers", "containers"]) {
    const cs = list(field(spec, key));
    if (isUnknown(cs) || cs === undefined) continue;
    cs.forEach((c, i) => {
      const restart = normalizeRestart(str(field(c, "restartPolicy")));
      const rulesRaw = list(field(c, "restartPolicyRules"));
      const rules = isUnknown(rulesRaw) || (rulesRaw ?? []).length > 0;
      if ((restart === undefined || restart === "never") && !rules) return;
      out.push({
        restart: isUnknown(rulesRaw) ? rulesRaw : restart,
        rules,
        path: join(join(specPath, key), i),
      });
    });
  }
  return out;
}
