/**
 * A Compose service -> the props of a `docker.Container` (@pulumi/docker's names), so that the one Docker adapter
 * (`adaptResource("docker:index/container:Container", ...)`) reads it and every rule judges it the way it judges a
 * hand-written container. Only the mapping lives here; no rule logic.
 *
 * Compose spellings read (Compose specification): `image`, `command`, `entrypoint`, `user`, `privileged`, `read_only`,
 * `cap_add`, `cap_drop`, `security_opt`, `ports` (short and long syntax), `volumes` (short and long syntax),
 * `volumes_from`, `tmpfs`, `environment` (list and map), `network_mode`, `pid`, `ipc`, `userns_mode`, `cgroup`,
 * `devices`, `device_cgroup_rules`, `gpus`, `sysctls` (list and map), `mem_limit`, `memswap_limit`, `cpus`,
 * `cpu_quota`/`cpu_period`, `deploy.resources.limits`, `deploy.resources.reservations.devices`, `restart`,
 * `deploy.restart_policy`, `runtime`, `init`, `group_add`, `labels`, `pids_limit` and `deploy.resources.limits.pids`,
 * `uts`, `use_api_socket`, `healthcheck` (its test, which the daemon runs in the container). Hooks, builds and providers are read by `compose/hooks.ts` and `compose/services.ts`. A loaded project's own parts (named volumes, secrets, configs, `volumes_from`, networks) are added by
 * `compose/project.ts`; the loader (`compose/load.ts`) hands this the long syntax compose-go writes.
 */
import { isUnreadable } from "../../workload";

/** Keys of a service this converter reads; a finding on a Docker prop points at the Compose key that wrote it. */
export const COMPOSE_KEY_OF_PROP: Readonly<Record<string, readonly string[]>> = {
  image: ["image"],
  command: ["command"],
  entrypoints: ["entrypoint"],
  user: ["user"],
  privileged: ["privileged"],
  readOnly: ["read_only"],
  capabilities: ["cap_drop", "cap_add"],
  securityOpts: ["security_opt"],
  ports: ["ports"],
  mounts: ["volumes", "secrets", "configs", "volumes_from", "use_api_socket"],
  secretMounts: ["secrets"],
  healthcheck: ["healthcheck"],
  volumes: ["volumes_from", "volumes"],
  tmpfs: ["tmpfs"],
  envs: ["environment", "env_file"],
  networkMode: ["network_mode", "networks"],
  utsMode: ["uts"],
  pidMode: ["pid"],
  ipcMode: ["ipc"],
  usernsMode: ["userns_mode"],
  cgroupnsMode: ["cgroup"],
  devices: ["devices"],
  deviceCgroupRules: ["device_cgroup_rules"],
  deviceRequests: ["deploy"],
  gpus: ["gpus"],
  sysctls: ["sysctls"],
  memory: ["mem_limit", "deploy"],
  memorySwap: ["memswap_limit"],
  cpus: ["cpus", "deploy"],
  cpuQuota: ["cpu_quota"],
  restart: ["restart", "deploy"],
  runtime: ["runtime"],
  groupAdds: ["group_add"],
  labels: ["labels"],
};

const MB = 1024 * 1024;

function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function asList(v: unknown): unknown[] {
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v : [v];
}

function scalar(v: unknown): string | undefined {
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return undefined;
}

/**
 * Compose byte values as compose-go reads them (go-units `RAMInBytes`): a decimal number, an optional space, then
 * nothing, `b`, or one of `k m g t p` (powers of 1024) followed by nothing, `b` or `ib`, in any case (`512m`, `1.5GB`,
 * `1GiB`, `2048 k`, `1p`); bytes are truncated to a whole number. Undefined when unreadable.
 */
export function composeBytes(v: unknown): number | undefined {
  if (typeof v === "number") return Number.isFinite(v) ? v : undefined;
  if (typeof v !== "string") return undefined;
  const m = /^((?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?) ?([a-z]*)$/i.exec(v);
  if (m === null) return undefined;
  const size = Number(m[1]);
  const suffix = (m[2] ?? "").toLowerCase();
  if (suffix === "" || suffix === "b") return Math.trunc(size);
  const pow = { k: 1, m: 2, g: 3, t: 4, p: 5 }[suffix[0] ?? ""];
  if (pow === undefined || !["", "b", "ib"].includes(suffix.slice(1))) return undefined;
  return Math.trunc(size * 1024 ** pow);
}

/** Bytes as @pulumi/docker's megabytes; a value that cannot be read is kept as written so nothing passes silently. */
function megabytes(v: unknown): unknown {
  if (v === undefined || v === null) return undefined;
  if (v === -1 || v === "-1") return -1;
  const b = composeBytes(v);
  return b === undefined ? v : b / MB;
}

/** Splits a Compose command string the way a shell would for plain words (quotes kept together). */
function words(v: unknown): string[] | undefined {
  if (Array.isArray(v)) return v.map((x) => scalar(x) ?? "");
  const s = scalar(v);
  if (s === undefined) return undefined;
  return (s.match(/"[^"]*"|'[^']*'|\S+/g) ?? []).map((w) => w.replace(/^(["'])(.*)\1$/, "$2"));
}

/**
 * `healthcheck` as the provider's `healthcheck.tests`: compose-go turns a string `test` into `["CMD-SHELL", test]`
 * and `disable: true` into `["NONE"]`; a list is the Engine's own form.
 */
function healthcheck(h: unknown): Record<string, unknown> | undefined {
  if (!isMap(h)) return undefined;
  if (h.disable === true) return { tests: ["NONE"] };
  if (typeof h.test === "string") return { tests: ["CMD-SHELL", h.test] };
  return Array.isArray(h.test) ? { tests: h.test.map(String) } : undefined;
}

/** `environment` as a list (`A=1`, `B`) or a map (`A: 1`, `B:` passes B through from the host). */
function envs(v: unknown): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (isMap(v)) {
    return Object.entries(v).map(([k, x]) => {
      const s = scalar(x);
      return s === undefined ? k : `${k}=${s}`;
    });
  }
  return asList(v).map((x) => scalar(x) ?? "");
}

/** `labels` as a list (`a=b`) or a map, in @pulumi/docker's `{label, value}` list. */
function labels(v: unknown): { label: string; value: string }[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (isMap(v)) return Object.entries(v).map(([label, x]) => ({ label, value: scalar(x) ?? "" }));
  return asList(v).map((x) => {
    const s = scalar(x) ?? "";
    const i = s.indexOf("=");
    return i < 0 ? { label: s, value: "" } : { label: s.slice(0, i), value: s.slice(i + 1) };
  });
}

/** Short port syntax: `80`, `8080:80`, `127.0.0.1:8080:80/udp`, `[::1]:8080:80`, `3000-3005`. */
function port(v: unknown): Record<string, unknown> {
  if (isMap(v)) {
    const published = scalar(v.published);
    return {
      internal: scalar(v.target),
      ...(published === undefined ? {} : { external: published.split("-")[0] }),
      ...(scalar(v.host_ip) === undefined ? {} : { ip: scalar(v.host_ip) }),
      ...(scalar(v.protocol) === undefined ? {} : { protocol: scalar(v.protocol) }),
    };
  }
  const s = (scalar(v) ?? "").trim();
  const [spec = "", protocol] = s.split("/");
  let ip: string | undefined;
  let rest = spec;
  const v6 = /^\[([^\]]*)\]:(.*)$/.exec(spec);
  if (v6 !== null) {
    ip = v6[1];
    rest = v6[2] ?? "";
  }
  const parts = rest.split(":");
  if (v6 === null && parts.length === 3) ip = parts.shift();
  const container = parts.pop() ?? "";
  const host = parts.pop();
  return {
    internal: container.split("-")[0],
    ...(host === undefined || host === "" ? {} : { external: host.split("-")[0] }),
    ...(ip === undefined || ip === "" ? {} : { ip }),
    ...(protocol === undefined ? {} : { protocol }),
  };
}

/** A host path as Compose reads a volume source: absolute, `./`, `../`, `~`; anything else names a volume. */
function isHostPath(source: string): boolean {
  return (
    source.startsWith("/") ||
    source.startsWith(".") ||
    source.startsWith("~") ||
    /^[A-Za-z]:[\\/]/.test(source)
  );
}

/** Short volume syntax: `/c`, `named:/c`, `./host:/c:ro,z`; long syntax `{type, source, target, read_only, bind}`. */
function mount(v: unknown): Record<string, unknown> {
  if (isMap(v)) {
    const type = scalar(v.type) ?? "volume";
    const propagation = isMap(v.bind) ? scalar(v.bind.propagation) : undefined;
    return {
      type,
      ...(scalar(v.source) === undefined ? {} : { source: scalar(v.source) }),
      target: scalar(v.target),
      // Kept as written when it is not a plain flag, so the adapter fails closed on it instead of reading "no".
      readOnly: v.read_only === undefined || v.read_only === null ? false : v.read_only,
      ...(propagation === undefined ? {} : { bindOptions: { propagation } }),
    };
  }
  const s = scalar(v) ?? "";
  const parts = s.split(":");
  if (parts.length === 1) return { type: "volume", target: s, readOnly: false };
  const [source = "", target = "", opts = ""] = parts;
  const flags = opts.split(",").map((o) => o.trim().toLowerCase());
  const propagation = flags.find((f) => /^r?(?:shared|slave|private)$/.test(f));
  return {
    type: isHostPath(source) ? "bind" : "volume",
    source,
    target,
    readOnly: flags.includes("ro"),
    ...(propagation === undefined ? {} : { bindOptions: { propagation } }),
  };
}

/** `devices`: `/dev/x`, `/dev/x:/dev/y:rwm`, or `{source, target, permissions}`. */
function device(v: unknown): Record<string, unknown> {
  if (isMap(v)) return { hostPath: scalar(v.source), containerPath: scalar(v.target) };
  const [hostPath, containerPath] = (scalar(v) ?? "").split(":");
  return { hostPath, ...(containerPath === undefined ? {} : { containerPath }) };
}

function sysctls(v: unknown): Record<string, string> | undefined {
  if (v === undefined || v === null) return undefined;
  const out: Record<string, string> = {};
  if (isMap(v)) for (const [k, x] of Object.entries(v)) out[k] = scalar(x) ?? "";
  else
    for (const x of asList(v)) {
      const s = scalar(x) ?? "";
      const i = s.indexOf("=");
      out[i < 0 ? s : s.slice(0, i)] = i < 0 ? "" : s.slice(i + 1);
    }
  return out;
}

function tmpfs(v: unknown): Record<string, string> | undefined {
  if (v === undefined || v === null) return undefined;
  const out: Record<string, string> = {};
  for (const x of asList(v)) {
    const s = scalar(x) ?? "";
    const i = s.indexOf(":");
    out[i < 0 ? s : s.slice(0, i)] = i < 0 ? "" : s.slice(i + 1);
  }
  return out;
}

/**
 * The restart policy docker compose sends (pkg/compose/create.go getRestartPolicy): `deploy.restart_policy`, when
 * present, replaces `restart`; each is mapped by mapRestartPolicyCondition (`none`/`no` no restart, `any`/`always`
 * always, `on-failure`, `unless-stopped`, anything else as written), and a policy that names no condition is the
 * engine's empty policy: no restart. `restart`'s `:<retries>` is dropped.
 */
function restartPolicy(service: Record<string, unknown>): string | undefined {
  const condition = (c: string): string =>
    c === "none" || c === "no" || c === "" ? "no" : c === "any" || c === "always" ? "always" : c;
  const deploy = isMap(service.deploy) ? service.deploy : undefined;
  if (deploy !== undefined && isMap(deploy.restart_policy))
    return condition(scalar(deploy.restart_policy.condition) ?? "");
  const restart = scalar(service.restart);
  return restart === undefined ? undefined : condition(restart.split(":")[0] ?? "");
}

/**
 * A service key and its `deploy.resources.limits` counterpart, as docker compose applies them (setLimits): the limit
 * replaces the key when it is set and not zero (for pids, above zero). compose-go refuses two distinct non-zero
 * values, so this only decides between a zero and a value.
 */
function limitOver(limit: unknown, key: unknown, set: (v: unknown) => boolean): unknown {
  return limit !== undefined && limit !== null && set(limit) ? limit : key;
}
const nonZero = (v: unknown): boolean => !(v === 0 || v === "0" || v === "");
const positive = (v: unknown): boolean =>
  !(typeof v === "number" ? v <= 0 : /^\s*(-|0+\s*$)/.test(String(v)));

/** Converts one Compose service to `docker.Container` props. `name` is the service's key. */
export function composeServiceToContainerProps(name: string, service: unknown): Record<string, unknown> {
  const s = isMap(service) ? service : {};
  const deploy = isMap(s.deploy) ? s.deploy : {};
  const resources = isMap(deploy.resources) ? deploy.resources : {};
  const limits = isMap(resources.limits) ? resources.limits : {};
  const reservations = isMap(resources.reservations) ? resources.reservations : {};
  const props: Record<string, unknown> = {
    name: scalar(s.container_name) ?? name,
    image: scalar(s.image) ?? (s.build === undefined ? undefined : `${name} (built from source)`),
    command: words(s.command),
    entrypoints: words(s.entrypoint),
    user: scalar(s.user),
    privileged: s.privileged,
    readOnly: s.read_only,
    securityOpts:
      s.security_opt === undefined
        ? undefined
        : asList(s.security_opt).map((x) => (isUnreadable(x) ? x : (scalar(x) ?? ""))),
    ports: s.ports === undefined ? undefined : asList(s.ports).map(port),
    mounts: s.volumes === undefined ? undefined : asList(s.volumes).map(mount),
    volumes:
      s.volumes_from === undefined
        ? undefined
        : asList(s.volumes_from).map((x) => ({ fromContainer: scalar(x) ?? "" })),
    tmpfs: tmpfs(s.tmpfs),
    envs: envs(s.environment),
    healthcheck: healthcheck(s.healthcheck),
    networkMode: scalar(s.network_mode),
    pidMode: scalar(s.pid),
    ipcMode: scalar(s.ipc),
    usernsMode: scalar(s.userns_mode),
    // Not a @pulumi/docker input: the Docker adapter reads it under the Engine's name.
    utsMode: scalar(s.uts),
    cgroupnsMode: scalar(s.cgroup),
    devices: s.devices === undefined ? undefined : asList(s.devices).map(device),
    deviceCgroupRules:
      s.device_cgroup_rules === undefined
        ? undefined
        : asList(s.device_cgroup_rules).map((x) => scalar(x) ?? ""),
    gpus: s.gpus === undefined ? undefined : (scalar(s.gpus) ?? "requested"),
    deviceRequests:
      reservations.devices === undefined
        ? undefined
        : asList(reservations.devices).map((d) => ({
            driver: isMap(d) ? scalar(d.driver) : undefined,
            capabilities: isMap(d) ? d.capabilities : undefined,
          })),
    sysctls: sysctls(s.sysctls),
    memory: megabytes(limitOver(limits.memory, s.mem_limit, (v) => nonZero(megabytes(v)))),
    memorySwap: megabytes(s.memswap_limit),
    cpus: scalar(limitOver(limits.cpus, s.cpus, (v) => Number(scalar(v)) !== 0)),
    cpuQuota: s.cpu_quota,
    cpuPeriod: s.cpu_period,
    restart: restartPolicy(s),
    runtime: scalar(s.runtime),
    init: s.init,
    groupAdds: s.group_add === undefined ? undefined : asList(s.group_add).map((x) => scalar(x) ?? ""),
    labels: labels(s.labels),
    // @pulumi/docker has no PidsLimit and no rule reads it; kept for the report's readers.
    pidsLimit: limitOver(limits.pids, s.pids_limit, positive),
  };
  // `use_api_socket` (docker/compose pkg/compose/apiSocket.go): a bind of the engine's socket, and the user's
  // registry credentials as a config under /run/secrets/docker. Any value but false is read as set (compose's
  // schema allows only a boolean).
  if (s.use_api_socket !== undefined && s.use_api_socket !== null && s.use_api_socket !== false) {
    const mounts = Array.isArray(props.mounts) ? props.mounts : [];
    props.mounts = [
      ...mounts,
      { type: "bind", source: "/var/run/docker.sock", target: "/var/run/docker.sock", readOnly: false },
    ];
  }
  const caps: Record<string, unknown> = {};
  if (s.cap_add !== undefined) caps.adds = asList(s.cap_add).map((x) => scalar(x) ?? "");
  if (s.cap_drop !== undefined) caps.drops = asList(s.cap_drop).map((x) => scalar(x) ?? "");
  if (Object.keys(caps).length > 0) props.capabilities = caps;
  for (const [k, v] of Object.entries(props)) if (v === undefined) delete props[k];
  return props;
}
