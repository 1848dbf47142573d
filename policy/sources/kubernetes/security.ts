/**
 * Kubernetes security settings as the kubelet applies them: a pod's `securityContext` read once, and each
 * container's value taken from its own `securityContext`, else its annotation, else the pod's.
 */
import { isUnknown, type PodLevelView, type ProfileType, Unreadable, type Val } from "../../workload";
import { at, bool, entries, field, join, list, num, str } from "../lenient";
import { type WindowsPin, windowsPin } from "./windows";

function withWindows(pin: WindowsPin | undefined): { windows?: WindowsPin } {
  return pin === undefined ? {} : { windows: pin };
}

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
export function inherit<T>(container: Val<T>, pod: Val<T>): Val<T> {
  return container !== undefined ? container : pod;
}

/** What a pod's `securityContext` (and its seccomp annotation) gives every container that does not say. */
export interface PodSecurity {
  readonly runAsUser: Val<number>;
  readonly runAsGroup: Val<number>;
  readonly runAsNonRoot: Val<boolean>;
  readonly seccomp: Val<ProfileType>;
  /** The pod field's `localhostProfile` (a file under the kubelet's seccomp root). */
  readonly seccompLocalhost: unknown;
  readonly seccompAnnotation: Val<ProfileType>;
  readonly appArmor: Val<ProfileType>;
  /** The pod field's `localhostProfile`: the name of an AppArmor profile loaded on the node. */
  readonly appArmorLocalhost: unknown;
  readonly seLinux: unknown;
  /** `supplementalGroups` then `fsGroup`: groups every container's process gets. */
  readonly groups: Val<readonly Val<string | number>[]>;
  /** `windowsOptions.runAsUserName`: the user of every container that names none, on a Windows node. */
  readonly windowsUserName: Val<string>;
}

/** Reads a pod spec's `securityContext`, with the pod's annotations (for the old seccomp annotation). */
export function podSecurity(spec: unknown, annotations: unknown): PodSecurity {
  const psc = field(spec, "securityContext");
  const supplemental = list(field(psc, "supplementalGroups"));
  const fsGroup = num(field(psc, "fsGroup"));
  return {
    runAsUser: num(field(psc, "runAsUser")),
    runAsGroup: num(field(psc, "runAsGroup")),
    runAsNonRoot: bool(field(psc, "runAsNonRoot")),
    seccomp: fieldProfile(field(psc, "seccompProfile")),
    seccompLocalhost: field(field(psc, "seccompProfile"), "localhostProfile"),
    seccompAnnotation: annotationProfile(str(field(annotations, SECCOMP_POD_ANNOTATION))),
    appArmor: fieldProfile(field(psc, "appArmorProfile")),
    appArmorLocalhost: field(field(psc, "appArmorProfile"), "localhostProfile"),
    seLinux: field(psc, "seLinuxOptions"),
    windowsUserName: str(at(psc, "windowsOptions.runAsUserName")),
    groups: isUnknown(supplemental)
      ? supplemental
      : [
          ...(supplemental ?? []).map((g): Val<number> => (isUnknown(g) ? g : num(g))),
          ...(fsGroup === undefined ? [] : [fsGroup as Val<number>]),
        ],
  };
}

/**
 * A container's effective seccomp and AppArmor profiles, each with where the winning value is written. Seccomp: the
 * container's field, else the pod's field; the old annotations only where neither field is set, as the kubelet
 * ignores them since v1.27 (a stale annotation never outranks a field; alone it counts as no profile, which the
 * seccomp rule refuses).
 */
export function containerProfiles(
  sc: unknown,
  cname: string,
  cPath: string,
  pod: PodSecurity,
  annotations: unknown,
): {
  seccomp: Val<ProfileType>;
  seccompSource: string;
  seccompLocalhost: unknown;
  appArmor: Val<ProfileType>;
  appArmorSource: string;
  appArmorLocalhost: unknown;
} {
  const seccompField = fieldProfile(field(sc, "seccompProfile"));
  const seccompAnn = annotationProfile(str(field(annotations, `${SECCOMP_CONTAINER_ANNOTATION}${cname}`)));
  const appArmorField = fieldProfile(field(sc, "appArmorProfile"));
  const appArmorAnn = annotationProfile(str(field(annotations, `${APPARMOR_CONTAINER_ANNOTATION}${cname}`)));
  return {
    seccomp: seccompField ?? pod.seccomp ?? seccompAnn ?? pod.seccompAnnotation,
    seccompSource:
      seccompField !== undefined
        ? join(cPath, "securityContext.seccompProfile")
        : pod.seccomp !== undefined
          ? "pod securityContext.seccompProfile"
          : seccompAnn !== undefined
            ? `annotation ${SECCOMP_CONTAINER_ANNOTATION}${cname}`
            : `annotation ${SECCOMP_POD_ANNOTATION}`,
    seccompLocalhost:
      seccompField !== undefined
        ? field(field(sc, "seccompProfile"), "localhostProfile")
        : pod.seccomp !== undefined
          ? pod.seccompLocalhost
          : undefined,
    appArmor: appArmorField ?? appArmorAnn ?? pod.appArmor,
    appArmorSource:
      appArmorField !== undefined
        ? join(cPath, "securityContext.appArmorProfile")
        : appArmorAnn !== undefined
          ? `annotation ${APPARMOR_CONTAINER_ANNOTATION}${cname}`
          : "pod securityContext.appArmorProfile",
    appArmorLocalhost:
      appArmorField !== undefined
        ? field(field(sc, "appArmorProfile"), "localhostProfile")
        : appArmorAnn !== undefined
          ? annotationLocalhost(str(field(annotations, `${APPARMOR_CONTAINER_ANNOTATION}${cname}`)))
          : pod.appArmorLocalhost,
  };
}

/**
 * The profile name of an AppArmor annotation `localhost/<name>`: the kubelet (and the API server, which copies the
 * annotation into the field since v1.30) takes what follows the prefix as the loaded profile's name.
 */
function annotationLocalhost(v: Val<string>): unknown {
  if (typeof v !== "string") return v;
  const s = v.trim();
  return s.toLowerCase().startsWith("localhost/") ? s.slice("localhost/".length) : undefined;
}

/** SELinux options as written: type, user and role, each untrimmed (Pod Security compares them exactly). */
export function seLinuxOptions(v: unknown): PodLevelView["seLinux"] {
  if (isUnknown(v) || v === undefined) return v;
  return { type: str(field(v, "type")), user: str(field(v, "user")), role: str(field(v, "role")) };
}

/** The pod's own securityContext (at `specPath`), with its AppArmor annotations for every container name. */
export function podLevel(
  spec: unknown,
  specPath: string,
  pod: PodSecurity,
  annotations: unknown,
): PodLevelView {
  const psc = field(spec, "securityContext");
  return {
    path: join(specPath, "securityContext"),
    runAsUser: pod.runAsUser,
    runAsNonRoot: pod.runAsNonRoot,
    hostProcess: bool(at(psc, "windowsOptions.hostProcess")),
    ...withWindows(windowsPin(spec, specPath)),
    seccomp: pod.seccomp,
    appArmor: pod.appArmor,
    seLinux: seLinuxOptions(pod.seLinux),
    appArmorAnnotations: entries(annotations)
      .filter(([k]) => k.startsWith(APPARMOR_CONTAINER_ANNOTATION))
      .map(([key, v]) => ({ key, value: str(v) })),
  };
}

/**
 * The group a container runs with. A uid with no `runAsGroup` (the container's or the pod's) is sent to the runtime
 * alone, and containerd's WithUserID takes the gid of the image's /etc/passwd entry for it, gid 0 (root) when the
 * image has none: the policy cannot see the image, so the group is unreadable and the root-group check fails closed,
 * as it does for a Docker `user` that names no group. With neither (`runAsNonRoot: true` alone) the image's USER
 * runs, and its group is the image's too (a USER with no group part takes it from the passwd entry, gid 0 when there
 * is none). Root (uid 0) and a container that states no user at all (refused for its uid) are left as they are.
 */
export function runAsGroupOf(uid: Val<number>, gid: Val<number>, nonRoot: Val<boolean>): Val<number> {
  if (gid !== undefined || isUnknown(uid) || uid === 0) return gid;
  if (uid === undefined)
    return nonRoot !== true
      ? gid
      : new Unreadable(
          "runAsNonRoot: true with no runAsUser and no runAsGroup (the container's or the pod's) runs the image's USER with the image's group, gid 0 (root) when its USER names no group and /etc/passwd has no entry for it; set runAsGroup",
        );
  return new Unreadable(
    `runAsUser ${uid} comes with no runAsGroup (the container's or the pod's), so the runtime takes the gid from the image's /etc/passwd, which is gid 0 (root) when the image has no entry for uid ${uid}; set runAsGroup`,
  );
}
