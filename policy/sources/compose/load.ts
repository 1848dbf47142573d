/**
 * Loads a Compose project the way `docker compose config` does (compose-go v2 `cli.ProjectFromOptions`): the
 * environment, then `.env` next to the Compose file (the environment wins); every YAML document of the file merged
 * in turn with `!reset` / `!override`; interpolation; `include` (each its own project folder and `.env`, the
 * including file's definitions win); `extends` (same file and `file:`, cycles refused); relative paths resolved
 * against the file that wrote them; `env_file` read into `environment`. Every value taken from outside the file
 * (a variable from the environment or `.env`, an unset variable read as its default) is reported as an assumption.
 */
import { dirname, join, resolve } from "node:path";
import { parseDotenv } from "./dotenv";
import { type ComposeHost, Environment } from "./environment";
import { absPath, expandUser, resolvePaths } from "./host-paths";
import { interpolateModel } from "./interpolate";
import { applyResets, canonical, clone, isMap, type Model, mergeYaml } from "./merge";
import { inlineSeccompProfiles } from "./seccomp-files";
import { ComposeError, type ModelPath, parseComposeYaml } from "./yaml";

export interface LoadedProject {
  readonly model: Model;
  /** Values the scan assumed, e.g. `TAG: taken from the environment`. Never a value (it may be a secret). */
  readonly assumptions: readonly string[];
  /** The project's working folder (relative paths are resolved against it). */
  readonly workingDir: string;
}

interface LoadContext {
  readonly host: ComposeHost;
  readonly env: Environment;
  readonly used: Map<string, string>;
  /** Files being included, outermost first (an include cycle is refused). */
  readonly including: readonly string[];
}

function readSource(ctx: LoadContext, path: string): string {
  try {
    return ctx.host.readFile(path);
  } catch (e) {
    throw new ComposeError(`cannot read ${path}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** Loads the services of an `extends.file` (interpolated, long form, paths against its own folder). */
function loadExtendsBase(ctx: LoadContext, file: string): Model {
  const docs = parseComposeYaml(readSource(ctx, file), file);
  let model: Model = {};
  for (const d of docs) {
    if (!isMap(d.value)) throw new ComposeError("top-level object must be a mapping", undefined, file);
    applyResets(model, [...d.resets, ...d.overrides]);
    model = mergeYaml(
      model,
      canonical(interpolateModel(d.value, ctx.env.lookup(ctx.used)) as Model),
      [],
    ) as Model;
  }
  resolvePaths(model, dirname(file), ctx.env, ctx.used);
  if (!isMap(model.services))
    throw new ComposeError(`cannot extend a service from ${file}: no services section`);
  return model.services;
}

/** Applies `extends` to every service of `model` (a file's model, not yet merged). */
function applyExtends(
  ctx: LoadContext,
  model: Model,
  file: string,
  dir: string,
  resets: readonly ModelPath[],
): void {
  if (!isMap(model.services)) return;
  const services = model.services;
  const resolving = (
    name: string,
    pool: Model,
    poolFile: string,
    poolDir: string,
    chain: readonly string[],
  ): Model => {
    const s = pool[name];
    if (!isMap(s)) throw new ComposeError(`services.${name} must be a mapping`);
    const ext = s.extends;
    if (ext === undefined || ext === null) return s;
    const ref = typeof ext === "string" ? ext : isMap(ext) ? ext.service : undefined;
    if (typeof ref !== "string") throw new ComposeError(`extends.${name}.service is required`);
    const key = `${poolFile}#${name}`;
    if (chain.includes(key))
      throw new ComposeError(`Circular reference with extends: ${[...chain, key].join(" -> ")}`);
    let basePool = pool;
    let baseFile = poolFile;
    let baseDir = poolDir;
    if (isMap(ext) && typeof ext.file === "string") {
      baseFile = resolve(poolDir, expandUser(ext.file, ctx.env, ctx.used));
      baseDir = dirname(baseFile);
      basePool = loadExtendsBase(ctx, baseFile);
    }
    if (!isMap(basePool[ref]))
      throw new ComposeError(`cannot extend service "${name}" in ${poolFile}: service "${ref}" not found`);
    const base = clone(resolving(ref, basePool, baseFile, baseDir, [...chain, key]));
    // The extending file's `!reset` / `!override` paths drop what the base says there (compose-go post.Apply).
    applyResets({ services: { [name]: base } }, resets);
    const merged = mergeYaml(base, s, ["services", "x"]) as Model;
    delete merged.extends;
    pool[name] = merged;
    return merged;
  };
  for (const name of Object.keys(services)) resolving(name, services, file, dir, []);
}

/** `include` entries: each a project of its own, imported under what this file says. */
function applyInclude(ctx: LoadContext, model: Model, dir: string): Model {
  const inc = model.include;
  delete model.include;
  if (inc === undefined || inc === null) return model;
  if (!Array.isArray(inc)) throw new ComposeError("`include` must be a list");
  let imported: Model = {};
  for (const raw of inc) {
    const entry = typeof raw === "string" ? { path: raw } : isMap(raw) ? raw : {};
    const paths = (Array.isArray(entry.path) ? entry.path : [entry.path]).map((p) =>
      resolve(dir, expandUser(String(p), ctx.env, ctx.used)),
    );
    const first = paths[0];
    if (first === undefined) continue;
    if (ctx.including.includes(first))
      throw new ComposeError(`include cycle detected:\n${[...ctx.including, first].join("\n include ")}`);
    const projectDir =
      typeof entry.project_directory === "string"
        ? resolve(dir, expandUser(entry.project_directory, ctx.env, ctx.used))
        : dirname(first);
    const env = ctx.env.clone();
    const envFiles =
      entry.env_file === undefined
        ? [{ path: join(projectDir, ".env"), required: false }]
        : (Array.isArray(entry.env_file) ? entry.env_file : [entry.env_file])
            .filter((f) => f !== "/dev/null")
            .map((f) => ({ path: resolve(dir, String(f)), required: true }));
    for (const f of envFiles) env.addFile(ctx.host, f.path, f.path, f.required);
    const sub: LoadContext = { ...ctx, env, including: [...ctx.including, first] };
    const m = loadModel(sub, paths, projectDir);
    for (const key of ["services", "volumes", "networks", "secrets", "configs"]) {
      const from = m[key];
      if (!isMap(from)) continue;
      imported[key] = { ...(isMap(imported[key]) ? imported[key] : {}), ...from };
    }
  }
  // What this file says itself wins over what it includes.
  imported = mergeYaml(imported, model, []) as Model;
  return imported;
}

/** Loads files (the first is the main one) into one model, as compose-go's loadYamlModel. */
function loadModel(
  ctx: LoadContext,
  files: readonly string[],
  workingDir: string,
  known?: { readonly path: string; readonly text: string },
): Model {
  let model: Model = {};
  files.forEach((file) => {
    const source = file === known?.path ? known.text : readSource(ctx, file);
    for (const d of parseComposeYaml(source, file)) {
      if (!isMap(d.value)) throw new ComposeError("top-level object must be a mapping", undefined, file);
      let cfg = interpolateModel(d.value, ctx.env.lookup(ctx.used)) as Model;
      cfg = applyInclude({ ...ctx, including: [...ctx.including, file] }, cfg, dirname(file));
      applyResets(model, [...d.resets, ...d.overrides]);
      applyExtends(ctx, cfg, file, dirname(file), [...d.resets, ...d.overrides]);
      model = canonical(mergeYaml(model, canonical(cfg), []) as Model);
    }
  });
  resolvePaths(model, workingDir, ctx.env, ctx.used);
  return model;
}

/** Reads `env_file` entries into `environment` (the service's own entries win) and bare names from the env. */
function resolveEnvironment(ctx: LoadContext, model: Model): void {
  for (const [group, entries] of Object.entries({ services: model.services, jobs: model.jobs }))
    if (isMap(entries))
      for (const [name, s] of Object.entries(entries))
        if (isMap(s)) resolveEntryEnvironment(ctx, s, `${group}.${name}`);
}

/**
 * One service's (or job's) `env_file` entries, as compose-go's loadEnvFile reads them: a missing file is an error
 * unless `required: false`, when it adds nothing (stated as an assumption: a file there when docker compose runs
 * could set any variable); `format` is compose-go's dotenv (`.env`, the default) or docker compose's `raw` (each
 * line `KEY=VALUE` as written: no quotes removed, nothing interpolated); any other format is refused, as compose-go
 * refuses it.
 */
function resolveEntryEnvironment(ctx: LoadContext, s: Model, at: string): void {
  const env: Model = {};
  if (Array.isArray(s.env_file))
    for (const f of s.env_file) {
      if (!isMap(f) || typeof f.path !== "string") continue;
      const required = f.required !== false && f.required !== "false";
      const format = f.format === undefined || f.format === null ? "" : String(f.format);
      if (format !== "" && format !== ".env" && format !== "raw")
        throw new ComposeError(
          `${at}.env_file: unsupported env_file format ${JSON.stringify(format)} (compose-go reads .env and raw)`,
        );
      let text: string;
      try {
        text = ctx.host.readFile(f.path);
      } catch {
        if (required) throw new ComposeError(`env file ${f.path} not found`);
        ctx.used.set(
          `env_file ${f.path}`,
          `${at}.env_file ${f.path}: missing and required: false, read as empty (a file there when docker compose runs could set any variable)`,
        );
        continue;
      }
      const read = new Map<string, string>();
      if (format === "raw") {
        for (const line of text.split(/\r?\n/)) {
          const i = line.indexOf("=");
          if (line.trim() === "" || i <= 0) continue;
          read.set(line.slice(0, i), line.slice(i + 1));
        }
      } else parseDotenv(text, f.path, (k) => ctx.env.lookup(ctx.used)(k), read);
      for (const [k, v] of read) env[k] = v;
    }
  const own = isMap(s.environment) ? s.environment : {};
  for (const [k, v] of Object.entries(own)) {
    if (v !== null && v !== undefined) env[k] = v;
    else if (ctx.env.values.has(k)) env[k] = ctx.env.lookup(ctx.used)(k);
    else if (!(k in env)) env[k] = null;
  }
  if (Object.keys(env).length > 0 || s.environment !== undefined) s.environment = env;
}

/** The files of a project found by discovery (compose/discover.ts); without it, the one file alone. */
export interface ProjectFileSet {
  readonly files: readonly string[];
  /** `.env` files, earlier ones winning; by default the working folder's. */
  readonly envFiles: readonly string[];
  readonly assumptions: readonly string[];
}

/**
 * Loads the project of `mainPath` (its text is `source`): that file alone (`docker compose -f <file>`), or the files
 * compose discovers in its folder, merged in order, with their working folder the first file's. Throws
 * {@link ComposeError}.
 */
export function loadComposeProject(
  mainPath: string,
  source: string,
  host: ComposeHost,
  set?: ProjectFileSet,
): LoadedProject {
  const files = set?.files ?? [mainPath];
  const workingDir = dirname(files[0] ?? mainPath);
  const env = Environment.fromHost(host.env);
  for (const f of set?.envFiles ?? [join(workingDir, ".env")])
    env.addFile(host, f, f === join(workingDir, ".env") ? ".env" : f, false);
  const ctx: LoadContext = { host, env, used: new Map(), including: [] };
  const model = loadModel(ctx, files, workingDir, { path: mainPath, text: source });
  resolveEnvironment(ctx, model);
  inlineSeccompProfiles(
    model,
    (p) => absPath(p, workingDir, ctx.env, ctx.used) as string,
    (f) => ctx.host.readFile(f),
  );
  return { model, assumptions: [...(set?.assumptions ?? []), ...ctx.used.values()], workingDir };
}
