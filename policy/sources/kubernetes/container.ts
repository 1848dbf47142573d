/**
 * One Kubernetes container -> its view: security settings inherited from the pod (security.ts), resources,
 * environment, command, mounts of the pod's volumes, ports and probes, each with where it is written.
 */

import { parseQuantity } from "../../quantity";
import {
  type ArgView,
  type ContainerView,
  type EnvView,
  type FileTextView,
  isUnknown,
  type MountView,
  type PortView,
  UNKNOWN,
  type Val,
} from "../../workload";
import { capabilitiesView } from "../capabilities";
import {
  at,
  bool,
  carriesSecret,
  entries,
  field,
  isObj,
  items,
  join,
  list,
  num,
  str,
  strList,
  type TaintCheck,
} from "../lenient";
import { downwardValue } from "./downward";
import { execHooks, hookParts, hostProbes } from "./hooks";
import { containerProfiles, inherit, type PodSecurity, runAsGroupOf } from "./security";

/** A pod volume, by name, as the containers that mount it see it. */
export interface PodVolume {
  readonly type: MountView["type"];
  readonly hostPath: Val<string>;
  readonly hostPathType: Val<string>;
  readonly projectedSources: string[];
  readonly tokenAudiences?: MountView["tokenAudiences"];
  /** Files of a downward-API volume (or projected source) that hold the pod's annotations or labels. */
  readonly downwardFiles?: readonly {
    readonly file: Val<string>;
    readonly content: Val<string>;
    readonly path: string;
  }[];
  readonly path: string;
}

/**
 * The files a `downwardAPI` volume or projected source writes from the pod's annotations and labels, as the kubelet
 * writes them (pkg/volume/downwardapi CollectData: each item's `fieldRef` through ExtractFieldPathAsString, the
 * same reading as an env var's fieldRef, see ./downward.ts). Other fields (the pod's name, resources) are not text
 * an author wrote.
 */
function downwardFiles(
  source: unknown,
  sourcePath: string,
  meta: unknown,
): { file: Val<string>; content: Val<string>; path: string }[] {
  const out: { file: Val<string>; content: Val<string>; path: string }[] = [];
  items(field(source, "items")).forEach((item, i) => {
    const fieldPath = str(field(field(item, "fieldRef"), "fieldPath"));
    const content =
      downwardValue(fieldPath, "annotations", field(meta, "annotations")) ??
      downwardValue(fieldPath, "labels", field(meta, "labels"));
    if (content !== undefined)
      out.push({ file: str(field(item, "path")), content, path: join(join(sourcePath, "items"), i) });
  });
  return out;
}

/** The pod's volumes by name (`spec.volumes`), with what each exposes; `meta` is the pod's own metadata. */
export function podVolumes(spec: unknown, specPath: string, meta?: unknown): Map<string, PodVolume> {
  const out = new Map<string, PodVolume>();
  items(field(spec, "volumes")).forEach((v, i) => {
    const name = str(field(v, "name"));
    if (typeof name !== "string") return;
    const path = join(join(specPath, "volumes"), i);
    const hp = field(v, "hostPath");
    if (hp !== undefined) {
      out.set(name, {
        type: "hostPath",
        hostPath: isUnknown(hp) ? hp : str(field(hp, "path")),
        hostPathType: str(field(hp, "type")),
        projectedSources: [],
        path,
      });
      return;
    }
    const projected = field(v, "projected");
    // The Secrets Store CSI driver mounts secrets from an external vault: a Secret volume by another road.
    const csiDriver = str(field(field(v, "csi"), "driver"));
    const secretsStore = typeof csiDriver === "string" && csiDriver.trim() === "secrets-store.csi.k8s.io";
    const kind: MountView["type"] =
      field(v, "emptyDir") !== undefined
        ? "emptyDir"
        : field(v, "secret") !== undefined || secretsStore
          ? "secret"
          : field(v, "configMap") !== undefined
            ? "configMap"
            : projected !== undefined
              ? "projected"
              : "volume";
    const projectedSources = items(field(projected, "sources")).flatMap((s) =>
      isObj(s) ? Object.keys(s) : [],
    );
    const files = [
      ...downwardFiles(field(v, "downwardAPI"), join(path, "downwardAPI"), meta),
      ...items(field(projected, "sources")).flatMap((s, j) =>
        downwardFiles(
          field(s, "downwardAPI"),
          join(join(join(path, "projected"), "sources"), j) + ".downwardAPI",
          meta,
        ),
      ),
    ];
    const tokenAudiences: NonNullable<MountView["tokenAudiences"]> = items(
      field(projected, "sources"),
    ).flatMap((s, j) => {
      const sat = field(s, "serviceAccountToken");
      const at = `${join(join(join(path, "projected"), "sources"), j)}.serviceAccountToken`;
      return sat === undefined ? [] : [{ audience: str(field(sat, "audience")), path: `${at}.audience` }];
    });
    out.set(name, {
      type: kind,
      hostPath: undefined,
      hostPathType: undefined,
      projectedSources,
      ...(tokenAudiences.length === 0 ? {} : { tokenAudiences }),
      ...(files.length === 0 ? {} : { downwardFiles: files }),
      path,
    });
  });
  return out;
}

function joinSubPath(hostPath: Val<string>, subPath: Val<string>): Val<string> {
  if (isUnknown(hostPath)) return hostPath;
  if (hostPath === undefined) return undefined;
  if (isUnknown(subPath)) return hostPath; // the folder itself is what could be exposed
  return subPath === undefined || subPath.trim() === "" ? hostPath : `${hostPath}/${subPath}`;
}

function containerMounts(
  c: unknown,
  cPath: string,
  volumes: Map<string, PodVolume>,
  used: Set<string>,
  tainted: TaintCheck,
): { mounts: MountView[]; unknown: boolean; files: FileTextView[] } {
  const l = list(field(c, "volumeMounts"));
  if (isUnknown(l)) return { mounts: [], unknown: true, files: [] };
  const mounts: MountView[] = [];
  const files: FileTextView[] = [];
  (l ?? []).forEach((m, i) => {
    const path = join(join(cPath, "volumeMounts"), i);
    const name = str(field(m, "name"));
    const vol = typeof name === "string" ? volumes.get(name) : undefined;
    if (typeof name === "string") used.add(name);
    const subPath = field(m, "subPathExpr") !== undefined ? UNKNOWN : str(field(m, "subPath"));
    const target = str(field(m, "mountPath"));
    for (const f of vol?.downwardFiles ?? [])
      files.push({
        file: typeof target === "string" && typeof f.file === "string" ? `${target}/${f.file}` : f.file,
        content: f.content,
        tainted: false,
        path: f.path,
      });
    mounts.push({
      type: isUnknown(name) ? "other" : (vol?.type ?? "other"),
      source: vol?.type === "hostPath" ? joinSubPath(vol.hostPath, subPath) : undefined,
      target,
      readOnly: bool(field(m, "readOnly")),
      propagation: str(field(m, "mountPropagation")),
      hostPathType: vol?.hostPathType,
      projectedSources: vol?.projectedSources,
      ...(vol?.tokenAudiences === undefined ? {} : { tokenAudiences: vol.tokenAudiences }),
      volume: typeof name === "string" ? name : undefined,
      tainted: tainted(path),
      path,
    });
  });
  return { mounts, unknown: false, files };
}

function containerEnv(
  c: unknown,
  cPath: string,
  tainted: TaintCheck,
  annotations?: unknown,
): { env: EnvView[]; unknown: boolean } {
  const env: EnvView[] = [];
  let unknown = false;
  const l = list(field(c, "env"));
  if (isUnknown(l)) unknown = true;
  (isUnknown(l) ? [] : (l ?? [])).forEach((e, i) => {
    const path = join(join(cPath, "env"), i);
    const valueFrom = field(e, "valueFrom");
    let value = str(field(e, "value"));
    let from: EnvView["from"] = "literal";
    let ref: Val<string>;
    let key: Val<string>;
    if (isUnknown(valueFrom)) from = "other";
    else if (valueFrom !== undefined) {
      const secretRef = field(valueFrom, "secretKeyRef");
      if (secretRef !== undefined) {
        from = "secretKeyRef";
        ref = str(field(secretRef, "name"));
      } else if (field(valueFrom, "configMapKeyRef") !== undefined) {
        // Which ConfigMap key: judged with the ConfigMap where the input has it (policy/stack/linked-credentials.ts).
        from = "configMapKeyRef";
        ref = str(at(valueFrom, "configMapKeyRef.name"));
        key = str(at(valueFrom, "configMapKeyRef.key"));
      } else if (field(valueFrom, "fieldRef") !== undefined) {
        // The kubelet copies an annotation's text into the variable: judge that text (see ./downward.ts).
        from = "fieldRef";
        ref = str(field(field(valueFrom, "fieldRef"), "fieldPath"));
        value = downwardValue(ref, "annotations", annotations);
      } else if (field(valueFrom, "resourceFieldRef") !== undefined) from = "fieldRef";
      else from = "other";
    }
    env.push({
      name: str(field(e, "name")),
      value,
      from,
      ref,
      ...(key === undefined ? {} : { key }),
      tainted: tainted(path) || carriesSecret(value),
      path,
    });
  });
  const ef = list(field(c, "envFrom"));
  if (isUnknown(ef)) unknown = true;
  (isUnknown(ef) ? [] : (ef ?? [])).forEach((e, i) => {
    const path = join(join(cPath, "envFrom"), i);
    const secretRef = field(e, "secretRef");
    const cmRef = field(e, "configMapRef");
    if (secretRef !== undefined) {
      env.push({
        name: undefined,
        value: undefined,
        from: "secretRef",
        ref: str(field(secretRef, "name")),
        tainted: tainted(path),
        path,
      });
    } else if (cmRef !== undefined) {
      env.push({
        name: undefined,
        value: undefined,
        from: "configMapRef",
        ref: str(field(cmRef, "name")),
        key: str(field(e, "prefix")),
        tainted: tainted(path),
        path,
      });
    } else if (isUnknown(e)) {
      env.push({ name: UNKNOWN, value: UNKNOWN, from: "other", tainted: tainted(path), path });
    }
  });
  return { env, unknown };
}

function containerArgs(c: unknown, cPath: string, tainted: TaintCheck): ArgView[] {
  const out: ArgView[] = [];
  for (const key of ["command", "args"]) {
    const base = join(cPath, key);
    const l = list(field(c, key));
    if (isUnknown(l)) {
      out.push({ value: UNKNOWN, tainted: tainted(base), path: base });
      continue;
    }
    (l ?? []).forEach((a, i) => {
      const path = join(base, i);
      const value = str(a);
      out.push({
        value,
        tainted: tainted(path) || carriesSecret(value),
        path,
      });
    });
  }
  return out;
}

function containerPorts(c: unknown, cPath: string): { ports: PortView[]; unknown: boolean } {
  const l = list(field(c, "ports"));
  if (isUnknown(l)) return { ports: [], unknown: true };
  return {
    ports: (l ?? []).map((p, i) => {
      const hostPort = num(field(p, "hostPort"));
      // With hostNetwork every port is on the host; the exposure rule reports hostNetwork once instead.
      const published: Val<boolean> = isUnknown(hostPort) ? hostPort : hostPort !== undefined && hostPort > 0;
      return {
        containerPort: num(field(p, "containerPort")),
        hostPort,
        hostIp: str(field(p, "hostIP")),
        published,
        path: join(join(cPath, "ports"), i),
      };
    }),
    unknown: false,
  };
}

/** A quantity (`500m`, `1Gi`) in its base unit; unknown and unreadable values stay as they are. */
export function quantity(v: unknown): Val<number> {
  if (isUnknown(v)) return v;
  return parseQuantity(v);
}

const NOT_EXTENDED = /^(?:cpu|memory|ephemeral-storage|storage|pods|hugepages-.*)$/;

/**
 * One container of a pod (`role` says which list it is in) at `cPath`: `volumes` are the pod's, and `used` collects
 * the names of those it mounts.
 */
export function adaptContainer(
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
  const { mounts, unknown: mountsUnknown, files } = containerMounts(c, cPath, volumes, used, tainted);
  const hooks = hookParts(c, cPath, tainted);
  // Ephemeral containers may not declare ports or resources (the API refuses them), so they are not read.
  const { ports, unknown: portsUnknown } =
    role === "ephemeral" ? { ports: [], unknown: false } : containerPorts(c, cPath);
  const seLinuxRaw = inherit(field(sc, "seLinuxOptions"), pod.seLinux);
  const extended = [...entries(limits), ...entries(requests)]
    .map(([k]) => k)
    .filter((k, i, all) => !NOT_EXTENDED.test(k) && all.indexOf(k) === i);
  const runAsUser = inherit(num(field(sc, "runAsUser")), pod.runAsUser);
  const runAsNonRoot = inherit(bool(field(sc, "runAsNonRoot")), pod.runAsNonRoot);
  return {
    name: cname,
    role,
    image: str(field(c, "image")),
    privileged: bool(field(sc, "privileged")),
    allowPrivilegeEscalation: bool(field(sc, "allowPrivilegeEscalation")),
    capabilities: capabilitiesView(strList(field(caps, "add")), strList(field(caps, "drop")), "kubernetes"),
    runAsUser,
    runAsGroup: runAsGroupOf(runAsUser, inherit(num(field(sc, "runAsGroup")), pod.runAsGroup), runAsNonRoot),
    runAsNonRoot,
    userName: undefined,
    extraGroups: pod.groups,
    readOnlyRootFilesystem: bool(field(sc, "readOnlyRootFilesystem")),
    ...containerProfiles(sc, cname, cPath, pod, annotations),
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
    hostProcess: bool(at(sc, "windowsOptions.hostProcess")),
    windowsUserName: inherit(str(at(sc, "windowsOptions.runAsUserName")), pod.windowsUserName),
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
    hostProbes: hostProbes(c, cPath),
    execHooks: execHooks(c, cPath),
    hookCommands: hooks.commands,
    hookHeaders: hooks.headers,
    fileTexts: files,
    path: cPath,
  };
}
