/**
 * The typed client of the launch service (`sandbox serve`): an agent on this machine launches tasks through the
 * service's unix socket, or its loopback TCP port with its key, and gets each task's output as it is written.
 *
 *   const client = new SandboxClient({ socket: ".sandbox/serve/dev.sock" });
 *   const r = await client.run({ template: "default", command: ["sh", "-c", "echo hi"], onStdout: (t) => log(t) });
 *
 * A refusal arrives as a {@link SandboxServiceError} carrying the service's JSON error (its kind, the field of the
 * request at fault, the ledger's reason); a service that cannot be reached as a {@link SandboxConnectionError}.
 * Loads only Node's own modules.
 */
import { type ClientRequest, type IncomingMessage, request } from "node:http";
import {
  API,
  type ErrorBody,
  type ExitEvent,
  type Health,
  type RunEvent,
  type RunRequestBody,
  SERVICE_NAME,
  type ServiceError,
} from "./protocol";

export type * from "./protocol";

/** Where the service answers: its socket (the key optional), or its loopback URL with an agent's key. */
export type SandboxClientOptions =
  | { readonly socket: string; readonly token?: string; readonly url?: undefined }
  | { readonly url: string; readonly token: string; readonly socket?: undefined };

/** One launch: the request's fields, and where the output goes as it is written. */
export interface SandboxRunOptions extends RunRequestBody {
  readonly onStdout?: (text: string) => void;
  readonly onStderr?: (text: string) => void;
  /** Aborting it ends the request; the service then stops the task. */
  readonly signal?: AbortSignal;
}

/** What came of a launch: the exit event's fields and the task's whole output as received. */
export interface SandboxRunResult extends Omit<ExitEvent, "type"> {
  readonly stdout: string;
  readonly stderr: string;
}

/** The service answered with an error: `error` is its JSON error, `status` the HTTP status. */
export class SandboxServiceError extends Error {
  readonly kind: string;
  constructor(
    readonly status: number,
    readonly error: ServiceError,
  ) {
    super(error.message);
    this.name = "SandboxServiceError";
    this.kind = error.kind;
  }
}

/** The service could not be reached, or its answer broke off or was not the protocol's. */
export class SandboxConnectionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "SandboxConnectionError";
  }
}

/** A loopback host: the service never listens elsewhere, and a key never travels off the machine. */
const LOOPBACK = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|\[::1\])$/;

/** The most of one event line (an exit event carries the task's result files). */
const MAX_LINE = 64 * 1024 * 1024;

export class SandboxClient {
  private readonly target: { socketPath: string } | { host: string; port: number };
  private readonly token: string | undefined;

  constructor(options: SandboxClientOptions) {
    const o = options as { socket?: unknown; url?: unknown; token?: unknown };
    if ((o.socket === undefined) === (o.url === undefined))
      throw new TypeError("SandboxClient: give either socket (the service's unix socket) or url and token");
    if (o.token !== undefined && (typeof o.token !== "string" || o.token === "" || /[\s]/.test(o.token)))
      throw new TypeError(
        "SandboxClient: token must be an agent's key (`sandbox agent-key <stack> <agent>`)",
      );
    this.token = o.token as string | undefined;
    if (typeof o.socket === "string" && o.socket !== "") {
      this.target = { socketPath: o.socket };
      return;
    }
    if (o.socket !== undefined)
      throw new TypeError("SandboxClient: socket must be the path of the service's socket");
    let url: URL | undefined;
    try {
      url = new URL(String(o.url));
    } catch {
      url = undefined;
    }
    if (url === undefined || url.protocol !== "http:" || !LOOPBACK.test(url.hostname) || url.port === "")
      throw new TypeError(
        `SandboxClient: url ${JSON.stringify(String(o.url))} must be http://127.0.0.1:PORT (or localhost, [::1]): the service listens on loopback only`,
      );
    if (this.token === undefined)
      throw new TypeError("SandboxClient: over TCP every launch carries an agent's key: give token");
    this.target = { host: url.hostname.replace(/^\[|\]$/g, ""), port: Number(url.port) };
  }

  /** The service's health answer; throws when what answers is not the launch service. */
  async health(options: { timeoutMs?: number } = {}): Promise<Health> {
    const res = await this.send("GET", API.health, undefined, options.timeoutMs);
    const text = await readAll(res, 1024 * 1024);
    const doc = parseJson(text) as Partial<Health> | undefined;
    if (res.statusCode !== 200 || doc?.service !== SERVICE_NAME)
      throw new SandboxConnectionError(
        `what answers is not the launch service (HTTP ${res.statusCode}: ${text.slice(0, 200)})`,
      );
    return doc as Health;
  }

  /** Launches one task and resolves with its result once it has ended; its output goes to the callbacks as written. */
  async run(options: SandboxRunOptions): Promise<SandboxRunResult> {
    const { onStdout, onStderr, signal, ...body } = options;
    const res = await this.send("POST", API.runs, JSON.stringify(body), undefined, signal);
    if (res.statusCode !== 200) throw await errorOf(res);
    const out = { stdout: [] as string[], stderr: [] as string[] };
    let exit: ExitEvent | undefined;
    for await (const event of events(res)) {
      if (event.type === "stdout" || event.type === "stderr") {
        out[event.type].push(event.data);
        (event.type === "stdout" ? onStdout : onStderr)?.(event.data);
      } else if (event.type === "exit") exit = event;
      else if (event.type === "error") throw new SandboxServiceError(event.status, event.error);
    }
    if (exit === undefined)
      throw new SandboxConnectionError("the service's answer ended before the task's exit event");
    const { type: _type, ...rest } = exit;
    return { ...rest, stdout: out.stdout.join(""), stderr: out.stderr.join("") };
  }

  private send(
    method: string,
    path: string,
    body: string | undefined,
    timeoutMs?: number,
    signal?: AbortSignal,
  ): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { accept: "application/x-ndjson, application/json" };
      if (this.token !== undefined) headers.authorization = `Bearer ${this.token}`;
      if (body !== undefined) {
        headers["content-type"] = "application/json";
        headers["content-length"] = String(Buffer.byteLength(body));
      }
      let req: ClientRequest;
      const fail = (e: unknown) =>
        reject(
          e instanceof SandboxConnectionError
            ? e
            : new SandboxConnectionError(
                `the launch service at ${this.where()} does not answer: ${e instanceof Error ? e.message : String(e)}`,
                { cause: e },
              ),
        );
      try {
        // A connection of its own for each request: a kept-alive one the service closes as idle, just as it is
        // reused, would fail the request (EPIPE), and a local connection costs next to nothing.
        req = request(
          { ...this.target, method, path, headers, agent: false, ...(signal ? { signal } : {}) },
          resolve,
        );
      } catch (e) {
        fail(e);
        return;
      }
      req.on("error", fail);
      if (timeoutMs !== undefined)
        req.setTimeout(timeoutMs, () =>
          req.destroy(new SandboxConnectionError(`no answer from ${this.where()} in ${timeoutMs} ms`)),
        );
      req.end(body);
    });
  }

  private where(): string {
    return "socketPath" in this.target
      ? this.target.socketPath
      : `http://${this.target.host.includes(":") ? `[${this.target.host}]` : this.target.host}:${this.target.port}`;
  }
}

/** The events of a streamed answer, one JSON document a line. */
async function* events(res: IncomingMessage): AsyncGenerator<RunEvent> {
  res.setEncoding("utf8");
  let partial = "";
  try {
    for await (const chunk of res) {
      partial += chunk as string;
      let cut = partial.indexOf("\n");
      while (cut >= 0) {
        const line = partial.slice(0, cut);
        partial = partial.slice(cut + 1);
        if (line !== "") yield eventOf(line);
        cut = partial.indexOf("\n");
      }
      if (partial.length > MAX_LINE) throw new SandboxConnectionError("an event of the answer is too long");
    }
  } catch (e) {
    if (e instanceof SandboxConnectionError) throw e;
    throw new SandboxConnectionError(
      `the service's answer broke off: ${e instanceof Error ? e.message : String(e)}`,
      { cause: e },
    );
  }
  if (partial !== "") yield eventOf(partial);
}

function eventOf(line: string): RunEvent {
  const e = parseJson(line) as Partial<RunEvent> | undefined;
  if (e === undefined || typeof e !== "object" || typeof e.type !== "string")
    throw new SandboxConnectionError(
      `the service sent something that is not an event: ${line.slice(0, 200)}`,
    );
  return e as RunEvent;
}

/** The typed error of an error answer. */
async function errorOf(res: IncomingMessage): Promise<SandboxServiceError> {
  const text = await readAll(res, 1024 * 1024);
  const doc = parseJson(text) as Partial<ErrorBody> | undefined;
  const error = doc?.error;
  if (error !== undefined && typeof error.kind === "string" && typeof error.message === "string")
    return new SandboxServiceError(res.statusCode ?? 0, error);
  return new SandboxServiceError(res.statusCode ?? 0, {
    kind: "unknown",
    message: `HTTP ${res.statusCode}: ${text.slice(0, 200)}`,
  });
}

async function readAll(res: IncomingMessage, max: number): Promise<string> {
  res.setEncoding("utf8");
  let text = "";
  for await (const chunk of res) {
    text += chunk as string;
    if (text.length > max) {
      res.destroy();
      break;
    }
  }
  return text;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
