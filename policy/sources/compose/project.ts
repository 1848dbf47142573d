/**
 * What a Compose service gets from the rest of its project, as `docker.Container` props: named volumes with their
 * driver and options (`volumeOptions`, judged by the adapter as the daemon mounts them), secrets and configs with a `file:` source (read-only bind
 * mounts of that host file), `volumes_from` a service (its mounts), `network_mode: service:x` (x's network), and
 * networks whose driver is `host` (host networking whatever the network is called) or `none`.
 */
import { Unreadable } from "../../workload";
import { bridgeOptionProblems } from "../docker/bridge";
import type { UnjudgedField } from "../verdict";
import { isMap, type Model } from "./merge";
import { composeServiceToContainerProps } from "./service-props";

type Props = Record<string, unknown>;

/**
 * A top-level named volume's driver and options, as the provider's `volumeOptions` of the mount (Compose creates the
 * volume with them).
 */
function volumeOptions(def: unknown): Props | undefined {
  if (!isMap(def)) return undefined;
  const driverName = def.driver === undefined || def.driver === null ? "local" : String(def.driver);
  // A plugin driver is judged whatever its options (it mounts what they say); a local volume only by its options.
  if (!isMap(def.driver_opts) && ["local", ""].includes(driverName.trim())) return undefined;
  const opts = isMap(def.driver_opts) ? def.driver_opts : {};
  const driverOptions = Object.fromEntries(Object.entries(opts).map(([k, v]) => [k, String(v)]));
  return { driverName, driverOptions };
}

/**
 * An `external: true` volume: Compose creates nothing and mounts the engine's existing volume of that name (it stops
 * when there is none), whatever driver and options it was made with, which the file does not hold: a local bind of
 * /run, an NFS share. It is judged as a volume whose options cannot be read, as a plugin driver's are.
 */
function externalVolume(key: string, def: Model): Unreadable {
  const name = typeof def.name === "string" && def.name !== "" ? def.name : key;
  return new Unreadable(
    `the volume "${key}" is external (external: true, the engine's volume ${JSON.stringify(name)}): Compose mounts the existing volume of that name, made outside this file, whose driver and options (a bind of a host folder, a network share) are not in the input; declare the volume in the file without external (Compose creates it with the driver and options written there) or exempt it`,
  );
}

/** compose-go's project name normalization: lower case, only `a-z0-9_-`, starting with a letter or digit. */
function projectName(project: Model): string | undefined {
  if (typeof project.name !== "string") return undefined;
  const n = project.name
    .toLowerCase()
    .replace(/[^a-z0-9_-]/g, "")
    .replace(/^[^a-z0-9]+/, "");
  return n === "" ? undefined : n;
}

/**
 * A volume whose `name:` is not the project's own `<project>_<key>` (the name Compose gives a volume without one): an
 * engine volume of that name may exist already, made outside this file, and Compose mounts it: its ensureVolume
 * (docker/compose pkg/compose/create.go) inspects the name first and, when there is such a volume, uses it and only
 * warns that Compose did not create it, or created it for another project; the file's driver and options apply only
 * when there is none. So it is judged as an external volume is: its driver and options are not in the input.
 */
function namedVolume(key: string, def: Model, project: Model): Unreadable | undefined {
  if (def.name === undefined || def.name === null) return undefined;
  const name = String(def.name);
  const own = projectName(project);
  if (own !== undefined && name === `${own}_${key}`) return undefined;
  const scoped = own === undefined ? `<project>_${key}` : `${own}_${key}`;
  return new Unreadable(
    `the volume "${key}" has name: ${JSON.stringify(name)}, not the project's own ${JSON.stringify(scoped)}: when the engine already has a volume of that name, Compose mounts it and only warns that it did not create it, so the volume may be one made outside this file, whose driver and options (a bind of a host folder, a network share) are not in the input; drop name: (Compose names the volume ${JSON.stringify(scoped)} and creates it with the driver and options written here), or exempt it`,
  );
}

/** Secrets and configs with a host file source, as the bind mounts Compose makes of them. */
function fileMounts(service: Model, project: Model): Props[] {
  const out: Props[] = [];
  for (const [key, dir] of [
    ["secrets", "/run/secrets"],
    ["configs", ""],
  ] as const) {
    const defs = isMap(project[key]) ? project[key] : {};
    for (const ref of Array.isArray(service[key]) ? service[key] : []) {
      const source = isMap(ref) ? String(ref.source ?? "") : String(ref);
      const def = defs[source];
      if (!isMap(def) || typeof def.file !== "string") continue;
      const t = isMap(ref) && typeof ref.target === "string" ? ref.target : source;
      const target = t.startsWith("/") ? t : `${dir}/${t}`;
      out.push({ type: "bind", source: def.file, target, readOnly: true });
    }
  }
  return out;
}

/**
 * Every secret a service names, as the file Compose gives it at `/run/secrets/<name>` (or its `target`), whatever
 * the secret's source (`file`, `environment`, `external`): a Secret mount, as a Kubernetes Secret volume is. A config
 * whose source is a variable of the environment docker compose runs in (`environment:`) is the same: that host value
 * written into the container.
 */
function secretMounts(service: Model, project: Model): Props[] {
  const out: Props[] = [];
  for (const ref of Array.isArray(service.secrets) ? service.secrets : []) {
    const source = isMap(ref) ? String(ref.source ?? "") : String(ref);
    const t = isMap(ref) && typeof ref.target === "string" ? ref.target : source;
    out.push({ name: source, target: t.startsWith("/") ? t : `/run/secrets/${t}` });
  }
  const configs = isMap(project.configs) ? project.configs : {};
  for (const ref of Array.isArray(service.configs) ? service.configs : []) {
    const source = isMap(ref) ? String(ref.source ?? "") : String(ref);
    const def = configs[source];
    if (!isMap(def) || typeof def.environment !== "string") continue;
    const t = isMap(ref) && typeof ref.target === "string" ? ref.target : `/${source}`;
    out.push({
      name: `config ${source} (the host's ${def.environment})`,
      target: t.startsWith("/") ? t : `/${t}`,
    });
  }
  return out;
}

/** Configs written inline (`content:`), as files the container gets with that text (judged as uploads are). */
function inlineConfigs(service: Model, project: Model): Props[] {
  const configs = isMap(project.configs) ? project.configs : {};
  return (Array.isArray(service.configs) ? service.configs : []).flatMap((ref) => {
    const source = isMap(ref) ? String(ref.source ?? "") : String(ref);
    const def = configs[source];
    if (!isMap(def) || typeof def.content !== "string") return [];
    const t = isMap(ref) && typeof ref.target === "string" ? ref.target : `/${source}`;
    return [{ file: t.startsWith("/") ? t : `/${t}`, content: def.content }];
  });
}

/** The networks a service joins: its `networks`, or the project's `default` network when it names none. */
function attachedNetworks(s: Model): string[] {
  if (isMap(s.networks)) return Object.keys(s.networks);
  if (Array.isArray(s.networks)) return s.networks.map(String);
  return s.network_mode === undefined ? ["default"] : [];
}

/**
 * The engine's name of a project network: its `name:` when set; the key itself for an external network; otherwise
 * Compose prefixes the project's name (`<project>_<key>`), which is never one of the engine's own networks.
 */
function realName(key: string, def: unknown): string | undefined {
  if (isMap(def) && typeof def.name === "string") return def.name.trim().toLowerCase();
  const external = isMap(def) && (def.external === true || isMap(def.external));
  return external ? key.toLowerCase() : undefined;
}

/**
 * The bridge options of the networks a service joins that reach the host (policy/sources/docker/bridge.ts), as
 * fields that fail closed on the service: Compose creates each network with its `driver_opts`.
 */
export function networkOptionFields(name: string, project: Model): UnjudgedField[] {
  const services = isMap(project.services) ? project.services : {};
  const s = services[name];
  if (!isMap(s)) return [];
  const nets = isMap(project.networks) ? project.networks : {};
  return attachedNetworks(s).flatMap((n) => {
    const def = nets[n];
    if (!isMap(def)) return [];
    const driver = typeof def.driver === "string" ? def.driver.trim().toLowerCase() : "bridge";
    if (driver !== "bridge" && driver !== "") return [];
    return bridgeOptionProblems(def.driver_opts).map((p) => ({
      path: `networks.${n}.driver_opts.${p.key}`,
      field: `networks.driver_opts.${p.key}`,
      reason: `service "${name}" joins network "${n}", whose ${p.reason}`,
    }));
  });
}

/** The service's networks whose driver gives it an address on the host's network (macvlan, ipvlan). */
function hostLanNetworks(s: Model, project: Model): Props[] {
  const nets = isMap(project.networks) ? project.networks : {};
  return attachedNetworks(s).flatMap((n) => {
    const def = nets[n];
    const driver = isMap(def) && typeof def.driver === "string" ? def.driver.trim().toLowerCase() : "";
    return driver === "macvlan" || driver === "ipvlan" ? [{ name: n, driver }] : [];
  });
}

/** The service's network mode, following `service:x` and network drivers. */
function networkMode(name: string, services: Model, project: Model, seen: Set<string>): string | undefined {
  const s = services[name];
  if (!isMap(s)) return undefined;
  const mode = typeof s.network_mode === "string" ? s.network_mode : undefined;
  if (mode?.startsWith("service:")) {
    const target = mode.slice("service:".length);
    if (seen.has(target)) return mode;
    seen.add(target);
    const joined = networkMode(target, services, project, seen);
    // Joining a service that runs in the host's namespace is the host's namespace.
    return joined === "host" ? "host" : mode;
  }
  if (mode !== undefined) return mode;
  const nets = isMap(project.networks) ? project.networks : {};
  for (const n of attachedNetworks(s)) {
    const def = nets[n];
    const driver = isMap(def) && typeof def.driver === "string" ? def.driver.trim().toLowerCase() : "";
    // The engine's network named `host` is host networking, whatever the project calls it (`external: true`).
    if (driver === "host" || realName(n, def) === "host") return "host";
  }
  for (const n of attachedNetworks(s)) {
    const def = nets[n];
    if (
      (isMap(def) && typeof def.driver === "string" && def.driver.trim().toLowerCase() === "none") ||
      realName(n, def) === "none"
    )
      return "none";
  }
  return undefined;
}

/** Mounts a service has, after its named volumes and file sources are resolved (for itself and volumes_from). */
function mountsOf(name: string, services: Model, project: Model): Props[] {
  const s = services[name];
  if (!isMap(s)) return [];
  const props = composeServiceToContainerProps(name, s);
  const vols = isMap(project.volumes) ? project.volumes : {};
  const mounts = (Array.isArray(props.mounts) ? props.mounts : []).map((m: Props) => {
    if (m.type !== "volume" || typeof m.source !== "string") return m;
    const def = vols[m.source];
    if (isMap(def) && (def.external === true || isMap(def.external)))
      return { ...m, volumeOptions: externalVolume(m.source, def) };
    const elsewhere = isMap(def) ? namedVolume(m.source, def, project) : undefined;
    if (elsewhere !== undefined) return { ...m, volumeOptions: elsewhere };
    // The docker.Container adapter judges what the local driver's options expose (a bind, an overlay, a device).
    const volumeOpts = volumeOptions(def);
    return volumeOpts === undefined ? m : { ...m, volumeOptions: volumeOpts };
  });
  return [...mounts, ...fileMounts(s, project), ...watchMounts(s)];
}

/**
 * `develop.watch` entries that sync (`sync`, `sync+restart`, `sync+exec`): docker compose copies the host folder at
 * `path` into the container at `target`, first in full with `initial_sync`, then on every change. The container sees
 * the host's files as a read-only bind would show them, so they are judged as one.
 */
function watchMounts(service: Model): Props[] {
  const develop = isMap(service.develop) ? service.develop : {};
  return (Array.isArray(develop.watch) ? develop.watch : []).flatMap((w) =>
    isMap(w) && typeof w.action === "string" && w.action.startsWith("sync") && typeof w.path === "string"
      ? [
          {
            type: "bind",
            source: w.path,
            target: typeof w.target === "string" ? w.target : w.path,
            readOnly: true,
          },
        ]
      : [],
  );
}

/** A service of a loaded project as `docker.Container` props. */
export function projectServiceProps(name: string, project: Model): Props {
  const services = isMap(project.services) ? project.services : {};
  const s = isMap(services[name]) ? services[name] : {};
  const props = composeServiceToContainerProps(name, s);
  const mounts = mountsOf(name, services, project);
  const volumesFrom: Props[] = [];
  for (const raw of Array.isArray(s.volumes_from) ? s.volumes_from : []) {
    const spec = String(raw);
    const parts = spec.split(":");
    const isContainer = parts[0] === "container";
    const ref = isContainer ? (parts[1] ?? "") : parts[0] === "service" ? (parts[1] ?? "") : (parts[0] ?? "");
    const ro = parts[parts.length - 1] === "ro";
    if (!isContainer && isMap(services[ref]) && ref !== name) {
      // Every mount of that service, read-only when `:ro` says so.
      for (const m of mountsOf(ref, services, project)) mounts.push(ro ? { ...m, readOnly: true } : m);
    } else volumesFrom.push({ fromContainer: ref, readOnly: ro });
  }
  const secrets = secretMounts(s, project);
  const inline = inlineConfigs(s, project);
  // docker compose writes inline configs into the container before it starts, as the provider's uploads are.
  if (inline.length > 0) props.uploads = inline;
  // Not a @pulumi/docker input: the scanner's Compose reader carries a service's secrets under this name.
  if (secrets.length > 0) props.secretMounts = secrets;
  if (mounts.length > 0) props.mounts = mounts;
  else delete props.mounts;
  if (volumesFrom.length > 0) props.volumes = volumesFrom;
  else delete props.volumes;
  const mode = networkMode(name, services, project, new Set([name]));
  if (mode !== undefined) props.networkMode = mode;
  const lan = mode === undefined ? hostLanNetworks(s, project) : [];
  if (lan.length > 0) props.networksAdvanced = lan;
  return props;
}
