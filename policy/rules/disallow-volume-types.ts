import { csiDriverClass } from "../sources/kubernetes/csi-drivers";
import { isUnknown, type Val } from "../workload";
import { showList, unchecked, violation } from "./helpers";
import { defineRule, type Finding } from "./types";

/**
 * The inline volume sources Pod Security restricted allows (k8s.io/pod-security-admission
 * policy/check_restrictedVolumes.go): the kubelet builds them from the pod's own objects or a CSI driver.
 */
export const PSA_RESTRICTED_VOLUMES: readonly string[] = [
  "configMap",
  "csi",
  "downwardAPI",
  "emptyDir",
  "ephemeral",
  "image",
  "persistentVolumeClaim",
  "projected",
  "secret",
];

/** Why a source the restricted level refuses is dangerous here, for the message. */
function why(source: string): string {
  if (
    ["nfs", "iscsi", "rbd", "cephfs", "glusterfs", "fc", "quobyte", "scaleIO", "storageos"].includes(source)
  )
    return "the node's kernel mounts it over the node's network, outside the pod's network policy and egress walls";
  if (source === "flexVolume") return "the node runs the driver's program as root on the host";
  if (source === "gitRepo") return "the kubelet runs git on the host to fill it";
  if (source === "hostPath") return "it exposes a host folder (Pod Security forbids every hostPath)";
  return "Pod Security restricted does not allow it";
}

/**
 * An inline CSI volume judged by its driver (sources/kubernetes/csi-drivers.ts): a network file system is refused like
 * `nfs`, a host-path driver like `hostPath`, a driver no table knows fails closed; `allowedCsiDrivers` names
 * exceptions.
 */
function csiFinding(
  driver: Val<string> | undefined,
  name: string,
  path: string,
  allowedDrivers: readonly string[],
): Finding | undefined {
  if (isUnknown(driver)) return unchecked(`the CSI driver of volume${name}`, path, driver);
  const d = driver ?? "";
  if (allowedDrivers.includes(d)) return undefined;
  const kind = csiDriverClass(d);
  if (kind === "safe") return undefined;
  const why =
    kind === "network"
      ? "it mounts a network file system or object store on the node, over the node's network, outside the pod's network policy and egress walls (as an nfs volume)"
      : kind === "host"
        ? "it hands the pod a folder or disk of the node itself (as a hostPath volume)"
        : "the policy does not know what this driver mounts, so it fails closed";
  return violation(
    `volume${name} is a csi volume of driver ${JSON.stringify(d)}: ${why}; name the driver in allowedCsiDrivers to allow it`,
    path,
  );
}

/**
 * Pod volumes are only of the kinds Pod Security restricted allows: configMap, csi, downwardAPI, emptyDir,
 * ephemeral, image, persistentVolumeClaim, projected, secret. A `hostPath` is left to the host-mount rules (one
 * job folder may be allowed) unless `allowHostPath` is false, as the baseline and restricted presets set it.
 */
export const disallowVolumeTypes = defineRule({
  id: "sandbox-disallow-volume-types",
  description:
    "Pod volumes are only of the kinds Pod Security restricted allows, so the node mounts no network storage and runs no volume program for a task.",
  mission: false,
  enforcementLevel: "mandatory",
  severity: "high",
  crosswalk: {
    psa: ["restrictedVolumes", "hostPathVolumes"],
    kyverno: ["restrict-volume-types", "disallow-host-path"],
  },
  subjects: ["workload"],
  configSchema: {
    properties: {
      allowed: {
        type: "array",
        items: { type: "string" },
        description:
          "Volume source kinds a pod may use (the key under spec.volumes[], exact). Default: Pod Security restricted's list.",
        default: [...PSA_RESTRICTED_VOLUMES],
      },
      allowedCsiDrivers: {
        type: "array",
        items: { type: "string" },
        description:
          "CSI drivers an inline `csi` volume may name besides the known-safe ones (csi.cert-manager.io; secrets-store.csi.k8s.io, judged by the secret rules), exact. A network file-system or host-path driver, and any driver not known, is refused unless named here. Default: none.",
        default: [],
      },
      allowHostPath: {
        type: "boolean",
        description:
          "Leave hostPath volumes to the host-mount rules (true, default) or refuse every one, as Pod Security baseline does (false; the baseline and restricted presets set it).",
        default: true,
      },
    },
  },
  defaults: {
    allowed: [...PSA_RESTRICTED_VOLUMES] as string[],
    allowHostPath: true,
    allowedCsiDrivers: [] as string[],
  },
  remediationSteps:
    "Use an emptyDir, a configMap or secret, or a persistentVolumeClaim bound by the cluster's administrator instead of the inline volume source.",
  check(s, config) {
    if (s.subject !== "workload" || s.podVolumes === undefined) return [];
    if (isUnknown(s.podVolumes)) return [unchecked("the pod's volumes", s.podPath, s.podVolumes)];
    const out: Finding[] = [];
    for (const v of s.podVolumes) {
      const name = typeof v.name === "string" ? ` "${v.name}"` : "";
      if (isUnknown(v.sources)) {
        out.push(unchecked(`the source of volume${name}`, v.path, v.sources));
        continue;
      }
      const bad = (v.sources ?? []).filter(
        (k) => !config.allowed.includes(k) && !(k === "hostPath" && config.allowHostPath),
      );
      if ((v.sources ?? []).includes("csi") && !bad.includes("csi")) {
        const f = csiFinding(v.csiDriver, name, `${v.path}.csi.driver`, config.allowedCsiDrivers);
        if (f !== undefined) out.push(f);
      }
      for (const k of bad)
        out.push(
          violation(
            `volume${name} is a ${k} volume, outside the allowed kinds ${showList(config.allowed)}: ${why(k)}`,
            `${v.path}.${k}`,
          ),
        );
    }
    return out;
  },
});
