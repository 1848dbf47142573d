/**
 * Relative and home paths of a Compose model resolved as compose-go resolves them (paths.ResolveRelativePaths):
 * files the loader reads against the folder of the file that wrote them, and host paths the daemon mounts kept
 * as the daemon reads them.
 */
import { isAbsolute, join } from "node:path";
import type { Environment } from "./environment";
import { isMap, type Model } from "./merge";

/**
 * Expands `~` with HOME (compose-go ExpandUser: `~x` is `$HOME/x` too; without HOME it stays as written), for files
 * the loader reads; the HOME used is stated as an assumption.
 */
export function expandUser(p: string, env: Environment, used: Map<string, string>): string {
  if (!p.startsWith("~")) return p;
  const home = env.values.get("HOME");
  if (!used.has("~"))
    used.set(
      "~",
      home === undefined
        ? "`~` is the home folder of whoever runs docker compose; HOME is not set here, so files under it are not read"
        : `\`~\` is the home folder of whoever runs docker compose: files under it are read from HOME=${home} (${env.origin.get("HOME") ?? "the environment"}); a host path under \`~\` is judged as a home folder whatever HOME is`,
    );
  return home === undefined ? p : join(home, p.slice(1));
}

/** compose-go paths.IsWindowsAbs: `C:\\x`, `C:/x`, `\\\\host\\share`, `\\\\.\\pipe\\x` (a Windows client or daemon). */
export function isWindowsAbs(p: string): boolean {
  const sep = (c: string | undefined) => c === "\\" || c === "/";
  if (p.length >= 2 && p[1] === ":") return sep(p[2]);
  return p.length >= 2 && sep(p[0]) && sep(p[1]);
}

/** compose-go absPath: `~` expanded, an absolute path kept, anything else joined onto the working folder. */
export function absPath(p: unknown, dir: string, env: Environment, used: Map<string, string>): unknown {
  if (typeof p !== "string" || p === "") return p;
  const x = expandUser(p, env, used);
  return isAbsolute(x) ? x : join(dir, x);
}

/**
 * compose-go maybeUnixPath, for host paths the daemon mounts (bind sources, secret and config files, a local
 * volume's device): kept when absolute for Linux or for Windows (a named pipe, a drive), otherwise joined onto the
 * working folder. A `~` path stays as written, so the rules read it as the home folder of whoever runs compose.
 */
function hostPath(p: unknown, dir: string, env: Environment, used: Map<string, string>): unknown {
  if (typeof p !== "string" || p === "") return p;
  if (p.startsWith("~")) {
    expandUser(p, env, used);
    return p;
  }
  return isAbsolute(p) || isWindowsAbs(p) ? p : join(dir, p);
}

/** Host paths of a model resolved against `dir` (compose-go paths.ResolveRelativePaths, for the fields read). */
export function resolvePaths(model: Model, dir: string, env: Environment, used: Map<string, string>): void {
  for (const group of [model.services, model.jobs].filter(isMap))
    for (const s of Object.values(group)) {
      if (!isMap(s)) continue;
      const develop = isMap(s.develop) ? s.develop : {};
      if (Array.isArray(develop.watch))
        for (const w of develop.watch)
          if (isMap(w) && typeof w.path === "string") w.path = hostPath(w.path, dir, env, used);
      for (const owner of [s, ...(Array.isArray(s.pre_start) ? s.pre_start.filter(isMap) : [])])
        if (Array.isArray(owner.volumes))
          for (const v of owner.volumes)
            if (isMap(v) && v.type === "bind" && typeof v.source === "string")
              v.source = hostPath(v.source, dir, env, used);
      if (Array.isArray(s.env_file))
        for (const f of s.env_file) if (isMap(f)) f.path = absPath(f.path, dir, env, used);
      if (isMap(s.extends) && typeof s.extends.file === "string")
        s.extends.file = absPath(s.extends.file, dir, env, used);
      if (isMap(s.build)) {
        const b = s.build;
        if (typeof b.context === "string" && !/^[a-z][a-z0-9+.-]*:\/\//i.test(b.context))
          b.context = absPath(b.context, dir, env, used);
        if (isMap(b.additional_contexts))
          for (const [k, c] of Object.entries(b.additional_contexts))
            if (typeof c === "string" && !/^[a-z][a-z0-9+.-]*:/i.test(c))
              b.additional_contexts[k] = absPath(c, dir, env, used);
      }
    }
  for (const key of ["secrets", "configs"]) {
    const defs = model[key];
    if (isMap(defs))
      for (const d of Object.values(defs))
        if (isMap(d) && d.file !== undefined) d.file = hostPath(d.file, dir, env, used);
  }
  if (isMap(model.volumes))
    for (const v of Object.values(model.volumes)) {
      // compose-go volumeDriverOpts: only `driver: local` with `o: bind` exactly. Every other device goes to the
      // daemon as written, where a relative one is read from dockerd's working folder (the rules read it from /).
      if (!isMap(v) || v.driver !== "local" || !isMap(v.driver_opts)) continue;
      if (v.driver_opts.o === "bind" && "device" in v.driver_opts)
        v.driver_opts.device = hostPath(v.driver_opts.device, dir, env, used);
    }
}
