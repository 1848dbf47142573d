import { isWithin, normalizeHostPath } from "../paths";
import { isUnknown } from "../workload";
import { hostMounts } from "./disallow-runtime-socket";
import { label, unchecked, violation } from "./helpers";
import { defineRule, type Finding } from "./types";

/** Extended resources that are devices (GPUs, TPUs, FPGAs, passthrough). */
const DEVICE_RESOURCE = /(?:gpu|tpu|fpga|vfio|dri|kvm|tun|nvidia|amd\.com|intel\.com|xilinx|habana|neuron)/i;

/** No host device reaches a task: Docker `devices`/`deviceRequests`/`gpus`, Kubernetes device hostPaths and GPUs. */
export const disallowDevices = defineRule({
  id: "sandbox-disallow-devices",
  description:
    "No container gets a host device (devices, GPUs, device cgroup rules, raw block volumes, /dev host paths).",
  mission: false,
  enforcementLevel: "mandatory",
  severity: "high",
  crosswalk: { cis: ["5.18"], psa: ["hostPathVolumes"], kyverno: ["disallow-host-path"] },
  subjects: ["workload"],
  configSchema: {
    properties: {
      allowGpu: {
        type: "boolean",
        description: "Allow GPU requests (Docker gpus/deviceRequests, Kubernetes */gpu limits).",
        default: false,
      },
    },
  },
  defaults: { allowGpu: false },
  remediationSteps:
    "Remove the device; a template that needs a GPU must say so and the pack config must set allowGpu.",
  check(s, config) {
    if (s.subject !== "workload") return [];
    const out: Finding[] = [];
    if (!config.allowGpu)
      for (const d of s.deviceRequests) out.push(violation(`the workload requests host devices (${d})`));
    for (const c of s.containers) {
      for (const d of c.devices) {
        if (isUnknown(d)) out.push(unchecked(`a device of ${label(c)}`, c.path, d));
        else if (d !== undefined) out.push(violation(`${label(c)} gets the host device ${d}`, c.path));
      }
      if (!config.allowGpu) {
        for (const r of c.extendedResources) {
          if (DEVICE_RESOURCE.test(r))
            out.push(violation(`${label(c)} requests the device resource ${r}`, c.path));
        }
      }
      for (const m of hostMounts(c.mounts)) {
        const t = typeof m.hostPathType === "string" ? m.hostPathType.trim().toLowerCase() : undefined;
        const p = typeof m.source === "string" ? normalizeHostPath(m.source) : undefined;
        if (t === "chardevice" || t === "blockdevice")
          out.push(
            violation(
              `${label(c)} mounts the host device ${typeof m.source === "string" ? m.source : "?"}`,
              m.path,
            ),
          );
        else if (p !== undefined && p !== "/dev" && isWithin(p, "/dev"))
          out.push(violation(`${label(c)} mounts the host device path ${p}`, m.path));
      }
    }
    return out;
  },
});
