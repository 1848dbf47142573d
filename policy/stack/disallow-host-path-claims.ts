/**
 * Host folders handed out through PersistentVolumes. A `hostPath` (or `local`) PersistentVolume gives a host folder
 * to whichever pod claims it, so the volume itself is a violation, and a pod that mounts a claim bound to one is
 * judged as mounting that host path by the mount rules (runtime socket, sensitive folders, single job mount,
 * devices). It needs every resource of one input set: a stack in the pack, every document scanned together in scan.
 */

import { runtimeSocketReason, sensitiveHostPathReason } from "../paths";
import { disallowDevices } from "../rules/disallow-devices";
import { disallowRuntimeSocket } from "../rules/disallow-runtime-socket";
import { disallowSensitiveHostMounts } from "../rules/disallow-sensitive-host-mounts";
import { unchecked, violation } from "../rules/helpers";
import { requireSingleJobMount } from "../rules/require-single-job-mount";
import { type AnyRule, resolveConfig } from "../rules/types";
import { type ClaimResource, claimResolver, hostVolumes, resolveClaims } from "../sources/kubernetes/claims";
import { field, items } from "../sources/lenient";
import { DOCKER_VOLUME_VERDICTS } from "../sources/pulumi/docker-objects";
import {
  DOCKER_VOLUME_TYPE,
  dockerHostVolumes,
  resolveDockerVolumes,
  type VolumeResource,
} from "../sources/pulumi/volumes";
import { adaptResources } from "../sources/subject";
import { refusedInputs } from "../sources/verdict";
import { isUnknown } from "../workload";
import { defineStackRule, type StackFinding } from "./types";

/** The rules that judge what a pod mounts from the host. */
const MOUNT_RULES: readonly AnyRule[] = [
  disallowRuntimeSocket,
  disallowSensitiveHostMounts,
  requireSingleJobMount,
  disallowDevices,
];

/** Resources with an id that findings name (a URN, or a scan's resource id). */
export interface ClaimInput extends ClaimResource, VolumeResource {
  readonly urn: string;
}

function findingsOf(
  r: ClaimResource,
  props: unknown,
): Map<string, { rule: string; message: string; path?: string }> {
  const out = new Map<string, { rule: string; message: string; path?: string }>();
  for (const s of adaptResources(r.type, props, r.name))
    for (const rule of MOUNT_RULES) {
      if (!rule.subjects.includes(s.subject)) continue;
      for (const f of rule.check(s, resolveConfig(rule, undefined))) {
        if (f.unchecked) continue;
        out.set(`${rule.id}\0${f.message}\0${f.path ?? ""}`, {
          rule: rule.id,
          message: f.message,
          ...(f.path === undefined ? {} : { path: f.path }),
        });
      }
    }
  return out;
}

/** The check, over any set of resources (the stack rule and the scan run it). */
export function checkHostPathClaims(resources: readonly ClaimInput[]): StackFinding[] {
  const out: StackFinding[] = [];
  for (const v of hostVolumes(resources)) {
    const urn = (v.resource as ClaimInput).urn;
    if (isUnknown(v.path) || v.path === undefined) {
      const f = unchecked(`the host path of PersistentVolume "${v.name}"`, v.at, v.path);
      if (v.path !== undefined) out.push({ ...f, urn });
      continue;
    }
    const why = runtimeSocketReason(v.path) ?? sensitiveHostPathReason(v.path);
    out.push({
      ...violation(
        `PersistentVolume "${v.name}" hands the host folder ${v.path} to whichever pod claims it${why === undefined ? "" : `: ${why}`}`,
        v.at,
      ),
      urn,
    });
  }
  const dockerVolumes = dockerHostVolumes(resources);
  for (const v of dockerVolumes) {
    const urn = (v.resource as ClaimInput).urn;
    const name = v.name ?? v.resource.name;
    if (isUnknown(v.path) || v.path === undefined) {
      const f = unchecked(`the host path of docker.Volume "${name}"`, v.at, v.path);
      if (v.path !== undefined) out.push({ ...f, urn });
      continue;
    }
    const why = runtimeSocketReason(v.path) ?? sensitiveHostPathReason(v.path);
    out.push({
      ...violation(
        `docker.Volume "${name}" binds the host folder ${v.path} (local driver, driverOpts o=bind) into whichever container mounts it${why === undefined ? "" : `: ${why}`}`,
        v.at,
      ),
      urn,
    });
  }
  // A volume create body's fields that fail closed (policy/sources/docker/objects.ts), then the provider's inputs
  // that do (sources/pulumi/docker-objects.ts) when no body field already says so.
  for (const r of resources) {
    if (r.type !== DOCKER_VOLUME_TYPE) continue;
    const body = (items(field(r.props, "unjudgedFields")) as { path?: unknown; reason?: unknown }[]).filter(
      (f) => typeof f?.reason === "string",
    );
    const said = new Set(body.map((f) => String(f.path).toLowerCase()));
    const inputs = refusedInputs(DOCKER_VOLUME_VERDICTS, "docker.Volume", r.props).filter(
      (f) => !said.has(f.path.toLowerCase()),
    );
    for (const f of [...body, ...inputs])
      out.push({
        ...violation(
          `docker.Volume "${r.name}": ${String(f.path) || "the body"}: ${f.reason}`,
          String(f.path),
        ),
        urn: r.urn,
      });
  }
  const resolve = claimResolver(resources);
  for (const r of resources) {
    const claims = resolveClaims(r, resolve);
    const docker = resolveDockerVolumes({ ...r, props: claims.props }, dockerVolumes);
    const through = [
      ...claims.used.map((u) => `claim "${u.claim}" is bound to PersistentVolume "${u.volume.name}"`),
      ...docker.used.map(
        (u) => `volume "${u.ref}" is docker.Volume "${u.volume.name ?? u.volume.resource.name}"`,
      ),
    ];
    if (through.length === 0) continue;
    const before = findingsOf(r, r.props);
    for (const [key, f] of findingsOf(r, docker.props)) {
      if (before.has(key)) continue;
      out.push({
        ...violation(`${f.rule}: ${f.message} (the ${through.join("; ")}, a host folder)`, f.path),
        urn: r.urn,
      });
    }
  }
  return out;
}

export const disallowHostPathClaims = defineStackRule({
  id: "sandbox-disallow-host-path-claims",
  description:
    "No PersistentVolume or Docker volume is a host folder (hostPath, local, a local driver's bind), and no pod or container reaches a host folder through a claim or volume bound to one.",
  mission: false,
  enforcementLevel: "mandatory",
  severity: "high",
  crosswalk: { cis: ["5.6"], psa: ["hostPathVolumes"], kyverno: ["disallow-host-path"] },
  defaults: {},
  remediationSteps:
    "Back the claim with a storage class that is not the node's disk (no hostPath or local PersistentVolume); a task's only host folder is its job folder.",
  check(resources) {
    return checkHostPathClaims(resources);
  },
});
