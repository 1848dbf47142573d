/**
 * Docker spellings shared by the `docker.Container` adapter and the Engine API launch-spec adapter: security
 * options, users, restart policies and namespace modes mean the same in both.
 */
import { isUnknown, type ProfileType, UNKNOWN, type Val } from "../workload";

/** What a list of `--security-opt` strings says. Each field is absent when no option speaks to it. */
export interface SecurityOpts {
  readonly noNewPrivileges: Val<boolean>;
  readonly seccomp: Val<ProfileType>;
  readonly appArmor: Val<ProfileType>;
  readonly seLinux: Val<{ disabled: boolean; type?: string; user?: string; role?: string }>;
  /** `systempaths=unconfined` unmasks /proc and /sys like Kubernetes `procMount: Unmasked`. */
  readonly procMount: Val<string>;
}

/**
 * Reads security options in every spelling Docker accepts: `no-new-privileges`, `no-new-privileges:true`,
 * `no-new-privileges=true`, `seccomp=unconfined`, `seccomp:unconfined`, `apparmor=unconfined`, `label=disable`,
 * `label:disable`, `label=type:spc_t`, `systempaths=unconfined`. Unknown entries make the affected answers unknown.
 */
export function parseSecurityOpts(opts: Val<readonly Val<string>[]>): SecurityOpts {
  if (isUnknown(opts)) {
    return {
      noNewPrivileges: UNKNOWN,
      seccomp: UNKNOWN,
      appArmor: UNKNOWN,
      seLinux: UNKNOWN,
      procMount: UNKNOWN,
    };
  }
  let nnp: Val<boolean>;
  let seccomp: Val<ProfileType> = "RuntimeDefault"; // Docker applies its default profile unless told otherwise.
  let appArmor: Val<ProfileType>;
  let seLinux: Val<{ disabled: boolean; type?: string; user?: string; role?: string }>;
  let procMount: Val<string>;
  let sawUnknown = false;
  for (const raw of opts ?? []) {
    if (typeof raw !== "string") {
      if (isUnknown(raw)) sawUnknown = true;
      continue;
    }
    const s = raw.trim();
    const m = /^([A-Za-z-]+)\s*(?:[:=]\s*(.*))?$/.exec(s);
    if (m === null) continue;
    const key = (m[1] ?? "").toLowerCase();
    const value = (m[2] ?? "").trim();
    const v = value.toLowerCase();
    switch (key) {
      case "no-new-privileges":
        nnp = v === "" || v === "true" || v === "1" || v === "yes";
        break;
      case "seccomp":
        seccomp =
          v === "unconfined"
            ? "Unconfined"
            : v === "builtin" || v === "runtime/default"
              ? "RuntimeDefault"
              : "Localhost";
        break;
      case "apparmor":
        appArmor =
          v === "unconfined"
            ? "Unconfined"
            : v === "docker-default" || v === "runtime/default"
              ? "RuntimeDefault"
              : "Localhost";
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
  if (sawUnknown) {
    // An unknown option may be any of these: only a known, explicit answer stands.
    return {
      noNewPrivileges: nnp === true ? true : UNKNOWN,
      seccomp: seccomp === "Unconfined" ? seccomp : UNKNOWN,
      appArmor: appArmor === "Unconfined" ? appArmor : UNKNOWN,
      seLinux: typeof seLinux === "object" && "disabled" in seLinux && seLinux.disabled ? seLinux : UNKNOWN,
      procMount: procMount ?? UNKNOWN,
    };
  }
  return { noNewPrivileges: nnp, seccomp, appArmor, seLinux, procMount };
}

/** A Docker `user` (`root`, `0`, `0:0`, `1000`, `1000:0`, `app`, `app:staff`) as uid, gid and names. */
export interface DockerUser {
  readonly uid: Val<number>;
  readonly gid: Val<number>;
  /** The user given by name when it is not numeric. */
  readonly name: Val<string>;
}

export function parseDockerUser(user: Val<string>): DockerUser {
  if (isUnknown(user)) return { uid: UNKNOWN, gid: UNKNOWN, name: UNKNOWN };
  if (user === undefined || user.trim() === "") return { uid: undefined, gid: undefined, name: undefined };
  const [u = "", g] = user.trim().split(":", 2);
  const numeric = (s: string) => (/^\d+$/.test(s.trim()) ? Number(s.trim()) : undefined);
  const uid = numeric(u);
  // A group given by name: `root` is gid 0; any other name cannot be resolved without the image.
  const gid =
    g === undefined ? undefined : (numeric(g) ?? (g.trim().toLowerCase() === "root" ? 0 : undefined));
  return {
    uid: uid ?? (u.trim().toLowerCase() === "root" ? 0 : undefined),
    gid,
    name: uid === undefined ? u.trim() : undefined,
  };
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
  if (isUnknown(raw)) return { host: UNKNOWN, joined: undefined };
  if (raw === undefined) return { host: undefined, joined: undefined };
  const s = raw.trim().toLowerCase();
  if (s === "host") return { host: true, joined: undefined };
  if (s.startsWith("container:") || s.startsWith("service:")) return { host: false, joined: raw.trim() };
  return { host: false, joined: undefined };
}

/** Splits a Docker `NAME=value` string; a string with no `=` names a variable passed through from the host. */
export function splitEnv(entry: string): { name: string; value: string | undefined } {
  const i = entry.indexOf("=");
  return i < 0 ? { name: entry, value: undefined } : { name: entry.slice(0, i), value: entry.slice(i + 1) };
}
