/**
 * `sandbox serve <stack> [--pool N] [--listen 127.0.0.1:PORT]`: the launch service. One long-lived process holds the
 * stack's launcher (with its warm pool) and ledger, so a launch pays neither a Node start nor a ledger's opening, and
 * answers the HTTP API of runtime/serve/protocol.ts on a unix socket in the project's state folder (mode 0600: its
 * owner only), and on loopback TCP when asked, where each launch carries an agent's key. It runs in the foreground,
 * one log line per launch. SIGTERM (or Ctrl-C) stops it cleanly: no new launch, the tasks in flight end (by their
 * deadlines at the latest), the pool's members are removed, the socket goes; a second signal stops the tasks now.
 */
import { chmodSync, existsSync, mkdirSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname } from "node:path";
import {
  type LaunchSpec,
  launchSpec,
  projectNetworkName,
  proxySpec,
  type ResolvedProject,
  usdFine,
} from "../components/model";
import { dockerClient } from "../runtime/docker/client";
import { Launcher } from "../runtime/launcher";
import { WarmPool } from "../runtime/pool";
import { policyPreflight } from "../runtime/preflight";
import { currentProxy } from "../runtime/proxy";
import { SandboxClient } from "../runtime/serve/client";
import { dockerEngineProblem } from "./engine-host";
import { openLedger } from "./ledger";
import type { Io } from "./output";
import type { EngineSetUp } from "./runtime";
import { type LaunchLog, launcherEvents, serviceHandler } from "./serve-http";
import { serveSocketPath } from "./serve-run";
import { type Failure, failureOf, report } from "./task-failure";

export const SERVE_USAGE = "serve <stack> [--pool N] [--listen 127.0.0.1:PORT] [--json]";

/** The longest unix socket path the kernel takes (sun_path, less its NUL). */
const MAX_SOCKET_PATH = 107;

export interface ServeContext {
  readonly stack: string;
  readonly project: ResolvedProject;
  readonly args: readonly string[];
  readonly io: Io;
  readonly json: boolean;
  readonly root: string;
  readonly ledgerFile: string;
  readonly setUp?: EngineSetUp;
}

/** `serve`'s options, checked before anything starts. */
export interface ServeOptions {
  readonly pool?: number;
  readonly listen?: { readonly host: string; readonly port: number };
}

/** A loopback address: 127.0.0.0/8, ::1 or localhost. */
const LOOPBACK_V4 = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** Parses `serve`'s arguments; a bad one throws a message naming it, its value and what is allowed. */
export function parseServeArgs(args: readonly string[]): ServeOptions {
  let pool: number | undefined;
  let listen: ServeOptions["listen"];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? "";
    const eq = arg.indexOf("=");
    const flag = arg.startsWith("--") && eq !== -1 ? arg.slice(0, eq) : arg;
    if (flag !== "--pool" && flag !== "--listen")
      throw new Error(
        `serve: unexpected ${JSON.stringify(arg)}; allowed: --pool N, --listen 127.0.0.1:PORT (${SERVE_USAGE})`,
      );
    const value = flag !== arg ? arg.slice(eq + 1) : args[++i];
    if (value === undefined || value === "") throw new Error(`serve: ${flag} needs a value (${SERVE_USAGE})`);
    if (flag === "--pool") {
      if (pool !== undefined) throw new Error("serve: --pool is given twice; give it once");
      pool = /^\d{1,5}$/.test(value) ? Number(value) : Number.NaN;
      if (!Number.isInteger(pool))
        throw new Error(
          `serve: --pool ${JSON.stringify(value)}: a whole number of members per template, 0 for none`,
        );
    } else {
      if (listen !== undefined) throw new Error("serve: --listen is given twice; give it once");
      listen = loopbackAddress(value);
    }
  }
  return { ...(pool === undefined ? {} : { pool }), ...(listen === undefined ? {} : { listen }) };
}

/** `--listen`'s value: a loopback host and a port; anything reachable from off the machine is refused. */
function loopbackAddress(value: string): { host: string; port: number } {
  const m = /^(\[[^\]]*\]|[^:]*):(\d{1,5})$/.exec(value);
  const refuse = (why: string) =>
    new Error(
      `serve: --listen ${JSON.stringify(value)}: ${why}; allowed: a loopback address and a port, 127.0.0.1:PORT (any of 127.0.0.0/8), [::1]:PORT or localhost:PORT (PORT 0 picks a free one). The service never listens where another machine could reach it`,
    );
  if (m === null) throw refuse("expected HOST:PORT");
  const [, rawHost = "", rawPort = ""] = m;
  const port = Number(rawPort);
  if (port > 65535) throw refuse(`port ${port} is past 65535`);
  const v4 = LOOPBACK_V4.exec(rawHost);
  if (v4?.slice(1).every((o) => Number(o) <= 255)) return { host: rawHost, port };
  if (rawHost === "[::1]") return { host: "::1", port };
  if (rawHost === "localhost") return { host: "127.0.0.1", port };
  throw refuse(`${rawHost === "" ? "no host" : `host ${rawHost}`} is not a loopback address`);
}

/** The launch specs of the templates that declare a pool (`templates.<name>.pool`), which the service warms. */
function pooledSpecs(project: ResolvedProject): LaunchSpec[] {
  const network = projectNetworkName(project.spec.name);
  return Object.keys(project.spec.templates)
    .map((t) => launchSpec(project, t, network))
    .filter((s) => s.pool !== undefined);
}

/**
 * The warm pool's members per template: a template's own `pool.size` first; `--pool N` for the templates that declare
 * none (0: none); the largest declared size is what the service reports.
 */
function poolSize(project: ResolvedProject, flag: number | undefined): number {
  if (flag !== undefined) return flag;
  return Math.max(0, ...pooledSpecs(project).map((s) => s.pool?.size ?? 0));
}

/** Runs the service until it is stopped; returns the exit code (0 after a clean stop). */
export async function serveVerb(c: ServeContext): Promise<number> {
  const { io, json, project, stack } = c;
  const fail = (f: Failure) => report("serve", f, io, json);
  let options: ServeOptions;
  try {
    options = parseServeArgs(c.args);
  } catch (e) {
    return fail({ kind: "bad-input", message: (e as Error).message });
  }
  if (project.spec.backend !== "docker")
    return fail({
      kind: "bad-input",
      message: `serve: stack ${stack} is on ${project.spec.backend}; the launch service runs Docker stacks`,
    });
  const size = poolSize(project, options.pool);
  if (size > project.budget.concurrency)
    return fail({
      kind: "bad-input",
      message: `serve: --pool ${size}: at most the budget's concurrency, ${project.budget.concurrency} (a pool holds no more members than may run at once)`,
    });
  const socket = serveSocketPath(c.root, stack);
  if (Buffer.byteLength(socket) > MAX_SOCKET_PATH)
    return fail({
      kind: "bad-input",
      message: `serve: the socket's path ${socket} is longer than ${MAX_SOCKET_PATH} bytes, the most a unix socket takes; run from a shorter folder`,
    });
  if (existsSync(socket)) {
    const pid = await new SandboxClient({ socket })
      .health({ timeoutMs: 2000 })
      .then((h) => h.pid)
      .catch(() => undefined);
    if (pid !== undefined)
      return fail({
        kind: "refused",
        message: `serve: a launch service already answers for stack ${stack} at ${socket} (pid ${pid})`,
      });
    // Left by a service that died: nothing answers on it.
    rmSync(socket, { force: true });
  }
  let problem = await dockerEngineProblem();
  if (problem !== undefined && c.setUp?.() === true) problem = await dockerEngineProblem();
  if (problem !== undefined) return fail({ kind: "no-engine", message: `serve: ${problem}` });
  const docker = dockerClient();
  let metered: Awaited<ReturnType<typeof openLedger>>;
  try {
    metered = await openLedger(c.ledgerFile, project, io.err);
  } catch (e) {
    return fail(failureOf("serve", e));
  }
  const { ledger, outbox } = metered;
  const preflight = policyPreflight({}, (w) => io.err(`warning: ${w}\n`));
  const proxy = proxySpec(project, projectNetworkName(project.spec.name));
  const pool =
    size > 0
      ? new WarmPool(docker, {
          ...(options.pool !== undefined && options.pool > 0 ? { size: options.pool } : {}),
          preflight,
          onError: (e) => io.err(`warning: pool: ${e instanceof Error ? e.message : String(e)}\n`),
        })
      : undefined;
  const launcher = new Launcher(docker, {
    preflight,
    ledger,
    ...(pool === undefined ? {} : { pool }),
    ...(proxy === undefined ? {} : { proxy: (s: LaunchSpec) => currentProxy(docker, proxy, s.template) }),
    onEvent: launcherEvents(docker, project.spec.name),
  });
  // The declared pools fill in the background: the service answers at once, launches run cold until members wait.
  for (const spec of pool === undefined ? [] : pooledSpecs(project))
    void pool
      ?.warm(spec)
      .catch((e: unknown) => io.err(`warning: pool of ${spec.template}: ${(e as Error).message}\n`));
  let stopping = false;
  const inFlight = new Set<Promise<void>>();
  const ctx = {
    stack,
    project,
    docker,
    launcher,
    ledger,
    poolSize: size > 0 ? size : null,
    log: (entry: LaunchLog) => io[json ? "out" : "err"](`${json ? JSON.stringify(entry) : logLine(entry)}\n`),
    stopping: () => stopping,
    inFlight,
    held: { bytes: 0 },
  };
  const servers: Server[] = [];
  const listening: string[] = [];
  try {
    mkdirSync(dirname(socket), { recursive: true, mode: 0o700 });
    chmodSync(dirname(socket), 0o700);
    servers.push(await listen(serviceHandler(ctx, { tcp: false }), { path: socket }));
    chmodSync(socket, 0o600);
    listening.push(socket);
    if (options.listen !== undefined) {
      const server = await listen(serviceHandler(ctx, { tcp: true }), options.listen);
      servers.push(server);
      const { address, port } = server.address() as AddressInfo;
      listening.push(`http://${address.includes(":") ? `[${address}]` : address}:${port} (agent keys only)`);
    }
  } catch (e) {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    rmSync(socket, { force: true });
    await launcher.shutdown();
    await ledger.close();
    return fail({ kind: "engine", message: `serve: cannot listen: ${(e as Error).message}` });
  }
  const poolText = size > 0 ? `a warm pool of up to ${size} per template` : "no warm pool";
  const started = {
    event: "listening",
    stack,
    project: project.spec.name,
    pid: process.pid,
    listening,
    pool: ctx.poolSize,
  };
  io[json ? "out" : "err"](
    json
      ? `${JSON.stringify(started)}\n`
      : `serve ${stack}: project ${project.spec.name} (pid ${process.pid}, ${poolText}) answers on ${listening.join(" and ")}; SIGTERM or Ctrl-C stops it\n`,
  );

  // Stopped by a signal: no new launch; a second signal stops the running tasks now.
  let cleanupSignals: () => void = () => undefined;
  const stopped = new Promise<NodeJS.Signals>((resolve) => {
    const first = (why: NodeJS.Signals) => {
      if (stopping) {
        io.err(`${why} again: stopping the running tasks now\n`);
        void launcher.shutdown();
        return;
      }
      stopping = true;
      resolve(why);
    };
    process.on("SIGTERM", first);
    process.on("SIGINT", first);
    cleanupSignals = () => {
      process.removeListener("SIGTERM", first);
      process.removeListener("SIGINT", first);
    };
  });
  const why = await stopped;
  io.err(
    `serve ${stack}: ${why}: stopping; no new launches; waiting for ${inFlight.size} launch(es) in flight (each ends by its deadline)\n`,
  );
  const closed = servers.map((s) => new Promise<void>((r) => s.close(() => r())));
  for (const s of servers) s.closeIdleConnections();
  rmSync(socket, { force: true });
  await Promise.all([...inFlight]);
  for (const s of servers) s.closeAllConnections();
  await Promise.all(closed);
  const removed = await launcher.shutdown();
  cleanupSignals();
  await outbox.flush();
  await ledger.close();
  io.err(
    `serve ${stack}: stopped${removed.length > 0 ? `; removed ${removed.length} task container(s): ${removed.join(", ")}` : ""}\n`,
  );
  return 0;
}

/** Listens on a unix socket (made with no access for others from its first moment) or a TCP address. */
function listen(
  handler: Parameters<typeof createServer>[1],
  where: { path: string } | { host: string; port: number },
): Promise<Server> {
  const server = createServer(
    { requestTimeout: 30_000, headersTimeout: 10_000, maxHeaderSize: 16 * 1024 },
    handler,
  );
  server.maxConnections = 1024;
  return new Promise((resolve, reject) => {
    const old = "path" in where ? process.umask(0o177) : undefined;
    server.once("error", reject);
    server.listen(where, () => {
      server.removeListener("error", reject);
      resolve(server);
    });
    if (old !== undefined) process.umask(old);
  });
}

/** One launch as a log line. */
function logLine(e: LaunchLog): string {
  const who = `template=${e.template ?? "-"} agent=${e.agent ?? "-"}`;
  if (e.error !== undefined) {
    const why = e.error.reason === undefined ? e.error.kind : `${e.error.kind}: ${e.error.reason}`;
    return `${e.at} ${e.status} refused ${who} (${why}) ${e.error.message.split("\n").join(" ")}`;
  }
  const charge = e.chargeUsd === undefined || e.chargeUsd === null ? "" : ` charged ${usdFine(e.chargeUsd)}`;
  const gone = e.abandoned ? " (the client went away: stopped)" : "";
  return `${e.at} ${e.status} run ${e.id} ${who} exit=${e.exitCode} reason=${e.reason} ${e.ms} ms${charge}${gone}`;
}
