/**
 * The launch service's HTTP answers (runtime/serve/protocol.ts): the health, and one launch per POST streamed back as
 * newline-delimited JSON events. The answer's status is held back until the task's first output (or its end), so a
 * launch the policy, the cap or an agent's limits refuse is a 4xx with one JSON error, never a 200 that fails later.
 * Every request is bounded: its headers and body in time (the server's timeouts), its body in bytes, the launches in
 * flight in number; a client that goes away has its task stopped.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import type Dockerode from "dockerode";
import { launchSpec, projectNetworkName, type ResolvedProject, taskContainerName } from "../components/model";
import { AgentKeys } from "../runtime/agent-keys";
import { removeJobFolder } from "../runtime/jobs";
import type { Launcher } from "../runtime/launcher";
import type { Ledger } from "../runtime/ledger";
import {
  API,
  type EndReason,
  type Health,
  type RunRequestBody,
  SERVICE_NAME,
  type ServiceError,
} from "../runtime/serve/protocol";
import type { TaskResult } from "../runtime/task";
import { runSpec } from "./run-options";
import { templateNotDeployed } from "./runtime";
import { Answer, answerOf, checkRunRequest, describeValue, readJson } from "./serve-request";
import { exitEvent } from "./serve-results";

/** Launches in flight at once (waiting for a slot or running); past it a launch is refused as busy. */
export const MAX_IN_FLIGHT = 256;
/** The request bodies the launches in flight hold, together (each is at most {@link MAX_BODY_BYTES}). */
export const MAX_HELD_BYTES = 256 * 1024 * 1024;

/** One line of the service's log: a launch that ended, or one refused. */
export interface LaunchLog {
  readonly at: string;
  readonly status: number;
  readonly template?: string;
  readonly agent: string | null;
  readonly id?: string;
  readonly exitCode?: number | null;
  readonly reason?: EndReason;
  readonly ms: number;
  readonly chargeUsd?: number | null;
  readonly error?: ServiceError;
  /** The client went away before the task ended: the task was stopped. */
  readonly abandoned?: boolean;
}

/** What the answers need: the stack, its launcher and ledger, and where each launch is logged. */
export interface ServiceContext {
  readonly stack: string;
  readonly project: ResolvedProject;
  readonly docker: Dockerode;
  readonly launcher: Launcher;
  readonly ledger: Ledger;
  readonly poolSize: number | null;
  readonly log: (entry: LaunchLog) => void;
  /** True once the service is stopping: new launches are refused. */
  readonly stopping: () => boolean;
  /** The launches in flight (the service waits for them when it stops). */
  readonly inFlight: Set<Promise<void>>;
  /** The bytes of request bodies they hold. */
  readonly held: { bytes: number };
}

/** One launch as the launcher's events see it (they run in its async context). */
interface Claim {
  id?: string;
  abandoned: boolean;
}
const claims = new AsyncLocalStorage<Claim>();

/**
 * The launcher's `onEvent` for the service: a task's start tells its launch which task it is, so that a client that
 * went away has its own task stopped, and none other.
 */
export function launcherEvents(docker: Dockerode, project: string) {
  return (e: { type: "start" | "result" | "end"; id: string }) => {
    const claim = claims.getStore();
    if (claim === undefined || e.type !== "start") return;
    claim.id = e.id;
    if (claim.abandoned) void stopTask(docker, project, e.id);
  };
}

/** Kills a task's container; the launcher sees it end, removes it and charges it as always. */
async function stopTask(docker: Dockerode, project: string, id: string): Promise<void> {
  await docker
    .getContainer(taskContainerName(project, id))
    .kill()
    .catch(() => undefined);
}

/** The handler of one listener; over TCP (`tcp`) every launch must carry an agent's key. */
export function serviceHandler(ctx: ServiceContext, listener: { readonly tcp: boolean }) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    void answer(ctx, listener.tcp, req, res).catch((e: unknown) => {
      // Nothing a request sends reaches here but as an error answer; this is the last guard against a crash.
      if (!res.headersSent) sendJson(res, 500, { error: { kind: "internal", message: String(e) } });
      else res.destroy();
    });
  };
}

async function answer(ctx: ServiceContext, tcp: boolean, req: IncomingMessage, res: ServerResponse) {
  const path = (req.url ?? "").split("?")[0];
  if (path === API.health) {
    if (req.method !== "GET") return sendError(res, 405, "bad-input", "the health is read with GET");
    const health: Health = {
      ok: true,
      service: SERVICE_NAME,
      stack: ctx.stack,
      project: ctx.project.spec.name,
      pid: process.pid,
      running: ctx.inFlight.size,
      pool: ctx.poolSize,
    };
    return sendJson(res, 200, health);
  }
  if (path !== API.runs)
    return sendError(
      res,
      404,
      "not-found",
      `no ${describeValue(path)} here: the paths are ${API.health} and ${API.runs}`,
    );
  if (req.method !== "POST") return sendError(res, 405, "bad-input", `a launch is a POST to ${API.runs}`);
  const started = Date.now();
  let template: string | undefined;
  let agent: string | null = null;
  const refuse = (status: number, error: ServiceError) => {
    ctx.log({
      at: new Date().toISOString(),
      status,
      agent,
      ms: Date.now() - started,
      error,
      ...(template ? { template } : {}),
    });
    sendJson(res, status, { error });
  };
  if (ctx.stopping())
    return refuse(503, { kind: "shutting-down", message: "the service is stopping; it takes no new launch" });
  if (ctx.inFlight.size >= MAX_IN_FLIGHT)
    return refuse(429, {
      kind: "refused",
      reason: "concurrency",
      message: `${ctx.inFlight.size} launches are in flight, the service's most; try again when one ends`,
    });
  // The bodies of the launches in flight are held until they end: bounded together, not only each.
  let held = 0;
  const hold = (bytes: number) => {
    if (ctx.held.bytes + bytes > MAX_HELD_BYTES)
      throw new Answer(429, {
        kind: "refused",
        reason: "concurrency",
        message: `the launches in flight hold ${ctx.held.bytes} bytes of requests, the service's most is ${MAX_HELD_BYTES}; try again when one ends`,
      });
    ctx.held.bytes += bytes;
    held += bytes;
  };
  try {
    let body: RunRequestBody;
    try {
      const keyAgent = await authenticate(ctx, tcp, req.headers.authorization);
      body = checkRunRequest(await readJson(req, hold), ctx.project);
      template = body.template;
      agent = identify(body.agent, keyAgent);
    } catch (e) {
      const a = answerOf(e);
      return refuse(a.status, a.error);
    }
    const launch = run(ctx, body, agent, res, started);
    ctx.inFlight.add(launch);
    try {
      await launch;
    } finally {
      ctx.inFlight.delete(launch);
    }
  } finally {
    ctx.held.bytes -= held;
  }
}

/** Runs one admitted request's task and streams it; every failure is its answer or its last event. */
async function run(
  ctx: ServiceContext,
  body: RunRequestBody,
  agent: string | null,
  res: ServerResponse,
  started: number,
): Promise<void> {
  const { project } = ctx;
  const claim: Claim = { abandoned: false };
  res.on("close", () => {
    if (res.writableFinished) return;
    // The client went away: its task is stopped (now, or as soon as it starts).
    claim.abandoned = true;
    if (claim.id !== undefined) void stopTask(ctx.docker, project.spec.name, claim.id);
  });
  const begin = () => {
    if (res.headersSent) return;
    res.writeHead(200, { "content-type": "application/x-ndjson", "cache-control": "no-store" });
    res.flushHeaders();
  };
  const send = (event: object) => {
    begin();
    if (!res.destroyed) res.write(`${JSON.stringify(event)}\n`);
  };
  const entry = { template: body.template, agent };
  let answered = false;
  try {
    const stale = await templateNotDeployed(ctx.ledger, project, body.template);
    if (stale !== undefined)
      throw new Answer(409, {
        kind: "not-deployed",
        message: `${stale}\n(the service launches the stack's config as it read it when it started: restart \`sandbox serve ${ctx.stack}\` after a change)`,
      });
    const spec = runSpec(launchSpec(project, body.template, projectNetworkName(project.spec.name)), {
      template: body.template,
      seeds: [],
      keep: false,
      stdin: false,
      env: body.env ?? {},
      ...(body.timeoutSeconds === undefined ? {} : { timeoutSeconds: body.timeoutSeconds }),
    });
    // The answer ends as soon as the result is in hand; the launch goes on to remove the container and give its slot
    // back (the service waits for that when it stops).
    const answer = (result: TaskResult) => {
      if (answered) return;
      const exit = exitEvent(result, body, agent, project.jobRoot);
      answered = true;
      // Logged before the answer ends, so that the line is there once the client has its result.
      ctx.log({
        at: new Date().toISOString(),
        status: 200,
        ...entry,
        id: exit.id,
        exitCode: exit.exitCode,
        reason: exit.reason,
        ms: Date.now() - started,
        chargeUsd: exit.chargeUsd,
        ...(claim.abandoned ? { abandoned: true } : {}),
      });
      send(exit);
      res.end();
    };
    answer(
      await claims.run(claim, () =>
        ctx.launcher.run(spec, {
          ...(body.command === undefined ? {} : { command: body.command }),
          ...(body.files === undefined ? {} : { files: body.files }),
          ...(body.stdin === undefined ? {} : { stdin: stringStream(body.stdin) }),
          ...(agent === null ? {} : { agent }),
          onOutput: (stream, data) => send({ type: stream, data }),
          onResult: answer,
        }),
      ),
    );
  } catch (e) {
    // Answered already: what failed after the result (the container's removal) is the off switch's to mend.
    if (answered) {
      ctx.log({
        at: new Date().toISOString(),
        ...entry,
        status: 200,
        ms: Date.now() - started,
        error: answerOf(e).error,
      });
      return;
    }
    // A task that started and then failed leaves no job folder behind. (One that failed before it started, whose id
    // the service never learnt, may have left one: the off switch removes it with the project's.)
    if (claim.id !== undefined) removeJobFolder(project.jobRoot, claim.id);
    const a = answerOf(e);
    ctx.log({
      at: new Date().toISOString(),
      ...entry,
      status: a.status,
      ms: Date.now() - started,
      error: a.error,
    });
    if (!res.headersSent) sendJson(res, a.status, { error: a.error });
    else {
      send({ type: "error", status: a.status, error: a.error });
      res.end();
    }
  }
}

/** The agent of the presented key; none for the operator on the socket. */
async function authenticate(
  ctx: ServiceContext,
  tcp: boolean,
  header: string | undefined,
): Promise<string | undefined> {
  if (header === undefined || header === "") {
    if (!tcp) return undefined;
    throw new Answer(401, {
      kind: "unauthorized",
      message: `a launch over TCP carries an agent's key: Authorization: Bearer <key> (\`sandbox agent-key ${ctx.stack} <agent>\` mints one)`,
    });
  }
  const m = /^Bearer ([\x21-\x7e]{1,512})$/.exec(header);
  const agent =
    m === null ? undefined : await new AgentKeys(ctx.ledger.store, ctx.project.spec.name).agentOf(m[1] ?? "");
  if (agent === undefined)
    throw new Answer(401, {
      kind: "unauthorized",
      field: "authorization",
      message: `the bearer token is not a valid agent key of project "${ctx.project.spec.name}" (unknown or revoked)`,
    });
  return agent;
}

/** Who the launch is for: the key's agent; a claimed agent must be the key's. */
function identify(claimed: string | undefined, keyAgent: string | undefined): string | null {
  if (claimed === undefined) return keyAgent ?? null;
  if (keyAgent === undefined)
    throw new Answer(401, {
      kind: "unauthorized",
      field: "agent",
      value: describeValue(claimed),
      message: `agent "${claimed}" is claimed without its key: send it as Authorization: Bearer <key>`,
    });
  if (claimed !== keyAgent)
    throw new Answer(403, {
      kind: "refused",
      field: "agent",
      value: describeValue(claimed),
      message: `agent "${claimed}" is claimed with a key of another agent; a key names its own agent`,
    });
  return keyAgent;
}

function sendError(res: ServerResponse, status: number, kind: string, message: string) {
  sendJson(res, status, { error: { kind, message } });
}

/**
 * One JSON answer, given once the request's body has all arrived: what is left of a body the answer refuses is read
 * and dropped first (the server's request timeout bounds how long), so that every client reads the answer; one that
 * is still sending while the connection closes would lose it.
 */
function sendJson(res: ServerResponse, status: number, doc: unknown) {
  const req = res.req;
  const write = () => {
    if (res.headersSent || res.destroyed) return;
    const text = `${JSON.stringify(doc)}\n`;
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
    res.end(text);
  };
  if (req.complete || req.destroyed) return write();
  req.once("end", write);
  req.resume();
}

/** A string as a readable stream (the task's whole input). */
function stringStream(text: string): NodeJS.ReadableStream {
  return Readable.from([Buffer.from(text)]);
}
