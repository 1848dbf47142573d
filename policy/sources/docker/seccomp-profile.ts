/**
 * A Docker `seccomp=<profile>` security option judged by its content. The daemon never reads a file here: the value
 * is the profile's JSON text (docker v28.5.2 and v20.10.24 `daemon/seccomp_linux.go` `WithSeccomp` ->
 * `seccomp.LoadProfile(value)`; the docker CLI and Compose read a `seccomp=<file>` and send the file's contents).
 * The profile is decoded as encoding/json decodes it into moby/profiles `Seccomp` (field names case-folded, the last
 * repeated key winning), then read as `setupSeccomp` applies it:
 * - no `defaultAction` and no `syscalls` (`null`, `{}`) is no filter at all ("assume seccomp disabled");
 * - a default action that lets a syscall run (`SCMP_ACT_ALLOW`, `SCMP_ACT_LOG`; `SCMP_ACT_NOTIFY` and
 *   `SCMP_ACT_TRACE` leave it to a process that may be the task's own) filters only the syscalls it names;
 * - an allow-list that lets a syscall Docker's default profile does not always allow (namespaces, mounts, kernel
 *   modules, kexec, bpf, keyrings, io_uring...) run without condition (no `args`, or argument conditions that admit
 *   every value; no `includes.caps`) opens what the default profile closes.
 * Each of those is Unconfined. A value the daemon cannot decode is refused at create; it is unreadable, so the
 * rules fail closed on it.
 */

import { parseDocument } from "yaml";
import { isUnreadable, type ProfileType, Unreadable } from "../../workload";
import { field, items, str, strList } from "../lenient";
import { engineDecode } from "./decode";
import { fromYaml } from "./json-node";
import { DEFAULT_ALWAYS_ALLOWED, DEFAULT_CONDITIONS } from "./seccomp.generated";
import type { Shape } from "./shape";

const string: Shape = { k: "string" };
const strings: Shape = { k: "slice", of: string };
const uint: Shape = { k: "int", bits: 64, unsigned: true };
const filter: Shape = {
  k: "ptr",
  to: { k: "struct", fields: { caps: strings, arches: strings, minKernel: { k: "ptr", to: string } } },
};

/** moby/profiles `Seccomp` with `specs.LinuxSeccomp` promoted (the outer `syscalls` hides the embedded one). */
const PROFILE: Shape = {
  k: "struct",
  fields: {
    defaultAction: string,
    defaultErrnoRet: { k: "ptr", to: uint },
    architectures: strings,
    flags: strings,
    listenerPath: string,
    listenerMetadata: string,
    archMap: {
      k: "slice",
      of: { k: "struct", fields: { architecture: string, subArchitectures: strings } },
    },
    syscalls: {
      k: "slice",
      of: {
        k: "ptr",
        to: {
          k: "struct",
          fields: {
            names: strings,
            action: string,
            errnoRet: { k: "ptr", to: uint },
            args: {
              k: "slice",
              of: { k: "struct", fields: { index: uint, value: uint, valueTwo: uint, op: string } },
            },
            name: string,
            comment: string,
            includes: filter,
            excludes: filter,
          },
        },
      },
    },
  },
};

const BLOCKING = new Set([
  "SCMP_ACT_ERRNO",
  "SCMP_ACT_KILL",
  "SCMP_ACT_KILL_PROCESS",
  "SCMP_ACT_KILL_THREAD",
  "SCMP_ACT_TRAP",
]);
const LETTING = new Set(["SCMP_ACT_ALLOW", "SCMP_ACT_LOG", "SCMP_ACT_NOTIFY", "SCMP_ACT_TRACE"]);

/**
 * Syscalls Docker's default profile lets every container make with no condition (seccomp.generated.ts, from
 * moby/profiles' DefaultProfile): any other syscall it closes, granting it only with a capability (CAP_SYS_ADMIN,
 * CAP_SYS_MODULE, CAP_BPF...), with argument filters (`clone` without namespace flags, `socket` without AF_VSOCK), or
 * not at all (`keyctl`, `io_uring_setup`, `kexec_load`, `userfaultfd`...).
 */
const ALWAYS_ALLOWED: ReadonlySet<string> = new Set(DEFAULT_ALWAYS_ALLOWED);

const UINT64_MAX = 2 ** 64 - 1;

/** One argument condition as the generated table writes them: `<index> <op> <value> <valueTwo>`. */
function condition(a: unknown): string {
  const n = (k: string) => {
    const v = field(a, k);
    return typeof v === "number" ? String(v) : "0";
  };
  return `${n("index")} ${String(str(field(a, "op")) ?? "")} ${n("value")} ${n("valueTwo")}`;
}

/**
 * True when a rule's argument conditions hold for every call, as libseccomp compares them (conditions of one rule
 * are ANDed): `>= 0`, `<= 2^64-1`, and `(arg & 0) == 0` admit any value.
 */
function alwaysHolds(args: readonly unknown[]): boolean {
  return args.every((a) => {
    const op = str(field(a, "op"));
    const value = field(a, "value");
    const two = field(a, "valueTwo");
    if (op === "SCMP_CMP_GE") return value === undefined || value === 0;
    if (op === "SCMP_CMP_LE") return typeof value === "number" && value >= UINT64_MAX;
    if (op === "SCMP_CMP_MASKED_EQ")
      return (value === undefined || value === 0) && (two === undefined || two === 0);
    return false;
  });
}

/** The profile's problem, or undefined when it confines; an {@link Unreadable} when the daemon refuses it. */
export function seccompProfileProblem(text: string): string | Unreadable | undefined {
  const doc = parseDocument(text, { uniqueKeys: false, strict: true });
  // JSON text starts with `{`, `[`, `"`, a digit, `-`, `t`, `f` or `n`; anything else (a file path) is not JSON.
  if (doc.errors.length > 0 || !/^[[{"\d\-tfn]/.test(text))
    return new Unreadable(
      `the daemon reads a seccomp option's value as the profile's JSON text, never as a file (the docker CLI and Compose read a profile file first), and ${JSON.stringify(text.slice(0, 60))} is not JSON`,
    );
  const { value, refused } = engineDecode(fromYaml(doc.contents), PROFILE);
  if (refused !== undefined)
    return new Unreadable(
      `the daemon cannot decode the seccomp profile: ${refused.replace(/^the Engine refuses the body: /, "")}`,
    );
  const defaultAction = str(field(value, "defaultAction"));
  const calls = items(field(value, "syscalls"));
  if ((defaultAction === undefined || defaultAction === "") && calls.length === 0)
    return "the profile names no default action and no syscalls, which the daemon reads as seccomp disabled";
  if (typeof defaultAction !== "string" || defaultAction === "")
    return "the profile names no default action, so every syscall it does not name is allowed";
  if (LETTING.has(defaultAction))
    return `the profile's defaultAction ${defaultAction} lets every syscall it does not name run`;
  if (!BLOCKING.has(defaultAction))
    return new Unreadable(`the runtime knows no seccomp action ${JSON.stringify(defaultAction)}`);
  for (const call of calls) {
    const action = str(field(call, "action"));
    if (typeof action !== "string" || !LETTING.has(action)) continue;
    const args = items(field(call, "args"));
    const caps = strList(field(field(call, "includes"), "caps"));
    if (Array.isArray(caps) && caps.length > 0) continue;
    const name = str(field(call, "name"));
    const listed = strList(field(call, "names"));
    const names = [name, ...(Array.isArray(listed) ? listed : [])];
    const conds = args.map(condition);
    // Conditions of one rule are ANDed, unless two of them test the same argument: then runc adds each as a rule of
    // its own (libcontainer/seccomp matchCall, "adding each condition as a separate rule"), so they are ORed.
    const indexes = args.map((a) => {
      const i = field(a, "index");
      return typeof i === "number" ? i : 0;
    });
    const ored = new Set(indexes).size < indexes.length;
    // ANDed conditions hold the syscall to the default profile's when they include all of one of its rules for it
    // (more conditions are only stricter); ORed ones when each alone does. Any other condition (`!=`, a range, one
    // value of a flag) lets through what the default closes.
    const holdsAll = (n: string, cs: readonly string[]) =>
      (DEFAULT_CONDITIONS[n] ?? []).some((rule) => rule.split(" & ").every((c) => cs.includes(c)));
    const held = (n: string) =>
      args.length > 0 &&
      (ored
        ? args.every((a, i) => !alwaysHolds([a]) && holdsAll(n, [conds[i] ?? ""]))
        : !alwaysHolds(args) && holdsAll(n, conds));
    const gated = names.filter(
      (n): n is string => typeof n === "string" && !ALWAYS_ALLOWED.has(n) && !held(n),
    );
    const admitsAll = ored ? args.some((a) => alwaysHolds([a])) : alwaysHolds(args);
    const how =
      args.length === 0
        ? "without a condition"
        : admitsAll
          ? "under conditions that admit every value"
          : ored
            ? "under conditions on one argument that runc ORs, not all of them Docker's default profile's"
            : "under conditions other than Docker's default profile's";
    if (gated.length > 0)
      return `the profile lets ${gated.join(", ")} run ${how}, which that profile allows only with a capability, with its own argument filters or not at all`;
  }
  return undefined;
}

/** A `seccomp=` value as the profile type it gives, and why when it is Unconfined. */
export function seccompOption(value: string): { profile: ProfileType | Unreadable; why?: string } {
  const v = value.trim();
  const lower = v.toLowerCase();
  if (lower === "unconfined") return { profile: "Unconfined", why: "seccomp=unconfined" };
  // `builtin` is the daemon's default profile; an empty value is no profile option at all. `runtime/default` is
  // refused by the daemon (not JSON); read as the default it names.
  if (lower === "builtin" || lower === "runtime/default" || v === "") return { profile: "RuntimeDefault" };
  const problem = seccompProfileProblem(v);
  if (isUnreadable(problem)) return { profile: problem };
  return problem === undefined ? { profile: "Localhost" } : { profile: "Unconfined", why: problem };
}
