import { type ContainerView, isUnknown, type Val } from "../workload";
import { label, unchecked, violation } from "./helpers";
import { defineRule, type Finding } from "./types";

/** PSA baseline's SELinux types: the ones a container runtime uses for ordinary containers. */
const PSA_SELINUX_TYPES = ["container_t", "container_init_t", "container_kvm_t", "container_engine_t"];

/** True when a container's SELinux options are the pod's (it inherits them, and is judged with them). */
function sameSeLinux(
  c: ContainerView["seLinux"],
  p: { type: unknown; user: unknown; role: unknown },
): boolean {
  return !isUnknown(c) && c !== undefined && c.type === p.type && c.user === p.user && c.role === p.role;
}

/** An AppArmor annotation value Pod Security baseline allows. */
function allowedAppArmorAnnotation(v: string): boolean {
  return v === "" || v === "runtime/default" || v.startsWith("localhost/");
}

/**
 * What is wrong with SELinux options, compared as Pod Security compares them: the type exactly one of the allowed
 * (or empty), user and role empty. No trim: ` container_t` is not `container_t` to the policy or to SELinux.
 */
function seLinuxProblems(
  who: string,
  se: {
    readonly type?: Val<string>;
    readonly user?: Val<string>;
    readonly role?: Val<string>;
  },
  path: string,
  allowed: readonly string[],
): Finding[] {
  const out: Finding[] = [];
  for (const k of ["type", "user", "role"] as const) {
    const v = se[k];
    if (isUnknown(v)) out.push(unchecked(`the SELinux ${k} of ${who}`, path, v));
  }
  if (typeof se.type === "string" && se.type !== "" && !allowed.includes(se.type))
    out.push(
      violation(
        `${who} sets SELinux type ${JSON.stringify(se.type)}, which is not a confined container type`,
        path,
      ),
    );
  for (const k of ["user", "role"] as const) {
    const v = se[k];
    if (typeof v === "string" && v !== "")
      out.push(violation(`${who} sets the SELinux ${k} ${JSON.stringify(v)}`, path));
  }
  return out;
}

/**
 * AppArmor and SELinux stay on: no AppArmor `Unconfined` (field, old annotation, Docker `apparmor=unconfined`), no
 * Docker `label=disable`, no SELinux type outside the container types (`spc_t` is unconfined), no SELinux user/role.
 */
export const disallowUnconfinedLsm = defineRule({
  id: "sandbox-disallow-unconfined-lsm",
  description: "No container disables AppArmor or SELinux confinement.",
  mission: false,
  enforcementLevel: "mandatory",
  severity: "high",
  crosswalk: {
    cis: ["5.2", "5.3"],
    psa: ["appArmorProfile", "seLinuxOptions"],
    kyverno: ["restrict-apparmor-profiles", "disallow-selinux"],
    kubesec: ["ApparmorAny"],
  },
  subjects: ["workload"],
  configSchema: {
    properties: {
      judgePodLevel: {
        type: "boolean",
        description:
          "Judge the pod's own securityContext values even where every container overrides them, as Pod Security does (the baseline, restricted and sandbox presets set it).",
        default: false,
      },
      allowedSeLinuxTypes: {
        type: "array",
        items: { type: "string" },
        description: "SELinux types a container may set. Defaults to the PSA baseline list.",
        default: PSA_SELINUX_TYPES,
      },
    },
  },
  defaults: { allowedSeLinuxTypes: PSA_SELINUX_TYPES, judgePodLevel: false },
  remediationSteps:
    "Remove `apparmor=unconfined` / `label=disable` (Docker) or the Unconfined AppArmor profile and custom SELinux options (Kubernetes).",
  check(s, config) {
    if (s.subject !== "workload") return [];
    const out: Finding[] = [];
    const pod = s.pod;
    // The pod's own values are judged by themselves, as Pod Security does: they apply to the pod sandbox and to
    // every container that does not override them.
    if (pod !== undefined && config.judgePodLevel) {
      if (pod.appArmor === "Unconfined" && s.containers.every((c) => c.appArmor !== "Unconfined"))
        out.push(violation("the pod's securityContext sets appArmorProfile Unconfined", pod.path));
      const podSe = pod.seLinux;
      if (isUnknown(podSe)) out.push(unchecked("the pod's SELinux options", pod.path, podSe));
      else if (podSe !== undefined && !s.containers.some((c) => sameSeLinux(c.seLinux, podSe)))
        out.push(
          ...seLinuxProblems("the pod's securityContext", podSe, pod.path, config.allowedSeLinuxTypes),
        );
      const names = new Set(s.containers.map((c) => c.name));
      for (const a of pod.appArmorAnnotations) {
        if (names.has(a.key.slice(a.key.indexOf("/") + 1))) continue; // judged with its container
        if (isUnknown(a.value))
          out.push(unchecked(`the annotation ${a.key}`, "metadata.annotations", a.value));
        else if (typeof a.value === "string" && !allowedAppArmorAnnotation(a.value))
          out.push(
            violation(
              `the annotation ${a.key} is ${JSON.stringify(a.value)}: Pod Security allows only runtime/default and localhost/<profile>`,
              "metadata.annotations",
            ),
          );
      }
    }
    for (const c of s.containers) {
      if (c.appArmor === "Unconfined")
        out.push(violation(`${label(c)} runs with AppArmor disabled (${c.appArmorSource})`, c.path));
      else if (isUnknown(c.appArmor))
        out.push(unchecked(`the AppArmor profile of ${label(c)}`, c.path, c.appArmor));
      const se = c.seLinux;
      if (isUnknown(se)) {
        out.push(unchecked(`the SELinux options of ${label(c)}`, c.path, se));
        continue;
      }
      if (se === undefined) continue;
      if (se.disabled) {
        out.push(violation(`${label(c)} disables SELinux labeling (label=disable)`, c.path));
        continue;
      }
      out.push(...seLinuxProblems(label(c), se, c.path, config.allowedSeLinuxTypes));
    }
    return out;
  },
});
