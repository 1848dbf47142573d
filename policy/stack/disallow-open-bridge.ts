/**
 * A Docker network's bridge options are the walls of every container on it: this rule refuses the options that
 * reach the host (policy/sources/docker/bridge.ts): open gateway modes, a bridge the host already has, inter-container
 * traffic switched back on, trusted host interfaces. It judges every `docker.Network` of the input set.
 */

import { unchecked, violation } from "../rules/helpers";
import { bridgeOptionProblems } from "../sources/docker/bridge";
import { field, items } from "../sources/lenient";
import { DOCKER_NETWORK_VERDICTS } from "../sources/pulumi/docker-objects";
import { refusedInputs } from "../sources/verdict";
import { isUnknown } from "../workload";
import { defineStackRule, type StackFinding, type StackResource } from "./types";

export const DOCKER_NETWORK_TYPE = "docker:index/network:Network";

/** The check, over any set of resources (the stack rule and the scan run it). */
export function checkBridgeOptions(
  resources: readonly Pick<StackResource, "type" | "name" | "urn" | "props">[],
): StackFinding[] {
  const out: StackFinding[] = [];
  for (const r of resources) {
    if (r.type !== DOCKER_NETWORK_TYPE) continue;
    const driver = field(r.props, "driver");
    // Bridge options mean something to the bridge driver only.
    const options =
      typeof driver === "string" && driver !== "" && driver !== "bridge"
        ? undefined
        : field(r.props, "options");
    if (isUnknown(options)) {
      out.push({ ...unchecked(`the options of network "${r.name}"`, "options", options), urn: r.urn });
      continue;
    }
    for (const p of bridgeOptionProblems(options))
      out.push({
        ...violation(`network "${r.name}": ${p.key}: ${p.reason}`, `options.${p.key}`),
        urn: r.urn,
      });
    // A network create body's fields that fail closed (policy/sources/docker/objects.ts), then the provider's inputs
    // that do (sources/pulumi/docker-objects.ts) when no body field already says so.
    const body = (items(field(r.props, "unjudgedFields")) as { path?: unknown; reason?: unknown }[]).filter(
      (f) => typeof f?.reason === "string",
    );
    const said = new Set(body.map((f) => String(f.path).toLowerCase()));
    const inputs = refusedInputs(DOCKER_NETWORK_VERDICTS, "docker.Network", r.props).filter(
      (f) => !said.has(f.path.toLowerCase()),
    );
    for (const f of [...body, ...inputs])
      out.push({
        ...violation(`network "${r.name}": ${String(f.path) || "the body"}: ${f.reason}`, String(f.path)),
        urn: r.urn,
      });
  }
  return out;
}

export const disallowOpenBridge = defineStackRule<object>({
  id: "sandbox-disallow-open-bridge",
  description:
    "No Docker bridge network opens its containers to the host or to each other (routed or unprotected gateway modes, a host's existing bridge, inter-container traffic, trusted host interfaces).",
  mission: false,
  enforcementLevel: "mandatory",
  severity: "high",
  crosswalk: { cis: ["5.29"] },
  configSchema: { properties: {} },
  defaults: {},
  remediationSteps:
    "Leave the gateway mode at nat, name no existing bridge, and set com.docker.network.bridge.enable_icc to false.",
  check(resources) {
    return checkBridgeOptions(resources);
  },
});
