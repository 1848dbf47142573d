import { createHash } from "node:crypto";
import { type BrokerProbeCase, brokerEnv, brokerPortOf, brokerProbeCase } from "./broker-spec";
import { deadline } from "./deadline";
import { LABELS, projectLabels } from "./labels";
import { brokerName, proxyName } from "./names";
import type { ResolvedProject } from "./project";
import { proxyPortOf } from "./proxy-spec";
import { type Template, templateCommand, templateDrops } from "./template";

/** JSON with sorted keys, so equal specs hash equally whatever order their keys were written in. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/**
 * A short, stable hash of a template: the probe's result is recorded against it. A template that calls no broker
 * route hashes as it did before templates had routes, so their hashes (and what is recorded against them) hold.
 */
export function templateHash(t: Template): string {
  // The pool is how many members wait, not what a task is: a new size is the same template.
  const { pool: _pool, ...walls } = t;
  const { broker, ...rest } = walls;
  return createHash("sha256")
    .update(canonicalJson(broker.length > 0 ? walls : rest))
    .digest("hex")
    .slice(0, 16);
}

/**
 * Everything the runtime needs to launch one task of a template, with every wall already decided. The Docker
 * backend exports one per template (Docker has no template object); the launcher and the policy read it.
 */
export interface LaunchSpec {
  readonly kind: "sandbox.launch/v1";
  readonly project: string;
  readonly template: string;
  readonly specHash: string;
  readonly image: string;
  /** The task command without the deadline. */
  readonly command: readonly string[];
  /**
   * The command as Docker runs it, under the engine's init: `timeout -s KILL <seconds> ...command` ({@link deadline}).
   */
  readonly commandWithDeadline: readonly string[];
  readonly user: string;
  readonly capDrop: readonly string[];
  readonly capAdd: readonly string[];
  readonly noNewPrivileges: true;
  readonly seccomp: "runtime-default";
  readonly readOnlyRoot: true;
  readonly tmpfs: { readonly path: "/tmp"; readonly sizeMb: number };
  readonly resources: {
    readonly vcpu: number;
    readonly memoryMb: number;
    readonly pids: number;
    readonly diskMb: number;
  };
  readonly timeoutSeconds: number;
  readonly restart: "no";
  readonly runtime: "runc" | "runsc" | "kata";
  /**
   * `none` (no network at all), or {@link PER_TASK_NETWORK} in proxy mode or with broker routes: the launcher gives
   * each task an internal network of its own that holds only the task, the proxy and the broker it may use (see
   * `taskNetworkName`).
   */
  readonly network: string;
  readonly egress: {
    readonly mode: "none" | "proxy";
    readonly allow: readonly string[];
    /** The proxy's URL as the task sees it (proxy mode). */
    readonly proxy?: string;
    /** The name the task resolves the proxy by, and the port of this template's allowlist (proxy mode). */
    readonly proxyHost?: string;
    readonly proxyPort?: number;
    /** The project's internal network, where the proxy sits (proxy mode). */
    readonly projectNetwork?: string;
  };
  /**
   * The secrets broker, when the template calls routes: the name the task resolves it by, the port of this
   * template's routes, and the routes. The launcher puts the broker on the task's own network.
   */
  readonly broker?: {
    readonly host: string;
    readonly port: number;
    readonly routes: readonly string[];
    /** What the template's probe asks of the broker. */
    readonly probe?: BrokerProbeCase;
  };
  readonly jobFolder: { readonly containerPath: string; readonly hostRoot: string };
  readonly env: Readonly<Record<string, string>>;
  readonly labels: Readonly<Record<string, string>>;
  /** Tasks of this project that may run at once (the budget's concurrency). */
  readonly maxConcurrentTasks: number;
  /**
   * Pre-started, gated members a long-lived launcher keeps for this template (Docker): how many, and how long one
   * may wait before it is replaced. Absent: none.
   */
  readonly pool?: { readonly size: number; readonly maxIdleSeconds: number };
}

/**
 * The `network` of a proxy-mode launch spec: not a network's name but the instruction to give the task an internal
 * network of its own, shared only with the proxy. `hardenedContainerArgs` refuses it without that network's name.
 */
export const PER_TASK_NETWORK = "sandbox:per-task";

/** The proxy's address as a task sees it: the proxy's name on the task's network, and its template's port. */
export function proxyUrl(project: string, port: number): string {
  return `http://${proxyName(project)}:${port}`;
}

/**
 * The environment a task gets: the template's variables plus, in proxy mode, the proxy variables and, with broker
 * routes, the broker's address (`broker`, from {@link brokerEnv}).
 */
export function taskEnv(
  t: Template,
  project: string,
  proxyPort: number,
  broker: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const env: Record<string, string> = { ...t.env, ...broker };
  if (t.egress.mode === "proxy") {
    const url = proxyUrl(project, proxyPort);
    Object.assign(env, {
      HTTP_PROXY: url,
      HTTPS_PROXY: url,
      http_proxy: url,
      https_proxy: url,
      NO_PROXY: "",
    });
  }
  return Object.fromEntries(Object.entries(env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** The launch spec of `template` in a resolved project whose internal network is called `networkName`. */
export function launchSpec(project: ResolvedProject, template: string, networkName: string): LaunchSpec {
  const t = project.spec.templates[template];
  if (t === undefined) {
    throw new Error(
      `template "${template}" is not in project "${project.spec.name}"; it has: ${Object.keys(project.spec.templates).join(", ")}`,
    );
  }
  const name = project.spec.name;
  const hash = templateHash(t);
  const port = proxyPortOf(project, template) ?? project.spec.network.proxyPort;
  const labels = projectLabels(name, "task", template, hash);
  const brokerPort = brokerPortOf(project.spec, template);
  if (t.egress.mode === "proxy") labels[LABELS.egress] = "proxy";
  return {
    kind: "sandbox.launch/v1",
    project: name,
    template,
    specHash: hash,
    image: t.image,
    command: templateCommand(t),
    commandWithDeadline: deadline(t.timeoutSeconds, templateCommand(t), "engine-init"),
    user: t.user,
    capDrop: templateDrops(t),
    capAdd: [],
    noNewPrivileges: true,
    seccomp: "runtime-default",
    readOnlyRoot: true,
    tmpfs: { path: "/tmp", sizeMb: t.resources.tmpfsMb },
    resources: {
      vcpu: t.resources.vcpu,
      memoryMb: t.resources.memoryMb,
      pids: t.resources.pids,
      diskMb: t.resources.diskMb,
    },
    timeoutSeconds: t.timeoutSeconds,
    restart: "no",
    runtime: t.runtime,
    network: t.egress.mode === "none" && t.broker.length === 0 ? "none" : PER_TASK_NETWORK,
    egress:
      t.egress.mode === "none"
        ? { mode: "none", allow: [] }
        : {
            mode: "proxy",
            allow: t.egress.allow,
            proxy: proxyUrl(name, port),
            proxyHost: proxyName(name),
            proxyPort: port,
            projectNetwork: networkName,
          },
    ...(brokerPort === undefined
      ? {}
      : {
          broker: {
            host: brokerName(name),
            port: brokerPort,
            routes: t.broker,
            probe: brokerProbeCase(project.spec, template),
          },
        }),
    jobFolder: { containerPath: t.jobFolder.containerPath, hostRoot: project.jobRoot },
    env: taskEnv(t, name, port, brokerEnv(project.spec, template)),
    labels: Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
    maxConcurrentTasks: project.budget.concurrency,
    ...(t.pool === undefined ? {} : { pool: { size: t.pool.size, maxIdleSeconds: t.pool.maxIdleSeconds } }),
  };
}
