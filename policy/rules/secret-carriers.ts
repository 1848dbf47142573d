/**
 * What `sandbox-disallow-secret-env` judges besides plain variables: how each kind of environment entry reaches
 * the container, the command line, and mounted Secret volumes. Pure; messages never hold a value.
 */
import { secretArgReasons, secretEnvReason, secretValueReason } from "../../components/model";
import { downwardValue } from "../adapters/downward";
import {
  type ContainerView,
  type EnvView,
  isUnknown,
  type MountView,
  type Val,
  type WorkloadView,
} from "../workload";
import { label, violation } from "./helpers";
import type { Finding } from "./types";

/**
 * The value the container gets, as far as the policy can see it: a literal; `undefined` when it cannot be seen
 * (passed through from the host, read from a ConfigMap, or another source); `null` when the source cannot hold a
 * credential written anywhere (the pod's own name or IP, a resource figure); UNKNOWN/unreadable as read.
 */
export function visibleValue(w: WorkloadView, e: EnvView): Val<string> | null {
  switch (e.from) {
    case "literal":
      // Kubernetes: a variable without `value` is set to "". Docker entries without `=` are `host`.
      return e.value ?? "";
    case "fieldRef": {
      if (e.value !== undefined) return e.value; // an annotation's text, resolved by the adapter
      // Labels: the pod's own labels are the workload's (pod template) labels.
      const fromLabels = downwardValue(e.ref, "labels", w.labels);
      return fromLabels === undefined ? null : fromLabels;
    }
    case "host":
    case "configMapKeyRef":
    case "other":
      return isUnknown(e.value) ? e.value : undefined;
    default:
      return undefined;
  }
}

/** Why a variable holds a credential, by its name and the value it gets; undefined when it does not. */
export function envReason(name: string | undefined, value: string | undefined | null): string | undefined {
  if (value === null) return undefined;
  if (name === undefined) return value === undefined ? undefined : secretValueReason(value);
  return secretEnvReason(name, value);
}

/** Credentials on the command line (command, args, entrypoint), by argument; Pulumi secrets in it. */
export function argFindings(c: ContainerView): Finding[] {
  const out: Finding[] = [];
  const who = label(c);
  for (const a of c.args) {
    if (a.tainted) out.push(violation(`${who} gets a Pulumi secret on its command line (not shown)`, a.path));
  }
  const reasons = secretArgReasons(c.args.map((a) => (typeof a.value === "string" ? a.value : undefined)));
  for (const [i, reason] of [...reasons].sort((x, y) => x[0] - y[0])) {
    const a = c.args[i];
    if (a === undefined || a.tainted) continue;
    out.push(
      violation(`${who} passes a credential on its command line: ${reason} (the value is not shown)`, a.path),
    );
  }
  return out;
}

/**
 * Secret volumes a container mounts: `secret`, the Secrets Store CSI driver, and projected volumes with a `secret`
 * source. A projected `serviceAccountToken` is `sandbox-disallow-service-account-token`'s.
 */
export function mountFindings(c: ContainerView, allowed: (m: MountView) => boolean = () => false): Finding[] {
  const out: Finding[] = [];
  const who = label(c);
  for (const m of c.mounts) {
    if (allowed(m)) continue;
    const at = typeof m.target === "string" ? ` at ${m.target}` : "";
    const vol = m.volume === undefined ? "" : ` "${m.volume}"`;
    if (m.type === "secret") out.push(violation(`${who} mounts Secret volume${vol}${at}`, m.path));
    else if (m.type === "projected" && (m.projectedSources ?? []).includes("secret"))
      out.push(violation(`${who} mounts projected volume${vol}${at}, which holds a Secret`, m.path));
  }
  return out;
}
