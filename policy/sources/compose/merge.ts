/**
 * How compose-go merges Compose models (override/merge.go, uncity.go) and writes short syntax in long form
 * (transform/canonical.go), for the fields the rules read. Pure functions over plain objects.
 */
import type { ModelPath } from "./yaml";
import { ComposeError } from "./yaml";

export type Model = Record<string, unknown>;

export function isMap(v: unknown): v is Model {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function clone<T>(v: T): T {
  return structuredClone(v);
}

/** Deletes the `!reset` / `!override` paths from an earlier model, so the later file's word stands alone. */
export function applyResets(model: Model, paths: readonly ModelPath[]): void {
  for (const p of paths) {
    let cur: unknown = model;
    for (const k of p.slice(0, -1)) cur = isMap(cur) ? cur[k] : undefined;
    const last = p[p.length - 1];
    if (isMap(cur) && last !== undefined) delete cur[last];
  }
}

/** `A=1` / `A` list entries as a map (`A` alone maps to null: resolved from the environment later). */
function keyValueMap(v: unknown, sep = "="): Model {
  if (isMap(v)) return { ...v };
  const out: Model = {};
  for (const e of Array.isArray(v) ? v : []) {
    const s = String(e);
    const i = s.indexOf(sep);
    if (i < 0) out[s] = null;
    else out[s.slice(0, i)] = s.slice(i + 1);
  }
  return out;
}

function toList(v: unknown): unknown[] {
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v : [v];
}

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function appendWithoutDuplicates(a: unknown[], b: unknown[]): unknown[] {
  const out = [...a];
  for (const x of b) if (!out.some((y) => deepEqual(x, y))) out.push(x);
  return out;
}

const SERVICE_SPECIAL: Readonly<Record<string, (a: unknown, b: unknown) => unknown>> = {
  command: (_a, b) => b,
  entrypoint: (_a, b) => b,
  environment: (a, b) => ({ ...keyValueMap(a), ...keyValueMap(b) }),
  labels: (a, b) => ({ ...keyValueMap(a), ...keyValueMap(b) }),
  sysctls: (a, b) => ({ ...keyValueMap(a), ...keyValueMap(b) }),
  annotations: (a, b) => ({ ...keyValueMap(a), ...keyValueMap(b) }),
  env_file: (a, b) => appendWithoutDuplicates(toList(a), toList(b)),
  tmpfs: (a, b) => appendWithoutDuplicates(toList(a), toList(b)),
  dns: (a, b) => appendWithoutDuplicates(toList(a), toList(b)),
  extra_hosts: (a, b) => appendWithoutDuplicates(toList(a), toList(b)),
  networks: (a, b) => mergeYaml(networksMap(a), networksMap(b), ["services", "*", "networks", "*"]),
};

function networksMap(v: unknown): Model {
  if (isMap(v)) return { ...v };
  const out: Model = {};
  for (const n of toList(v)) out[String(n)] = null;
  return out;
}

/** compose-go MergeYaml for the paths the rules read: maps merge, lists append without duplicates, scalars override. */
export function mergeYaml(a: unknown, b: unknown, path: readonly string[]): unknown {
  if (path.length === 3 && (path[0] === "services" || path[0] === "jobs")) {
    const special = SERVICE_SPECIAL[path[2] ?? ""];
    if (special !== undefined) return special(a, b);
  }
  if (b === undefined || b === null) return a;
  if (isMap(a)) {
    if (!isMap(b)) throw new ComposeError(`cannot override ${path.join(".")}`);
    const out: Model = { ...a };
    for (const [k, v] of Object.entries(b)) out[k] = k in out ? mergeYaml(out[k], v, [...path, k]) : v;
    return out;
  }
  if (Array.isArray(a)) {
    if (!Array.isArray(b)) throw new ComposeError(`cannot override ${path.join(".")}`);
    return appendWithoutDuplicates(a, b);
  }
  return b;
}

/** A volume's short syntax (`src:dst:opts`) in long form, as compose-go's ParseVolume writes it. */
export function parseVolume(spec: string): Model {
  if (spec.length === 0) throw new ComposeError("invalid empty volume spec");
  if (spec.length <= 2) return { type: "volume", target: spec };
  const fields: string[] = [];
  let buf = "";
  let depth = 0;
  const chars = [...spec];
  chars.forEach((c, i) => {
    if (c === "$" && chars[i + 1] === "{") {
      depth++;
      buf += c;
    } else if (c === "}" && depth > 0) {
      depth--;
      buf += c;
    } else if (c === ":" && buf.length === 1 && /\p{L}/u.test(buf) && fields.length === 0) {
      buf += c; // a Windows drive letter
    } else if (c === ":" && depth === 0) {
      fields.push(buf);
      buf = "";
    } else buf += c;
  });
  fields.push(buf);
  if (fields.some((f) => f === ""))
    throw new ComposeError(`invalid spec: ${spec}: empty section between colons`);
  if (fields.length > 3) throw new ComposeError(`invalid spec: ${spec}: too many colons`);
  const out: Model = {};
  if (fields.length === 1) out.target = fields[0];
  else {
    out.source = fields[0];
    out.target = fields[1];
  }
  const bind: Model = {};
  for (const o of (fields[2] ?? "").split(",")) {
    if (o === "ro") out.read_only = true;
    else if (o === "rw") out.read_only = false;
    else if (o === "nocopy") out.volume = { nocopy: true };
    else if (/^r?(?:private|shared|slave)$/.test(o)) bind.propagation = o;
    else if (o === "z" || o === "Z") bind.selinux = o;
  }
  const source = typeof out.source === "string" ? out.source : "";
  if (isFilePath(source)) {
    out.type = "bind";
    out.bind = { ...bind, create_host_path: true };
  } else {
    out.type = "volume";
    if (Object.keys(bind).length > 0) out.bind = bind;
    out.volume ??= {};
  }
  if (typeof out.target === "string" && out.target !== "") out.target = cleanPath(out.target);
  return out;
}

/** compose-go isFilePath: `.`, `/`, `~`, a UNC path or a drive letter start a host path; anything else names a volume. */
function isFilePath(s: string): boolean {
  if (s === "") return false;
  if (s[0] === "." || s[0] === "/" || s[0] === "~" || s.startsWith("\\\\")) return true;
  const [first, second] = [...s];
  return second === ":" && first !== undefined && /\p{L}/u.test(first);
}

/** Go's path.Clean. */
export function cleanPath(p: string): string {
  const abs = p.startsWith("/");
  const out: string[] = [];
  for (const seg of p.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") {
      if (out.length > 0 && out[out.length - 1] !== "..") out.pop();
      else if (!abs) out.push("..");
    } else out.push(seg);
  }
  const s = out.join("/");
  return abs ? `/${s}` : s === "" ? "." : s;
}

function device(v: unknown): unknown {
  if (typeof v !== "string") return v;
  const parts = v.split(":");
  const [source, target, permissions] = parts;
  if (parts.length > 3) throw new ComposeError(`invalid device ${v}`);
  return {
    source,
    target: target ?? source,
    permissions: permissions ?? "rwm",
  };
}

function fileMount(v: unknown): unknown {
  return typeof v === "string" ? { source: v } : v;
}

function envFiles(v: unknown): unknown {
  return toList(v).map((e) => (typeof e === "string" ? { path: e, required: true } : e));
}

/** One service in long form: the canonical shapes the mapping reads. */
export function canonicalService(s: unknown): unknown {
  if (!isMap(s)) return s;
  const out: Model = { ...s };
  if (Array.isArray(out.volumes))
    out.volumes = out.volumes.map((v) => (typeof v === "string" ? parseVolume(v) : v));
  if (Array.isArray(out.devices)) out.devices = out.devices.map(device);
  if (Array.isArray(out.secrets)) out.secrets = out.secrets.map(fileMount);
  if (Array.isArray(out.configs)) out.configs = out.configs.map(fileMount);
  if (out.env_file !== undefined && out.env_file !== null) out.env_file = envFiles(out.env_file);
  if (Array.isArray(out.networks)) out.networks = networksMap(out.networks);
  if (typeof out.tmpfs === "string") out.tmpfs = [out.tmpfs];
  for (const k of ["environment", "labels", "sysctls"])
    if (Array.isArray(out[k])) out[k] = keyValueMap(out[k]);
  if (Array.isArray(out.volumes)) out.volumes = uniqueBy(out.volumes, (v) => (isMap(v) ? v.target : v));
  for (const k of ["cap_add", "cap_drop"]) if (Array.isArray(out[k])) out[k] = uniqueBy(out[k], (v) => v);
  return out;
}

/** Keeps the last entry of each key, in first-seen order (compose-go EnforceUnicity). */
function uniqueBy(list: readonly unknown[], key: (v: unknown) => unknown): unknown[] {
  const out = new Map<string, unknown>();
  const anon: unknown[] = [];
  for (const v of list) {
    const k = key(v);
    if (typeof k !== "string") anon.push(v);
    else out.set(k, v);
  }
  return [...out.values(), ...anon];
}

/**
 * compose-go transformMaybeExternal (networks, volumes, secrets, configs): the older `external: {name: x}` is
 * `external: true` with `name: x`; a different `name` next to it is refused.
 */
function externalName(key: string, defs: unknown): unknown {
  if (!isMap(defs)) return defs;
  const out: Model = {};
  for (const [name, d] of Object.entries(defs)) {
    if (!isMap(d) || !isMap(d.external)) {
      out[name] = d;
      continue;
    }
    const r: Model = { ...d, external: true };
    if ("name" in d.external) {
      if ("name" in d && d.name !== d.external.name)
        throw new ComposeError(`${key}.${name}: name and external.name conflict; only use name`);
      r.name = d.external.name;
    }
    out[name] = r;
  }
  return out;
}

/** Every service of a model in long form, and the project's resources' older spellings in today's. */
export function canonical(model: Model): Model {
  const out: Model = { ...model };
  for (const key of ["networks", "volumes", "secrets", "configs"])
    if (key in out) out[key] = externalName(key, out[key]);
  // Jobs are containers with a service's keys: both in long form.
  for (const group of ["services", "jobs"] as const) {
    const entries = model[group];
    if (!isMap(entries)) continue;
    const canon: Model = {};
    for (const [name, s] of Object.entries(entries)) canon[name] = canonicalService(s);
    out[group] = canon;
  }
  return out;
}
