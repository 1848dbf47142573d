/**
 * What a Compose service runs besides its own container, each judged as a container of its own:
 * - `pre_start` hooks: docker/compose (v5, pkg/compose/pre_start.go) creates a second container from the hook's
 *   `image` (or the service's), `command`, `user`, `working_dir` and `environment` (the service's, then the hook's),
 *   with `privileged` from the hook, the service container's volumes (`VolumesFrom`) and the service's network.
 *   Nothing else reaches it: not the service's nor the hook's `cap_drop`, `security_opt`, `read_only`, limits or
 *   user. It is judged as that container, so a hook that sets no user runs as the image's (often root).
 * - `post_start` / `pre_stop` hooks and `develop.watch[].exec`: an exec in the service container (pkg/compose/hook.go
 *   `ExecCreate{User, Privileged, Env}`); a privileged exec gets every capability (moby daemon/exec_linux.go). Judged
 *   as the service container with the exec's user, privileged flag and environment.
 * - `build`: the image is built before `up` runs it (pkg/compose/build_bake.go): `network` is the network of the
 *   build's RUN steps, `privileged` and the `security.insecure` entitlement run them privileged, `network.host` on the
 *   host's network, and a `context` or `additional_contexts` outside the project folder sends that host folder. Judged
 *   as a container with only those settings (the rest hardened: the build's own sandbox is not the task's).
 */

import { isMap, type Model } from "./merge";
import { composeServiceToContainerProps } from "./service-props";

type Props = Record<string, unknown>;

export interface HookView {
  /** `<service>/pre_start[0]`, `<service>/post_start[1]`, `<service>/build`. */
  readonly name: string;
  readonly props: Props;
}

function envList(v: unknown): string[] {
  const p = composeServiceToContainerProps("x", { environment: v }).envs;
  return Array.isArray(p) ? (p as string[]) : [];
}

/** An exec hook in the service container, as that container with the exec's user, privileges and environment. */
function execView(name: string, service: Props, hook: Model): HookView {
  const props: Props = { ...service };
  if (hook.user !== undefined && hook.user !== null && hook.user !== "") props.user = String(hook.user);
  // Kept as written when it is not a plain flag, so the adapter fails closed on it.
  if (hook.privileged !== undefined && hook.privileged !== null && hook.privileged !== false)
    props.privileged = hook.privileged;
  const env = [
    ...(Array.isArray(service.envs) ? (service.envs as string[]) : []),
    ...envList(hook.environment),
  ];
  if (env.length > 0) props.envs = env;
  return { name, props };
}

/** A `pre_start` hook's own container. */
function preStartView(name: string, serviceName: string, service: Props, spec: Model, hook: Model): HookView {
  const own = composeServiceToContainerProps(serviceName, {
    image: hook.image ?? spec.image,
    command: hook.command,
    user: hook.user,
    privileged: hook.privileged,
    volumes: hook.volumes,
  });
  const props: Props = {
    name: `${String(service.name ?? serviceName)}-pre_start`,
    image: own.image ?? service.image,
    ...(own.command === undefined ? {} : { command: own.command }),
    ...(own.user === undefined ? {} : { user: own.user }),
    ...(own.privileged === undefined ? {} : { privileged: own.privileged }),
  };
  const env = [
    ...(Array.isArray(service.envs) ? (service.envs as string[]) : []),
    ...envList(hook.environment),
  ];
  if (env.length > 0) props.envs = env;
  // VolumesFrom the service container: every mount it has, and the hook's own.
  const mounts = [
    ...(Array.isArray(service.mounts) ? service.mounts : []),
    ...(Array.isArray(own.mounts) ? own.mounts : []),
  ];
  if (mounts.length > 0) props.mounts = mounts;
  for (const k of ["volumes", "networkMode", "networksAdvanced"])
    if (service[k] !== undefined) props[k] = service[k];
  return { name, props };
}

/** A path outside the project folder (a host folder the build reads), or undefined. */
function outside(p: unknown, projectDir: string): string | undefined {
  if (typeof p !== "string" || p === "" || /^[a-z][a-z0-9+.-]*:/i.test(p)) return undefined;
  const inside = p === projectDir || p.startsWith(`${projectDir}/`);
  return inside ? undefined : p;
}

const HARDENED_BUILD: Props = {
  user: "1000:1000",
  readOnly: true,
  capabilities: { drops: ["ALL"] },
  securityOpts: ["no-new-privileges:true"],
  memory: 512,
  cpus: "1",
  restart: "no",
};

/** The build of a service's image, when its options reach the host. */
function buildView(serviceName: string, spec: Model, projectDir: string): HookView | undefined {
  const b = spec.build;
  if (!isMap(b)) return undefined;
  const entitlements = Array.isArray(b.entitlements) ? b.entitlements.map(String) : [];
  const props: Props = { ...HARDENED_BUILD, name: `${serviceName}-build`, image: `${serviceName} (build)` };
  let risky = false;
  const network = typeof b.network === "string" ? b.network : undefined;
  if (network === "host" || entitlements.includes("network.host")) {
    props.networkMode = "host";
    risky = true;
  } else if (network !== undefined && network !== "default") props.networkMode = network;
  if ((b.privileged !== undefined && b.privileged !== false) || entitlements.includes("security.insecure")) {
    props.privileged = entitlements.includes("security.insecure") ? true : b.privileged;
    risky = true;
  }
  const contexts = [
    outside(b.context, projectDir),
    ...(isMap(b.additional_contexts)
      ? Object.values(b.additional_contexts).map((c) => outside(c, projectDir))
      : []),
  ].filter((c): c is string => c !== undefined);
  if (contexts.length > 0) {
    props.mounts = contexts.map((source, i) => ({
      type: "bind",
      source,
      target: `/build-context/${i}`,
      readOnly: true,
    }));
    risky = true;
  }
  return risky ? { name: `${serviceName}/build`, props } : undefined;
}

/** Every hook, exec and build of a service that runs with settings of its own. */
export function hookViews(serviceName: string, spec: Model, service: Props, projectDir: string): HookView[] {
  const out: HookView[] = [];
  const list = (v: unknown) => (Array.isArray(v) ? v.filter(isMap) : []);
  list(spec.pre_start).forEach((h, i) => {
    out.push(preStartView(`${serviceName}/pre_start[${i}]`, serviceName, service, spec, h));
  });
  for (const key of ["post_start", "pre_stop"])
    list(spec[key]).forEach((h, i) => {
      out.push(execView(`${serviceName}/${key}[${i}]`, service, h));
    });
  const develop = isMap(spec.develop) ? spec.develop : {};
  list(develop.watch).forEach((w, i) => {
    if (isMap(w.exec)) out.push(execView(`${serviceName}/develop.watch[${i}].exec`, service, w.exec));
  });
  const build = buildView(serviceName, spec, projectDir);
  if (build !== undefined) out.push(build);
  return out;
}
