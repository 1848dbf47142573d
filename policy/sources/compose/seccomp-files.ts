/** Seccomp profile files a Compose service names, as Compose sends them to the daemon. */
import { Unreadable } from "../../workload";
import { isMap, type Model } from "./merge";

/**
 * `security_opt: seccomp=<file>` as Compose sends it (docker/compose `parseSecurityOpts`): a value other than
 * `unconfined` or `builtin` names a profile file, relative to the project folder, whose JSON text replaces the
 * path; the daemon then judges that text as the profile. A file the scan cannot read is unreadable (Compose would
 * refuse the project): the rules fail closed on it.
 */
export function inlineSeccompProfiles(
  model: Model,
  resolvePath: (p: string) => string,
  readFile: (path: string) => string,
): void {
  if (!isMap(model.services)) return;
  for (const s of Object.values(model.services)) {
    if (!isMap(s) || !Array.isArray(s.security_opt)) continue;
    s.security_opt = s.security_opt.map((opt: unknown) => {
      if (typeof opt !== "string" || opt === "systempaths=unconfined") return opt;
      const sep = opt.includes("=") ? "=" : opt.includes(":") ? ":" : undefined;
      if (sep === undefined) return opt;
      const i = opt.indexOf(sep);
      const [key, value] = [opt.slice(0, i), opt.slice(i + 1)];
      if (key !== "seccomp" || value === "unconfined" || value === "builtin") return opt;
      const path = resolvePath(value);
      try {
        return `seccomp=${readFile(path)}`;
      } catch (e) {
        return new Unreadable(
          `Compose sends the seccomp profile file ${path} as the option's value, and the scan cannot read it (${e instanceof Error ? e.message : String(e)})`,
        );
      }
    });
  }
}
