/**
 * AppArmor profiles of Kubernetes pods. A `Localhost` profile (`securityContext.appArmorProfile: {type: Localhost,
 * localhostProfile: <name>}`, or the old annotation `container.apparmor.security.beta.kubernetes.io/<container>:
 * localhost/<name>`) is whatever profile of that name the node has loaded: the kubelet hands the name to the runtime,
 * which runs the container under it. What such a profile allows is not in the pod, so it is judged only where the
 * input ships the profile, or where the operator's configuration names it as a node profile it knows.
 *
 * The Security Profiles Operator ships one as an `AppArmorProfile` (security-profiles-operator.x-k8s.io v1alpha1 and
 * v1, `GetProfileName` is `metadata.name`): its daemon renders `spec.abstract` into `profile <name>
 * flags=(attach_disconnected,mediate_deleted) { ... }` (internal/pkg/daemon/apparmorprofile/crd2armor), an allow
 * list over the base abstraction with the operator's fixed denies (mount, /proc and /sys writes), and loads it on
 * every node. An empty `abstract` is a deny-all profile. `spec.mode: Complain` loads it in complain mode: what it
 * forbids is logged and allowed, so the container is not confined at all.
 *
 * The spec's fields are those of v1.0's CRD (both versions): `abstract` (executable, filesystem, network,
 * capability), `mode` and `state`. Earlier releases had others the rules do not judge: up to v0.8 `spec.policy`, raw
 * AppArmor policy text the daemon loaded as written (`flags=(unconfined)`, allow-everything rules), and in v0.9 and
 * v0.10 `spec.complainMode`. A field outside v1.0's is pruned by a v1.0 API server but obeyed by an older operator,
 * so the input does not say what the node loads: it fails closed.
 */
import { isUnknown } from "../../workload";
import { at, entries, field, isObj, str } from "../lenient";
import { parseKubeType } from "./sites";
import { SPO_GROUP } from "./spo-seccomp";

/** An AppArmorProfile object of the input, by the name the operator loads it under. */
export interface AppArmorProfileObject {
  readonly name: string;
  readonly props: unknown;
}

/** The AppArmorProfile objects of a set (any served version). */
export function appArmorProfiles(
  resources: readonly { type: string; props: unknown }[],
): AppArmorProfileObject[] {
  const out: AppArmorProfileObject[] = [];
  for (const r of resources) {
    const t = parseKubeType(r.type);
    if (t?.group !== SPO_GROUP || t.kind !== "AppArmorProfile") continue;
    const name = str(at(r.props, "metadata.name"));
    if (typeof name === "string") out.push({ name, props: r.props });
  }
  return out;
}

/**
 * Why a shipped AppArmorProfile does not confine the containers that run under it, or undefined when it does;
 * `unknown` when its mode is not known yet. The CRD's enum is `Enforce` (the default) and `Complain`, compared
 * exactly as the API server validates it; any other value is refused there, and here.
 */
export function appArmorProfileProblem(props: unknown): string | undefined {
  const spec = field(props, "spec");
  if (isUnknown(spec)) return "unknown";
  const unknownField = outsideSchema(spec, SPEC, "spec");
  if (unknownField !== undefined) return unknownField;
  const state = str(field(spec, "state"));
  if (isUnknown(state)) return "unknown";
  if (state !== undefined && state !== "Enabled" && state !== "Disabled")
    return `its spec.state is ${JSON.stringify(state)}, which is neither Enabled nor Disabled`;
  const mode = str(field(spec, "mode"));
  if (isUnknown(mode)) return "unknown";
  if (mode === undefined || mode === "Enforce") return undefined;
  if (mode === "Complain")
    return "its spec.mode is Complain: AppArmor logs what the profile forbids and allows it, so nothing is confined (set mode Enforce or leave it out)";
  return `its spec.mode is ${JSON.stringify(mode)}, which is neither Enforce nor Complain`;
}

/** The reason an AppArmorProfile object fails closed by itself (its kind verdict's `unless`), or undefined. */
export function appArmorProfileObjectReason(props: unknown): string | undefined {
  const problem = appArmorProfileProblem(props);
  if (problem === undefined || problem === "unknown") return undefined;
  return `the operator loads this profile on every node under its name: ${problem}`;
}

/** The spec's fields in v1.0's CRD (v1 and v1alpha1 alike): an object's keys, or `true` for a leaf. */
type Schema = { readonly [key: string]: Schema | true };
const SPEC: Schema = {
  abstract: {
    executable: { allowedExecutables: true, allowedLibraries: true },
    filesystem: { readOnlyPaths: true, writeOnlyPaths: true, readWritePaths: true },
    network: { allowRaw: true, allowedProtocols: { allowTcp: true, allowUdp: true } },
    capability: { allowedCapabilities: true },
  },
  mode: true,
  state: true,
};

/** Fields of older releases whose meaning the rules know, and why they cannot be judged. */
const OLDER: Readonly<Record<string, string>> = {
  "spec.policy":
    "raw AppArmor policy text, which operators up to v0.8 load on every node as written (it may declare flags=(unconfined) or complain, or allow everything) and which the rules do not read",
  "spec.complainMode":
    "v0.9's and v0.10's switch that loads the profile in complain mode, where AppArmor allows what it forbids",
};

/** The first field of `v` outside `schema` (at display path `path`), as a refusal reason; `unknown` if unknown. */
function outsideSchema(v: unknown, schema: Schema, path: string): string | undefined {
  if (isUnknown(v)) return "unknown";
  if (!isObj(v)) return undefined;
  for (const [k, sub] of entries(v)) {
    const p = `${path}.${k}`;
    const want = schema[k];
    if (want === undefined) {
      const fields = Object.keys(schema).join(", ");
      const older = OLDER[p];
      return older === undefined
        ? `its ${p} is not a field of AppArmorProfile in security-profiles-operator v1.0 (${path} has ${fields}): what an operator makes of it is not in the input; remove it`
        : `its ${p} is not a field of AppArmorProfile in security-profiles-operator v1.0 (${path} has ${fields}); it is ${older}: write the profile as spec.abstract (with mode Enforce)`;
    }
    if (want === true || sub === null) continue;
    const inner = outsideSchema(sub, want, p);
    if (inner !== undefined) return inner;
  }
  return undefined;
}
