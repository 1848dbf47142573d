/**
 * The launch service's check of one launch request (POST /v1/runs), before anything is admitted or started: each bad
 * part is refused with the field, the value (described, never echoed whole: a request is anyone's) and what is
 * allowed. Nothing here walks into a value it does not expect, so a deeply nested or huge document costs no more
 * than its parse. And the answer to anything a launch throws: its HTTP status and JSON error.
 */
import type { IncomingMessage } from "node:http";
import { AGENT_NAME, type ResolvedProject } from "../components/model";
import { isSafeJobName } from "../runtime/jobs";
import { BudgetRefused } from "../runtime/ledger";
import type { RunRequestBody, ServiceError } from "../runtime/serve/protocol";
import { ENV_NAME, MAX_ENV_BYTES, RunUsageError, TOOLKIT_VARIABLES } from "./run-options";
import { failureOf } from "./task-failure";

/** A bad part of a request: the answer is 400 with these fields. */
export class BadRequest extends Error {
  constructor(
    readonly field: string,
    readonly value: string,
    readonly allowed: string,
    message?: string,
  ) {
    super(message ?? `${field} ${value}: ${allowed}`);
    this.name = "BadRequest";
  }
}

/** The request's fields. */
const FIELDS = ["template", "command", "files", "stdin", "agent", "env", "timeoutSeconds"] as const;

/** Bounds of a request's parts (the body as a whole is bounded where it is read). */
export const REQUEST_LIMITS = {
  commandArgs: 4096,
  commandBytes: 256 * 1024,
  files: 1000,
  fileNameBytes: 1024,
} as const;

/** A value as an error names it: a string quoted and cut, a number as is, anything else by its kind. */
export function describeValue(v: unknown): string {
  if (typeof v === "string") {
    const s = JSON.stringify(v.length > 80 ? `${v.slice(0, 80)}…` : v);
    return v.length > 80 ? `${s} (${v.length} characters)` : s;
  }
  if (typeof v === "number" || typeof v === "boolean" || v === null) return String(v);
  if (Array.isArray(v)) return `a list of ${v.length}`;
  if (typeof v === "object") return "an object";
  return typeof v;
}

/** A key of the request as an error names it. */
const keyName = (k: string) => (/^[A-Za-z0-9_.-]{1,64}$/.test(k) ? k : describeValue(k));

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Checks a parsed request body against the stack's templates; throws {@link BadRequest} naming the first fault. */
export function checkRunRequest(doc: unknown, project: ResolvedProject): RunRequestBody {
  if (!isObject(doc))
    throw new BadRequest(
      "body",
      describeValue(doc),
      `a JSON object with ${FIELDS.join(", ")} (template required)`,
    );
  const unknown = Object.keys(doc).find((k) => !(FIELDS as readonly string[]).includes(k));
  if (unknown !== undefined)
    throw new BadRequest(keyName(unknown), "(an unknown field)", `the fields are ${FIELDS.join(", ")}`);
  const templates = Object.keys(project.spec.templates).sort();
  const { template, command, files, stdin, agent, env, timeoutSeconds } = doc;
  if (typeof template !== "string" || !templates.includes(template))
    throw new BadRequest(
      "template",
      describeValue(template),
      `one of the stack's templates: ${templates.join(", ")}`,
    );
  const out: { -readonly [K in keyof RunRequestBody]: RunRequestBody[K] } = { template };
  if (command !== undefined) out.command = checkCommand(command);
  if (files !== undefined) out.files = checkFiles(files);
  if (stdin !== undefined) {
    if (typeof stdin !== "string")
      throw new BadRequest("stdin", describeValue(stdin), "a string (the task's input)");
    out.stdin = stdin;
  }
  if (agent !== undefined) {
    if (typeof agent !== "string" || !AGENT_NAME.test(agent))
      throw new BadRequest(
        "agent",
        describeValue(agent),
        "an agent's name: lower-case letters, digits, ., _ and -, starting with a letter or digit, at most 64 characters",
      );
    out.agent = agent;
  }
  if (env !== undefined) out.env = checkEnv(env);
  if (timeoutSeconds !== undefined) {
    const most = project.spec.templates[template]?.timeoutSeconds ?? 0;
    if (
      typeof timeoutSeconds !== "number" ||
      !Number.isInteger(timeoutSeconds) ||
      timeoutSeconds < 1 ||
      timeoutSeconds > most
    )
      throw new BadRequest(
        "timeoutSeconds",
        describeValue(timeoutSeconds),
        `whole seconds from 1 to template "${template}"'s deadline, ${most}`,
      );
    out.timeoutSeconds = timeoutSeconds;
  }
  return out;
}

function checkCommand(command: unknown): string[] {
  const allowed = `a list of 1 to ${REQUEST_LIMITS.commandArgs} strings without NUL, ${REQUEST_LIMITS.commandBytes / 1024} KiB in all`;
  if (!Array.isArray(command) || command.length === 0 || command.length > REQUEST_LIMITS.commandArgs)
    throw new BadRequest("command", describeValue(command), allowed);
  let bytes = 0;
  command.forEach((arg: unknown, i) => {
    if (typeof arg !== "string" || arg.includes("\0"))
      throw new BadRequest(`command[${i}]`, describeValue(arg), allowed);
    bytes += Buffer.byteLength(arg) + 1;
  });
  if (bytes > REQUEST_LIMITS.commandBytes) throw new BadRequest("command", `(${bytes} bytes)`, allowed);
  return command as string[];
}

function checkFiles(files: unknown): Record<string, string> {
  if (!isObject(files))
    throw new BadRequest(
      "files",
      describeValue(files),
      "an object: a relative name in the job folder → its UTF-8 content",
    );
  const entries = Object.entries(files);
  if (entries.length > REQUEST_LIMITS.files)
    throw new BadRequest("files", `(${entries.length} files)`, `at most ${REQUEST_LIMITS.files} files`);
  for (const [name, content] of entries) {
    if (!isSafeJobName(name) || name.includes("\0") || Buffer.byteLength(name) > REQUEST_LIMITS.fileNameBytes)
      throw new BadRequest(
        `files[${describeValue(name)}]`,
        "(its name)",
        "a relative path inside the job folder: no leading /, no .. or empty segments, no NUL",
      );
    if (typeof content !== "string")
      throw new BadRequest(
        `files[${describeValue(name)}]`,
        describeValue(content),
        "a string (the file's content)",
      );
  }
  return files as Record<string, string>;
}

function checkEnv(env: unknown): Record<string, string> {
  if (!isObject(env)) throw new BadRequest("env", describeValue(env), "an object: NAME → value");
  let bytes = 0;
  for (const [name, value] of Object.entries(env)) {
    const field = `env[${describeValue(name)}]`;
    if (!ENV_NAME.test(name))
      throw new BadRequest(
        field,
        "(its name)",
        "a variable name: letters, digits and _, not starting with a digit",
      );
    if (TOOLKIT_VARIABLES.has(name))
      throw new BadRequest(
        field,
        "(its name)",
        "a variable the toolkit does not set itself (the proxy's or the broker's address)",
      );
    if (typeof value !== "string" || value.includes("\0"))
      throw new BadRequest(field, describeValue(value), "a string without NUL");
    bytes += Buffer.byteLength(name) + Buffer.byteLength(value) + 2;
  }
  if (bytes > MAX_ENV_BYTES)
    throw new BadRequest("env", `(${bytes} bytes)`, `at most ${MAX_ENV_BYTES} bytes in all`);
  return env as Record<string, string>;
}

/** The most of one request's body: files and input travel in it, so it is larger than a command needs. */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** A refusal with its HTTP status and JSON error. */
export class Answer extends Error {
  constructor(
    readonly status: number,
    readonly error: ServiceError,
  ) {
    super(error.message);
  }
}

/**
 * The request's body as JSON: bounded in bytes, UTF-8 text, one JSON document. `hold` is told of each piece before
 * it is kept (it throws when the service holds too much already).
 */
export async function readJson(req: IncomingMessage, hold: (bytes: number) => void): Promise<unknown> {
  const type = req.headers["content-type"];
  if (type !== undefined && !/^application\/json\s*(;.*)?$/i.test(type))
    throw new BadRequest("content-type", describeValue(type), "application/json");
  const declared = Number(req.headers["content-length"] ?? Number.NaN);
  const tooLarge = () =>
    new Answer(413, {
      kind: "too-large",
      field: "body",
      message: `the request's body is over ${MAX_BODY_BYTES} bytes, the most a launch takes (files and input included)`,
    });
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  // Read by events, not by iteration: leaving an iteration early would destroy the connection before the answer.
  const { chunks, size } = await new Promise<{ chunks: Buffer[]; size: number }>((resolve, reject) => {
    let chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    const fail = (e: unknown) => {
      failed = true;
      chunks = [];
      reject(e);
    };
    req.on("data", (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > MAX_BODY_BYTES) return fail(tooLarge());
      try {
        hold(chunk.length);
      } catch (e) {
        return fail(e);
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      if (!failed) resolve({ chunks, size });
    });
    req.on("error", (e) => {
      if (!failed) fail(e);
    });
  });
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw new BadRequest("body", `(${size} bytes)`, "UTF-8 text: one JSON object");
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new BadRequest(
      "body",
      `(${size} bytes)`,
      `one JSON object (${e instanceof Error ? e.message.slice(0, 120) : "not JSON"})`,
    );
  }
}

/** The status and JSON error of anything a launch threw. */
export function answerOf(e: unknown): Answer {
  if (e instanceof Answer) return e;
  if (e instanceof BadRequest)
    return new Answer(400, {
      kind: "bad-input",
      field: e.field,
      value: e.value,
      allowed: e.allowed,
      message: e.message,
    });
  if (e instanceof RunUsageError) return new Answer(400, { kind: "bad-input", message: e.message });
  if (e instanceof BudgetRefused)
    return new Answer(e.reason === "concurrency" ? 429 : 403, {
      kind: "refused",
      reason: e.reason,
      message: e.message,
    });
  const f = failureOf("serve", e);
  const status = f.kind === "refused" ? 403 : f.kind === "engine" ? 500 : 503;
  return new Answer(status, { kind: f.kind, message: f.message });
}
