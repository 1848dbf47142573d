/**
 * Seccomp profiles shipped as Security Profiles Operator objects (kubernetes-sigs/security-profiles-operator v1.0,
 * group security-profiles-operator.x-k8s.io, api/seccompprofile/v1 and v1beta1 `SeccompProfile`). The operator's
 * daemon writes each profile to every node as `<kubelet seccomp root>/operator/<namespace>/<name>.json`
 * (`GetProfilePath`: `path.Join(ProfilesRootPath(), filepath.Base(namespace), filepath.Base(name + ".json"))`, the
 * `.json` added unless the name ends with it); since the kind is cluster-scoped the namespace part is empty and the
 * file is `operator/<name>.json`. A pod names it with `seccompProfile: {type: Localhost, localhostProfile:
 * operator/...}`, a path the kubelet joins to its seccomp root (`filepath.Join`, so `..` and `.` are cleaned).
 *
 * The file's content is the object's `spec` marshalled as JSON, after `mergeBaseProfile` has unioned the syscalls
 * of its `baseProfileName` chain into it (internal/pkg/daemon/seccompprofile/seccompprofile.go: a base in the same
 * namespace, or `oci://` pulled from a registry; up to 15 levels). The runtime reads that file as the OCI seccomp
 * profile, which is judged as Docker's profiles are (../docker/seccomp-profile.ts). A base the input does not hold
 * (an `oci://` artifact, a name not declared) cannot be read: the profile fails closed.
 */
import { posix } from "node:path";
import { isUnknown, isUnreadable } from "../../workload";
import { seccompProfileProblem } from "../docker/seccomp-profile";
import { at, field, isObj, items, str } from "../lenient";
import { parseKubeType } from "./sites";

export const SPO_GROUP = "security-profiles-operator.x-k8s.io";

/** A SeccompProfile object of the input. */
export interface ProfileObject {
  readonly name: string;
  readonly namespace: string | undefined;
  readonly props: unknown;
}

/** The SeccompProfile objects of a set (any served version). */
export function seccompProfiles(resources: readonly { type: string; props: unknown }[]): ProfileObject[] {
  const out: ProfileObject[] = [];
  for (const r of resources) {
    const t = parseKubeType(r.type);
    if (t?.group !== SPO_GROUP || t.kind !== "SeccompProfile") continue;
    const name = str(at(r.props, "metadata.name"));
    const ns = str(at(r.props, "metadata.namespace"));
    if (typeof name !== "string") continue;
    out.push({ name, namespace: typeof ns === "string" && ns !== "" ? ns : undefined, props: r.props });
  }
  return out;
}

const ROOT = "/var/lib/kubelet/seccomp";

/** The operator's file a `localhostProfile` names: its namespace part (if any) and file name; else undefined. */
export function operatorFile(localhost: string): { namespace?: string; file: string } | undefined {
  const full = posix.join(ROOT, localhost);
  if (!full.startsWith(`${ROOT}/`)) return undefined;
  const m = /^operator\/(?:([^/]+)\/)?([^/]+)$/.exec(full.slice(ROOT.length + 1));
  if (m === null || m[2] === undefined) return undefined;
  return m[1] === undefined ? { file: m[2] } : { namespace: m[1], file: m[2] };
}

const fileOf = (name: string): string => (name.endsWith(".json") ? name : `${name}.json`);
const sameNamespace = (a: string | undefined, b: string | undefined): boolean =>
  a === undefined || b === undefined || a === b;

/** The profiles of the set that a `localhostProfile` may name (none: a file the input does not ship). */
export function profilesNamed(localhost: string, profiles: readonly ProfileObject[]): ProfileObject[] {
  const f = operatorFile(localhost);
  if (f === undefined) return [];
  return profiles.filter((p) => fileOf(p.name) === f.file && sameNamespace(f.namespace, p.namespace));
}

/** Why a shipped profile does not confine, or undefined when it does; `unknown` when its content is not known yet. */
export function spoProfileProblem(p: ProfileObject, profiles: readonly ProfileObject[]): string | undefined {
  const spec = field(p.props, "spec");
  if (isUnknown(spec)) return "unknown";
  const syscalls: unknown[] = [...items(field(spec, "syscalls"))];
  const seen = new Set<ProfileObject>([p]);
  let current = p;
  for (let level = 0; ; level++) {
    const base = str(at(current.props, "spec.baseProfileName"));
    if (isUnknown(base) || isUnknown(field(field(current.props, "spec"), "syscalls"))) return "unknown";
    if (base === undefined || base === "") break;
    if (level >= 15)
      return "its base profiles go deeper than the operator's 15 levels: the operator refuses it";
    if (base.startsWith("oci://"))
      return `its base profile ${base} is pulled from a registry at run time: the syscalls it adds cannot be judged`;
    const next = profiles.find((x) => x.name === base && sameNamespace(x.namespace, current.namespace));
    if (next === undefined)
      return `its base profile "${base}" is not in the input: the syscalls it adds cannot be judged`;
    if (seen.has(next)) return `its base profiles form a loop through "${base}"`;
    seen.add(next);
    syscalls.unshift(...items(at(next.props, "spec.syscalls")));
    current = next;
  }
  const own = isObj(spec) ? spec : {};
  const { baseProfileName: _b, state: _s, ...rest } = own;
  const problem = seccompProfileProblem(JSON.stringify({ ...rest, syscalls }));
  if (isUnreadable(problem)) return problem.reason;
  return problem;
}
