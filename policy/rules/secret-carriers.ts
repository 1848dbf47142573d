/**
 * What `sandbox-disallow-secret-env` judges besides plain variables: how each kind of environment entry reaches
 * the container, the command line, and mounted Secret volumes. Pure; messages never hold a value.
 */
import {
  knownFormat,
  secretArgReasons,
  secretEnvReason,
  secretHeaderReason,
  secretValueReason,
} from "../../components/model";
import { downwardValue } from "../sources/kubernetes/downward";
import {
  type ArgView,
  type ContainerView,
  type EnvView,
  isUnknown,
  type MountView,
  type Val,
  type WorkloadView,
} from "../workload";
import { label, unchecked, violation } from "./helpers";
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

/** Credentials in one command line, by argument; Pulumi secrets in it. `where` says whose command line it is. */
function commandLineFindings(who: string, where: string, args: readonly ArgView[]): Finding[] {
  const out: Finding[] = [];
  for (const a of args) {
    if (a.tainted) out.push(violation(`${who} gets a Pulumi secret on ${where} (not shown)`, a.path));
    else if (isUnknown(a.value)) out.push(unchecked(`${where} of ${who}`, a.path, a.value));
  }
  const reasons = secretArgReasons(args.map((a) => (typeof a.value === "string" ? a.value : undefined)));
  for (const [i, reason] of [...reasons].sort((x, y) => x[0] - y[0])) {
    const a = args[i];
    if (a === undefined || a.tainted) continue;
    out.push(violation(`${who} passes a credential on ${where}: ${reason} (the value is not shown)`, a.path));
  }
  return out;
}

/** Credentials on the command line (command, args, entrypoint), by argument; Pulumi secrets in it. */
export function argFindings(c: ContainerView): Finding[] {
  const who = label(c);
  return commandLineFindings(who, "its command line", c.args).filter((f) => f.unchecked !== true);
}

/**
 * What the engine runs in or sends to the container besides its entry point: the command lines of exec probes,
 * lifecycle hooks and healthchecks, and httpGet headers (the kubelet sends them to the container's own server).
 */
export function hookFindings(c: ContainerView): Finding[] {
  const who = label(c);
  const out = (c.hookCommands ?? []).flatMap((h) =>
    commandLineFindings(who, `the ${h.what} command`, h.args),
  );
  for (const h of c.hookHeaders ?? []) {
    const name = typeof h.name === "string" ? h.name : "a header";
    if (h.tainted) {
      out.push(violation(`${who} sends a Pulumi secret in probe header ${name} (not shown)`, h.path));
      continue;
    }
    if (isUnknown(h.value) || isUnknown(h.name)) {
      out.push(unchecked(`probe header ${name} of ${who}`, h.path, h.value, h.name));
      continue;
    }
    if (typeof h.value !== "string") continue;
    const why =
      (typeof h.name === "string" ? secretHeaderReason(h.name, h.value) : undefined) ??
      secretValueReason(h.value);
    if (why !== undefined)
      out.push(violation(`${who} is sent probe header ${name}: ${why} (the value is not shown)`, h.path));
  }
  return out;
}

/**
 * Files with a credential in them that the container gets: uploads (a private key, a `.netrc`) and downward-API
 * files of annotations or labels. Judged by known formats (private keys, tokens, `password` settings, `.netrc` and
 * `.pgpass` lines, also base64-encoded); a file's text is not guessed at by entropy.
 */
export function fileFindings(c: ContainerView): Finding[] {
  const out: Finding[] = [];
  const who = label(c);
  for (const f of c.fileTexts ?? []) {
    const at = typeof f.file === "string" ? ` ${f.file}` : "";
    if (f.tainted) {
      out.push(violation(`${who} gets file${at} from a Pulumi secret (the content is not shown)`, f.path));
      continue;
    }
    if (isUnknown(f.content)) {
      out.push(unchecked(`the content of file${at} of ${who}`, f.path, f.content));
      continue;
    }
    const what = typeof f.content === "string" ? knownFormat(f.content) : undefined;
    if (what !== undefined)
      out.push(violation(`${who} gets file${at} holding ${what} (the content is not shown)`, f.path));
  }
  return out;
}

/**
 * The audiences of the API server itself: a projected token without `audience` gets the API server's (its
 * `--api-audiences`, by default its issuer, `https://kubernetes.default.svc` with the cluster's domain or not).
 */
const API_AUDIENCE = /^(?:https:\/\/)?kubernetes\.default\.svc(?:\.[a-z0-9-]+)*\/?$/;

/**
 * Secret volumes a container mounts: `secret`, the Secrets Store CSI driver, projected volumes with a `secret`
 * source, and projected service-account tokens for another audience than the API server: a token a cloud
 * exchanges for its role's credentials (AWS AssumeRoleWithWebIdentity, GCP and Azure workload identity
 * federation). A projected token for the API server is `sandbox-disallow-service-account-token`'s.
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
    for (const t of m.tokenAudiences ?? []) {
      if (isUnknown(t.audience))
        out.push(unchecked(`the audience of projected volume${vol}`, t.path, t.audience));
      else if (t.audience !== undefined && t.audience !== "" && !API_AUDIENCE.test(t.audience))
        out.push(
          violation(
            `${who} mounts projected volume${vol}${at}, a service-account token for audience ${JSON.stringify(t.audience)}: a credential a cloud or another service exchanges for its own (allowed: no audience, the API server's, which sandbox-disallow-service-account-token judges)`,
            t.path,
          ),
        );
    }
  }
  return out;
}
