/**
 * The secrets broker of a project, decided once from its routes and templates: which templates may call which
 * routes and on which port, and everything a backend needs to run it. The credentials themselves are never part of
 * it: a backend passes them to the broker alone, from the stack's secret config.
 */
import { createHash, scryptSync } from "node:crypto";
import type { BrokerRoute } from "./broker";
import { BROKER_URL_ENV, credentialKey, credentialVariable, parseUpstream, pathPatternRegex } from "./broker";
import { joinKey, SpecError, type SpecProblem } from "./errors";
import { type BrokerListener, haproxyConfig } from "./haproxy";
import { projectLabels } from "./labels";
import { brokerName } from "./names";
import type { ProjectSpec, ResolvedProject } from "./project";

/** The offline image `toolchain/broker-image.sh` builds from Debian's HAProxy. */
export const BROKER_IMAGE = "sandbox-broker:1";

/** The broker's user (the image's `broker`), never root. */
export const BROKER_USER = "10100:10100";

/** Limits of the broker container (it serves every broker call of a project at once). */
export const BROKER_RESOURCES = { vcpu: 0.25, memoryMb: 128, pids: 64, tmpfsMb: 8 } as const;

/** Where the broker writes its generated configuration: a tmpfs; the root stays read-only. */
export const BROKER_RUN_DIR = "/run/broker";

/** The variable the broker image's entry script reads its configuration from (Docker). */
export const BROKER_CONFIG_ENV = "SANDBOX_BROKER_CONFIG";

/** The folder the entry script reads the configuration file from when the variable is unset (Kubernetes). */
export const BROKER_CONFIG_DIR = "/etc/sandbox-broker";

/** The folder whose files the entry script exports as the credential variables (Kubernetes mounts the Secret here). */
export const BROKER_SECRETS_DIR = "/run/secrets/sandbox-broker";

/**
 * The broker's listeners: one port per template that names routes, `broker.port` for the first (by name) and the
 * next ports for the others, so that a task reaches only its own template's routes. Empty without a broker.
 */
export function brokerListeners(spec: ProjectSpec): BrokerListener[] {
  if (spec.broker === undefined) return [];
  const base = spec.broker.port;
  const names = Object.keys(spec.templates)
    .filter((n) => (spec.templates[n]?.broker.length ?? 0) > 0)
    .sort();
  return names.map((template, i) => ({
    template,
    port: base + i,
    routes: spec.templates[template]?.broker ?? [],
  }));
}

/** The port template `template`'s tasks reach the broker on, or undefined when it calls no route. */
export function brokerPortOf(spec: ProjectSpec, template: string): number | undefined {
  return brokerListeners(spec).find((l) => l.template === template)?.port;
}

/** The broker's address as a template's task sees it, or undefined when it calls no route. */
export function brokerUrl(spec: ProjectSpec, template: string): string | undefined {
  const port = brokerPortOf(spec, template);
  return port === undefined ? undefined : `http://${brokerName(spec.name)}:${port}`;
}

/** The variables a template's tasks get for the broker (none when it calls no route). */
export function brokerEnv(spec: ProjectSpec, template: string): Record<string, string> {
  const url = brokerUrl(spec, template);
  return url === undefined ? {} : { [BROKER_URL_ENV]: url };
}

/** One credential the broker is given: from which secret config key, into which of its variables. */
export interface BrokerCredentialRef {
  readonly route: string;
  /** The full config key, `namespace:key`. */
  readonly configKey: string;
  readonly variable: string;
}

/** Everything a backend needs to run a project's broker, decided once. */
export interface BrokerSpec {
  readonly kind: "sandbox.broker/v1";
  readonly project: string;
  /** The container's (Docker) or Service's (Kubernetes) name, and the name tasks resolve: `<project>-broker`. */
  readonly name: string;
  readonly image: string;
  readonly user: string;
  readonly resources: typeof BROKER_RESOURCES;
  readonly listeners: readonly BrokerListener[];
  readonly routes: Readonly<Record<string, BrokerRoute>>;
  /** The generated HAProxy configuration (no credential in it) and its hash. */
  readonly config: string;
  readonly configHash: string;
  /** The credentials of the routes templates use, by route. */
  readonly credentials: readonly BrokerCredentialRef[];
  readonly projectNetwork: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** The broker of a project, or undefined when it has none. */
export function brokerSpec(
  project: ResolvedProject,
  networkName: string,
  namespace = "sandbox",
): BrokerSpec | undefined {
  const spec = project.spec;
  const listeners = brokerListeners(spec);
  if (spec.broker === undefined || listeners.length === 0) return undefined;
  const routes = spec.broker.routes;
  const config = haproxyConfig(listeners, routes);
  const configHash = createHash("sha256").update(config).digest("hex").slice(0, 16);
  const used = [...new Set(listeners.flatMap((l) => l.routes))].sort();
  const credentials = used.flatMap((route) => {
    const r = routes[route];
    return r === undefined
      ? []
      : [{ route, configKey: credentialKey(r.credential, namespace), variable: credentialVariable(route) }];
  });
  return {
    kind: "sandbox.broker/v1",
    project: spec.name,
    name: brokerName(spec.name),
    image: BROKER_IMAGE,
    user: BROKER_USER,
    resources: BROKER_RESOURCES,
    listeners,
    routes,
    config,
    configHash,
    credentials,
    projectNetwork: networkName,
    labels: projectLabels(spec.name, "broker", undefined, configHash),
  };
}

/**
 * The broker's cross-field checks: every route a template names exists, a template names routes only when the
 * project has a broker, the broker's ports fit, and a broker is used by some template (a credential nobody may use
 * is a mistake, not a wall).
 */
export function checkBroker(spec: ProjectSpec, keyPrefix = ""): SpecProblem[] {
  const problems: SpecProblem[] = [];
  const routes = Object.keys(spec.broker?.routes ?? {}).sort();
  for (const [name, t] of Object.entries(spec.templates).sort(([a], [b]) => (a < b ? -1 : 1))) {
    for (const [i, r] of t.broker.entries()) {
      if (routes.includes(r)) continue;
      problems.push({
        key: `${joinKey(keyPrefix, `templates.${name}.broker`)}[${i}]`,
        value: JSON.stringify(r),
        message:
          routes.length === 0
            ? "the project has no broker; declare the route under broker.routes"
            : `no such broker route; the broker has: ${routes.join(", ")}`,
      });
    }
  }
  if (spec.broker !== undefined) {
    const listeners = brokerListeners(spec);
    if (listeners.length === 0) {
      problems.push({
        key: joinKey(keyPrefix, "broker"),
        value: undefined,
        message:
          "no template calls the broker; add broker: [<route>] to the templates that need it, or remove the broker",
      });
    }
    const last = spec.broker.port + listeners.length - 1;
    if (last > 65535) {
      problems.push({
        key: joinKey(keyPrefix, "broker.port"),
        value: String(spec.broker.port),
        message: `leaves no room for ${listeners.length} broker ports (one per template that calls the broker)`,
      });
    }
  }
  return problems;
}

/**
 * A hash of the broker's credentials that says when one changed (Kubernetes rolls the broker on it) and is costly to
 * reverse: scrypt, salted with the project's name. The values are those of `broker.credentials`, by variable.
 */
export function credentialsHash(project: string, values: Readonly<Record<string, string>>): string {
  const text = Object.keys(values)
    .sort()
    .map((k) => `${k}=${values[k]}`)
    .join("\n");
  return scryptSync(text, `sandbox-broker:${project}`, 16, { N: 2 ** 14, r: 8, p: 1 }).toString("hex");
}

/** What a template's probe asks of the broker: the route it tries, a path outside it, the upstream's address. */
export interface BrokerProbeCase {
  readonly route: string;
  /** A path no pattern of the route admits, or undefined when the route admits every path (`/**`). */
  readonly outsidePath: string | undefined;
  /** The upstream's `host:port`, which the task must not reach directly. */
  readonly upstream: string;
}

/** The path the probe asks for outside a route's patterns. */
export const PROBE_OUTSIDE_PATH = "/.sandbox-probe-outside";

/** The probe's broker case of a template that calls routes (its first route), or undefined. */
export function brokerProbeCase(spec: ProjectSpec, template: string): BrokerProbeCase | undefined {
  const route = spec.templates[template]?.broker[0];
  const r = route === undefined ? undefined : spec.broker?.routes[route];
  if (route === undefined || r === undefined) return undefined;
  const inside = r.paths.some((p) => new RegExp(pathPatternRegex(p)).test(PROBE_OUTSIDE_PATH));
  const up = parseUpstream(r.upstream);
  return { route, outsidePath: inside ? undefined : PROBE_OUTSIDE_PATH, upstream: `${up.host}:${up.port}` };
}

/**
 * The credential a component was given for a route, or the SpecError that names the route's key (never a value)
 * when it was not: both backends' components take their credentials from the caller.
 */
export function givenCredential<T>(
  ref: BrokerCredentialRef,
  given: Readonly<Record<string, T>> | undefined,
): T {
  const value = given?.[ref.route];
  if (value === undefined) {
    throw new SpecError([
      {
        key: `broker.routes.${ref.route}.credential.secret`,
        value: undefined,
        message: `the credential (${ref.configKey}) was not given to the component (brokerCredentials.${ref.route})`,
      },
    ]);
  }
  return value;
}
