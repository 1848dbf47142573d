/**
 * Docker spellings shared by the `docker.Container` adapter and the Engine API launch-spec adapter: security
 * options, users, restart policies and namespace modes mean the same in both.
 */
import {
  type ArgView,
  isUnknown,
  isUnreadable,
  type ProfileType,
  Unreadable,
  type Val,
} from "../../workload";
import { seccompOption } from "./seccomp-profile";

/** What a list of `--security-opt` strings says. Each field is absent when no option speaks to it. */
export interface SecurityOpts {
  readonly noNewPrivileges: Val<boolean>;
  readonly seccomp: Val<ProfileType>;
  /** Why the seccomp option leaves the container unconfined (`seccomp=unconfined`, a profile that filters nothing). */
  readonly seccompWhy?: string;
  readonly appArmor: Val<ProfileType>;
  /**
   * The host's profile an `apparmor=<name>` names (`appArmor` Localhost): loaded on the host under that name, its
   * rules are whatever the host has, as a Kubernetes Localhost profile's are the node's.
   */
  readonly appArmorName?: string;
  readonly seLinux: Val<{ disabled: boolean; type?: string; user?: string; role?: string }>;
  /** `systempaths=unconfined` unmasks /proc and /sys like Kubernetes `procMount: Unmasked`. */
  readonly procMount: Val<string>;
  /** `writable-cgroups` (`=true`): the container may write its cgroup files. */
  readonly writableCgroups: Val<boolean>;
}

/** Go's strconv.ParseBool, which the daemon uses for `no-new-privileges=` and `writable-cgroups=`. */
export function goParseBool(v: string): boolean | undefined {
  if (["1", "t", "T", "TRUE", "true", "True"].includes(v)) return true;
  if (["0", "f", "F", "FALSE", "false", "False"].includes(v)) return false;
  return undefined;
}

/**
 * Reads security options in every spelling the daemon accepts (docker v28.5.2 daemon.parseSecurityOpt): the bare
 * `no-new-privileges`, `writable-cgroups` and `disable` (SELinux labels off), else `key=value`, else the old
 * `key:value`; `no-new-privileges` and `writable-cgroups` values as Go's ParseBool reads them (`t`, `True`, `1`...).
 * Spellings the daemon refuses (another case, spaces) are read leniently as what they seem to say: a refused body
 * never runs, so reading them either way cannot pass a weaker wall. `systempaths=unconfined` is the CLI's and
 * Compose's spelling of empty MaskedPaths and ReadonlyPaths. Unknown entries make the affected answers unknown.
 */
export function parseSecurityOpts(opts: Val<readonly Val<string>[]>): SecurityOpts {
  if (isUnknown(opts)) {
    return {
      noNewPrivileges: opts,
      seccomp: opts,
      appArmor: opts,
      seLinux: opts,
      procMount: opts,
      writableCgroups: opts,
    };
  }
  let writableCgroups: Val<boolean>;
  let nnp: Val<boolean>;
  let seccomp: Val<ProfileType> = "RuntimeDefault"; // Docker applies its default profile unless told otherwise.
  let seccompWhy: string | undefined;
  let appArmor: Val<ProfileType>;
  let appArmorName: string | undefined;
  let seLinux: Val<{ disabled: boolean; type?: string; user?: string; role?: string }>;
  let procMount: Val<string>;
  // The first option that cannot be judged (an unreadable one wins: the rules fail closed on it).
  let sawUnknown: Val<never>;
  for (const raw of opts ?? []) {
    if (typeof raw !== "string") {
      if (isUnknown(raw) && (sawUnknown === undefined || isUnreadable(raw))) sawUnknown = raw;
      continue;
    }
    const s = raw.trim() === "disable" ? "label=disable" : raw.trim();
    // The daemon cuts at the first `=` when there is one, else at the first `:`.
    const m = s.includes("=")
      ? /^([A-Za-z-]+)\s*=\s*(.*)$/s.exec(s)
      : /^([A-Za-z-]+)\s*(?::\s*(.*))?$/s.exec(s);
    if (m === null) continue;
    const key = (m[1] ?? "").toLowerCase();
    const value = (m[2] ?? "").trim();
    const v = value.toLowerCase();
    const flag = m[2] === undefined ? true : (goParseBool(value) ?? (v === "" || v === "yes" || v === "on"));
    switch (key) {
      case "no-new-privileges":
        nnp = flag;
        break;
      case "writable-cgroups":
        writableCgroups = flag;
        break;
      case "seccomp": {
        // The value is the profile itself (seccomp-profile.ts), judged by what it filters.
        const o = seccompOption(m[2] ?? "");
        seccomp = o.profile;
        seccompWhy = o.why;
        break;
      }
      case "apparmor":
        appArmor =
          v === "unconfined"
            ? "Unconfined"
            : v === "docker-default" || v === "runtime/default"
              ? "RuntimeDefault"
              : "Localhost";
        appArmorName = appArmor === "Localhost" ? value : undefined;
        break;
      case "label": {
        const prev = typeof seLinux === "object" ? seLinux : { disabled: false };
        if (v === "disable" || v === "disabled") seLinux = { ...prev, disabled: true };
        else {
          const lm = /^(user|role|type|level)\s*[:=]\s*(.*)$/i.exec(value);
          const k = lm?.[1]?.toLowerCase();
          if (k === "type" || k === "user" || k === "role") seLinux = { ...prev, [k]: lm?.[2] ?? "" };
          else seLinux = prev;
        }
        break;
      }
      case "systempaths":
        if (v === "unconfined") procMount = "Unmasked";
        break;
    }
  }
  if (sawUnknown !== undefined) {
    // An unknown option may be any of these: only a known, explicit answer stands.
    return {
      noNewPrivileges: nnp === true ? true : sawUnknown,
      seccomp: seccomp === "Unconfined" ? seccomp : sawUnknown,
      ...(seccomp === "Unconfined" && seccompWhy !== undefined ? { seccompWhy } : {}),
      appArmor: appArmor === "Unconfined" ? appArmor : sawUnknown,
      seLinux:
        typeof seLinux === "object" && "disabled" in seLinux && seLinux.disabled ? seLinux : sawUnknown,
      procMount: procMount ?? sawUnknown,
      writableCgroups: writableCgroups === true ? true : sawUnknown,
    };
  }
  return {
    noNewPrivileges: nnp,
    seccomp,
    ...(seccomp === "Unconfined" && seccompWhy !== undefined ? { seccompWhy } : {}),
    appArmor,
    ...(appArmor === "Localhost" && appArmorName !== undefined ? { appArmorName } : {}),
    seLinux,
    procMount,
    writableCgroups,
  };
}

/** A Docker `user` (`root`, `0`, `0:0`, `1000`, `1000:0`, `app`, `app:staff`) as uid, gid and names. */
export interface DockerUser {
  readonly uid: Val<number>;
  readonly gid: Val<number>;
  /** The user given by name when it is not numeric. */
  readonly name: Val<string>;
}

/** Go's strconv.Atoi: an optional sign and decimal digits (`+0`, `-0`, `007`), within int64. */
export function goAtoi(s: string): number | undefined {
  if (!/^[+-]?\d+$/.test(s)) return undefined;
  // Up to 15 digits a double holds exactly, far inside Go's int64.
  if (s.replace(/^[+-]/, "").length <= 15) return Number(s) + 0; // + 0: "-0" is 0, as Atoi reads it
  const n = BigInt(s);
  return n > 2n ** 63n - 1n || n < -(2n ** 63n) ? undefined : Number(n);
}

/**
 * A user as the daemon resolves it at start (moby/sys/user GetExecUser): the spec splits at every `:` into user and
 * group (parts past the second are ignored); a part Atoi reads is an id (`0`, `+0`, `-0`, `00`), else a name looked
 * up in the image (`root` is 0 in every image); an empty user part is the lookup's default, uid 0, so `:1000` runs
 * as root. An empty spec is the image's own user. Without a group part the gid is the image's (0 when its passwd has
 * no entry for the user), which the policy cannot see: it is unreadable, so the root-group check fails closed.
 * Surrounding spaces are trimmed, which the daemon would refuse.
 */
export function parseDockerUser(user: Val<string>): DockerUser {
  if (isUnknown(user)) return { uid: user, gid: user, name: user };
  if (user === undefined || user.trim() === "") return { uid: undefined, gid: undefined, name: undefined };
  const [rawU = "", rawG] = user.trim().split(":");
  const u = rawU.trim();
  const g = rawG?.trim();
  const uid = u === "" ? 0 : goAtoi(u);
  const resolvedUid = uid ?? (u.toLowerCase() === "root" ? 0 : undefined);
  // No group (`1000`, `1000:`, `app`): GetExecUser starts from gid 0 and takes the gid of the image's passwd entry
  // for the user, so it is 0 (root) when the image has none, and what the image says otherwise: the policy cannot
  // see it. A group given by name: `root` is gid 0; any other name cannot be resolved without the image.
  const gid =
    g === undefined || g === ""
      ? resolvedUid === 0
        ? undefined
        : new Unreadable(
            `user ${JSON.stringify(user)} names no group, so the daemon takes the gid from the image's /etc/passwd, which is gid 0 (root) when the image has no entry for the user; write the group (user "${u === "" ? "1000" : u}:<gid>")`,
          )
      : (goAtoi(g) ?? (g.toLowerCase() === "root" ? 0 : undefined));
  return { uid: resolvedUid, gid, name: uid === undefined ? u : undefined };
}

/** Normalizes a restart policy: Docker (`no`, `on-failure:3`) and Kubernetes (`Never`, `OnFailure`) spellings. */
export function normalizeRestart(raw: Val<string>): Val<string> {
  if (isUnknown(raw) || raw === undefined) return raw;
  const s = raw.trim().toLowerCase().replace(/_/g, "-");
  if (s === "" || s === "no" || s === "never" || s === "none") return "never";
  if (s === "onfailure" || s.startsWith("on-failure")) return "on-failure";
  if (s === "always") return "always";
  if (s === "unless-stopped" || s === "unlessstopped") return "unless-stopped";
  return s;
}

/** `host`, `container:<id>`, `shareable` and the others, as the namespace answers they give. */
export function namespaceMode(raw: Val<string>): { host: Val<boolean>; joined: string | undefined } {
  if (isUnknown(raw)) return { host: raw, joined: undefined };
  if (raw === undefined) return { host: undefined, joined: undefined };
  const s = raw.trim().toLowerCase();
  if (s === "host") return { host: true, joined: undefined };
  if (s.startsWith("container:") || s.startsWith("service:")) return { host: false, joined: raw.trim() };
  return { host: false, joined: undefined };
}

/**
 * `IpcMode: shareable`: the container's own IPC namespace, which other containers may join (docker v28.5.2
 * `IpcMode.IsShareable`); judged as a joined namespace, as `container:<id>` is, in every Docker format.
 */
export function ipcShareable(raw: Val<string>): boolean {
  return typeof raw === "string" && raw.trim().toLowerCase() === "shareable";
}

/** Splits a Docker `NAME=value` string; a string with no `=` names a variable passed through from the host. */
export function splitEnv(entry: string): { name: string; value: string | undefined } {
  const i = entry.indexOf("=");
  return i < 0 ? { name: entry, value: undefined } : { name: entry.slice(0, i), value: entry.slice(i + 1) };
}

/** `writable-cgroups` as a weakened system path (ContainerView.weakenedSystemPaths), where it was written. */
export function writableCgroupsWeakening(
  flag: Val<boolean>,
  path: string,
): { readonly what: Val<string>; readonly path: string }[] {
  if (isUnknown(flag)) return [{ what: flag, path }];
  return flag === true ? [{ what: "writable-cgroups makes the cgroup files writable", path }] : [];
}

/**
 * A healthcheck's test as the daemon runs it inside the container (moby daemon/health.go getProbe): `CMD` runs the
 * rest as an argv, `CMD-SHELL` runs its command with the container's shell (`/bin/sh -c`), `NONE` runs nothing. An
 * element not known yet stands as itself; a first word the daemon does not know is judged as an argv (fail closed).
 */
export function healthcheckArgs(
  test: Val<readonly Val<string>[]>,
  path: string,
  tainted: (path: string) => boolean,
  marked: (v: Val<string>) => boolean,
): ArgView[] {
  if (isUnknown(test)) return [{ value: test, tainted: tainted(path), path }];
  const l = test ?? [];
  const view = (i: number): ArgView => {
    const p = `${path}[${i}]`;
    return { value: l[i], tainted: tainted(p) || marked(l[i]), path: p };
  };
  const kind = typeof l[0] === "string" ? l[0].trim().toUpperCase() : undefined;
  if (kind === "NONE") return [];
  if (kind === "CMD-SHELL") {
    const shell: ArgView[] = [
      { value: "/bin/sh", tainted: false, path: `${path}[0]` },
      { value: "-c", tainted: false, path: `${path}[0]` },
    ];
    return [...shell, ...l.slice(1).map((_, i) => view(i + 1))];
  }
  return l.map((_, i) => view(i)).slice(kind === "CMD" ? 1 : 0);
}
