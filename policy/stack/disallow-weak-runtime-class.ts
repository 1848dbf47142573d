/**
 * A RuntimeClass is a name for a node's runtime handler (node.k8s.io: `handler`, `spec.runtimeHandler` in v1alpha1),
 * and the handler is what runs the pod. A class named as a sandboxed runtime (`gvisor`, `kata`...) that selects a
 * native handler (`runc`, `crun`, `youki`) would satisfy a rule or preset that asks for that name while its pods
 * run on the host's kernel. The kubelet looks the class up by name and runs the handler it says: so does this rule.
 * It needs every resource of one input set: a stack in the pack, every document scanned together in scan.
 */

import { unchecked, violation } from "../rules/helpers";
import { parseKubeType } from "../sources/kubernetes/sites";
import { at, str } from "../sources/lenient";
import { isUnknown } from "../workload";
import { defineStackRule, type StackFinding, type StackResource } from "./types";

interface Config {
  /** Class names that claim a sandboxed runtime, besides any `gvisor-*` and `kata-*` name. */
  readonly sandboxedNames: readonly string[];
  /** Handlers that run pods on the host's own kernel. */
  readonly nativeHandlers: readonly string[];
}

/** A RuntimeClass of any served version. */
export function isRuntimeClass(type: string): boolean {
  const t = parseKubeType(type);
  return t?.group === "node.k8s.io" && t.kind === "RuntimeClass";
}

function claimsSandbox(name: string, config: Config): boolean {
  return config.sandboxedNames.includes(name) || /^(gvisor|kata)-/.test(name);
}

/** The check, over any set of resources (the stack rule and the scan run it). */
export function checkRuntimeClasses(
  resources: readonly Pick<StackResource, "type" | "name" | "urn" | "props">[],
  config: Config,
): StackFinding[] {
  const out: StackFinding[] = [];
  for (const r of resources) {
    const t = parseKubeType(r.type);
    if (t === undefined || !isRuntimeClass(r.type)) continue;
    const metaName = str(at(r.props, "metadata.name"));
    const name = typeof metaName === "string" && metaName !== "" ? metaName : r.name;
    if (!claimsSandbox(name, config)) continue;
    const path = t.version === "v1alpha1" ? "spec.runtimeHandler" : "handler";
    const raw = at(r.props, path);
    const handler = str(raw);
    if (isUnknown(raw) || isUnknown(handler)) {
      out.push({ ...unchecked(`the handler of RuntimeClass "${name}"`, path, raw, handler), urn: r.urn });
      continue;
    }
    if (typeof handler !== "string") continue;
    if (config.nativeHandlers.includes(handler.trim())) {
      out.push({
        ...violation(
          `RuntimeClass "${name}" is named as a sandboxed runtime but selects the node's ${handler.trim()} handler: its pods run on the host's kernel`,
          path,
        ),
        urn: r.urn,
      });
    }
  }
  return out;
}

export const disallowWeakRuntimeClass = defineStackRule<Config>({
  id: "sandbox-disallow-weak-runtime-class",
  description:
    "No RuntimeClass named as a sandboxed runtime (gvisor, kata and their variants) selects a native handler (runc, crun, youki).",
  mission: false,
  enforcementLevel: "mandatory",
  severity: "high",
  // The weakness kyverno's restrict-runtimeClassName leaves: it trusts the class's name.
  crosswalk: { kyverno: ["restrict-runtimeClassName"] },
  configSchema: {
    properties: {
      sandboxedNames: {
        type: "array",
        items: { type: "string" },
        description:
          "RuntimeClass names that claim a sandboxed runtime, besides any gvisor-* and kata-* name.",
        default: ["gvisor", "runsc", "kata"],
      },
      nativeHandlers: {
        type: "array",
        items: { type: "string" },
        description: "Node runtime handlers that run pods on the host's kernel.",
        default: ["runc", "crun", "youki"],
      },
    },
  },
  defaults: { sandboxedNames: ["gvisor", "runsc", "kata"], nativeHandlers: ["runc", "crun", "youki"] },
  remediationSteps:
    "Point the RuntimeClass at the node's sandboxed handler (gVisor's runsc, a Kata handler), or give a native handler a name that does not claim a sandbox.",
  check(resources, config) {
    return checkRuntimeClasses(resources, config);
  },
});
