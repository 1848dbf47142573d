import { isWithin, normalizeHostPath } from "../paths";
import { isUnknown } from "../workload";
import { hostMounts } from "./disallow-runtime-socket";
import { label, unchecked, violation } from "./helpers";
import { defineRule, type Finding } from "./types";

/** Extended resources that are GPUs and accelerators: what `allowGpu` lets through. */
const DEVICE_RESOURCE = /(?:gpu|tpu|fpga|vfio|dri|kvm|tun|nvidia|amd\.com|intel\.com|xilinx|habana|neuron)/i;

/**
 * The variables a GPU vendor's container runtime hook reads from the container's environment to hand it devices
 * (nvidia-container-toolkit: `NVIDIA_VISIBLE_DEVICES=all|<ids>`; the AMD container toolkit: `AMD_VISIBLE_DEVICES`).
 * `void`, `none` and the empty value hand over none.
 */
const GPU_ENV = new Set(["NVIDIA_VISIBLE_DEVICES", "AMD_VISIBLE_DEVICES"]);
const NO_GPU = new Set(["", "void", "none"]);

/**
 * A runtime that is a GPU vendor's (Docker `runtime: nvidia`; the RuntimeClass `nvidia` the GPU operator creates):
 * it hands the container the GPUs its environment names, and the CUDA images name every one by default.
 */
const GPU_RUNTIME = /(?:^|[-_.])(?:nvidia|amd)(?:$|[-_.])/i;

/** No host device reaches a task: Docker `devices`/`deviceRequests`/`gpus`, Kubernetes device hostPaths and GPUs. */
export const disallowDevices = defineRule({
  id: "sandbox-disallow-devices",
  description:
    "No container gets a host device (devices, GPUs, extended resources, DRA claims, device cgroup rules, raw block volumes, /dev host paths).",
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
      allowedResources: {
        type: "array",
        items: { type: "string" },
        description:
          "Kubernetes extended resources (example.com/dongle) a container may request: every other one is served by a device plugin or DRA driver that can put host devices and files into the container.",
        default: [],
      },
      allowResourceClaims: {
        type: "boolean",
        description:
          "Allow Dynamic Resource Allocation claims (spec.resourceClaims), whose driver injects the claimed device into the containers that name it.",
        default: false,
      },
    },
  },
  defaults: { allowGpu: false, allowedResources: [] as string[], allowResourceClaims: false },
  remediationSteps:
    "Remove the device; a template that needs a GPU must say so and the pack config must set allowGpu.",
  check(s, config) {
    if (s.subject !== "workload") return [];
    const out: Finding[] = [];
    if (!config.allowGpu) {
      for (const d of s.deviceRequests) out.push(violation(`the workload requests host devices (${d})`));
      for (const d of s.deviceRequestsUnknown ?? []) out.push(unchecked(d));
      if (typeof s.runtimeClass === "string" && GPU_RUNTIME.test(s.runtimeClass.trim()))
        out.push(
          violation(
            `the workload runs under the GPU runtime ${s.runtimeClass.trim()}, which hands it the GPUs its environment names (the CUDA images name all of them)`,
          ),
        );
      for (const c of s.containers)
        for (const e of c.env) {
          if (typeof e.name !== "string" || !GPU_ENV.has(e.name)) continue;
          if (isUnknown(e.value)) out.push(unchecked(`${e.name} of ${label(c)}`, e.path, e.value));
          else if (e.from !== "literal")
            out.push(
              violation(
                `${label(c)} takes ${e.name}, which a GPU runtime hook reads to put host GPUs into the container, from ${e.from}: a value the policy cannot read`,
                e.path,
              ),
            );
          else if (typeof e.value === "string" && !NO_GPU.has(e.value.trim().toLowerCase()))
            out.push(
              violation(
                `${label(c)} sets ${e.name}=${e.value}, which a GPU runtime hook reads to put those host GPUs into the container`,
                e.path,
              ),
            );
        }
    }
    // A GPU allowance is for GPU requests: a device cgroup rule opens device numbers (`a *:* rwm`: all of them).
    for (const d of s.deviceCgroupRules ?? [])
      out.push(
        violation(`the workload opens host devices in its device cgroup (${d}), whatever allowGpu says`),
      );
    if (!config.allowResourceClaims)
      for (const d of s.resourceClaims ?? [])
        out.push(
          violation(
            `the pod requests a device through Dynamic Resource Allocation (${d}): the claim's driver prepares the device on the node and the runtime puts it into the containers that name the claim`,
            s.podPath,
          ),
        );
    for (const c of s.containers) {
      for (const d of c.devices) {
        if (isUnknown(d)) out.push(unchecked(`a device of ${label(c)}`, c.path, d));
        else if (d !== undefined) out.push(violation(`${label(c)} gets the host device ${d}`, c.path));
      }
      for (const r of c.extendedResources) {
        if (config.allowedResources.includes(r) || (config.allowGpu && DEVICE_RESOURCE.test(r))) continue;
        out.push(
          violation(
            DEVICE_RESOURCE.test(r)
              ? `${label(c)} requests the device resource ${r}`
              : `${label(c)} requests the extended resource ${r}: a device plugin or DRA driver serves it and can put host devices and files into the container (allow it by name in allowedResources)`,
            c.path,
          ),
        );
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
