import { isatty } from "node:tty";
import { asStarted } from "./front-command";
import { ProgressLines } from "./progress";
/** Where the front writes: stdout holds the result (one JSON document with `--json`), stderr everything else. */
export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
  /** Which of the two is a terminal (a person reads it): what a task wrote is then shown, not replayed. */
  readonly terminal?: { readonly out: boolean; readonly err: boolean };
  /** Asks the person at the terminal and gives the line they answer; absent when no one is there to ask. */
  readonly ask?: (question: string) => Promise<string>;
  /**
   * A value the verb needs and must not see on its command line (a secret): standard input when it is piped, else a
   * prompt on the terminal that does not echo what is typed.
   */
  readonly readValue?: (prompt: string) => Promise<string>;
  /** This command's standard input, for a task that reads it (`run -i`); absent when there is none to give. */
  readonly stdin?: () => NodeJS.ReadableStream;
}

/** The front's own streams. */
export function processIo(): Io {
  // Asked of the descriptor: `process.stdin` would make the stream (and load Node's file streams and readline, a few
  // milliseconds of every start) for a verb that never reads it.
  const interactive = isatty(0) && process.stderr.isTTY === true;
  return {
    out: (t) => process.stdout.write(t),
    err: (t) => process.stderr.write(t),
    terminal: { out: process.stdout.isTTY === true, err: process.stderr.isTTY === true },
    ...(interactive ? { ask: askOnTerminal } : {}),
    readValue: readValue,
    stdin: () => process.stdin,
  };
}

/** At most this much of a value on standard input (a credential, not a file). */
const MAX_VALUE_BYTES = 64 * 1024;

/** Standard input when piped (one trailing line break dropped), else a hidden prompt on the terminal. */
async function readValue(prompt: string): Promise<string> {
  if (process.stdin.isTTY !== true) {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of process.stdin) {
      size += (chunk as Buffer).length;
      if (size > MAX_VALUE_BYTES)
        throw new Error(`the value on standard input is over ${MAX_VALUE_BYTES} bytes`);
      chunks.push(chunk as Buffer);
    }
    return Buffer.concat(chunks)
      .toString("utf8")
      .replace(/\r?\n$/, "");
  }
  const { createInterface } = await import("node:readline/promises");
  const { Writable } = await import("node:stream");
  // What is typed is not echoed: the prompt is written once, then the output is muted.
  process.stderr.write(prompt);
  const muted = new Writable({ write: (_c, _e, done) => done() });
  const rl = createInterface({ input: process.stdin, output: muted, terminal: true });
  try {
    return await rl.question("");
  } finally {
    rl.close();
    process.stderr.write("\n");
  }
}

/** One line from the terminal, the question on stderr (stdout keeps the result only). */
async function askOnTerminal(question: string): Promise<string> {
  const { createInterface } = await import("node:readline/promises");
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await rl.question(question);
  } finally {
    rl.close();
  }
}

/**
 * The characters that steer a terminal rather than print: C0 controls but tab and line feed (escape sequences clear
 * the screen, set the title, write the clipboard; a carriage return overwrites a line), DEL, C1 controls, and the
 * bidirectional overrides and isolates that reorder what a line seems to say.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is written out
const STEERING = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Text a task chose (its output, a file name), each steering character written out as an escape (`\x1b`). */
export function escapeControls(text: string): string {
  return text.replace(STEERING, (c) => {
    const n = c.charCodeAt(0);
    return n < 0x100 ? `\\x${n.toString(16).padStart(2, "0")}` : `\\u${n.toString(16).padStart(4, "0")}`;
  });
}

/** The gutter before each line a task wrote, on a terminal: the front's own lines never start with it. */
export const TASK_GUTTER = "\u2502 ";

/**
 * A task's output as the front passes it on: to a file or a pipe, the bytes as written; to a terminal, shown: its
 * steering characters escaped (CRLF line ends kept as line ends) and each line behind {@link TASK_GUTTER}, ended by
 * a line break, so that nothing a task prints can pass for the front's own lines or change the terminal.
 */
export function taskOutput(text: string, terminal: boolean): string {
  if (!terminal || text === "") return text;
  const lines = escapeControls(text.replace(/\r\n/g, "\n")).split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines.map((l) => `${TASK_GUTTER}${l}\n`).join("");
}

/** The common fields of every `--json` document the stack verbs and `check` write (see the README). */
export interface JsonDoc {
  readonly verb: string;
  readonly stack: string;
  readonly ok: boolean;
  readonly exitCode: number;
  readonly [key: string]: unknown;
}

/**
 * The front's voice for one verb. stdout gets exactly one thing: the result (text, or one JSON document with
 * `--json`). stderr gets notes, progress and warnings (each warning once per run, however often the engine repeats
 * it) and, with `--verbose`, the engine's own output.
 */
export class Reporter {
  private readonly warned = new Set<string>();
  readonly warnings: string[] = [];

  constructor(
    private readonly io: Io,
    readonly json: boolean,
    readonly verbose: boolean,
  ) {}

  /** A line for the person watching (stderr). */
  note(text: string): void {
    this.io.err(asStarted(text.endsWith("\n") ? text : `${text}\n`));
  }

  /** The engine's progress for a person: done lines, and a live spinner line on a terminal (cli/progress.ts). */
  progress(): ProgressLines {
    return new ProgressLines(
      (t) => this.io.err(asStarted(t)),
      this.io.terminal?.err === true && !this.verbose,
    );
  }

  /** The engine's raw output: only with `--verbose`. */
  readonly engine = (text: string): void => {
    if (this.verbose) this.io.err(text);
  };

  /** A warning, printed the first time it is seen. */
  warning(message: string): void {
    const text = message.trim();
    if (this.warned.has(text)) return;
    this.warned.add(text);
    this.warnings.push(text);
    this.note(`warning: ${text}`);
  }

  /** The verb's result: `text` for a person, or `doc` (with the warnings) as the one JSON document. */
  result(doc: JsonDoc, text: string): number {
    if (this.json) this.io.out(`${JSON.stringify({ ...doc, warnings: this.warnings })}\n`);
    else if (text !== "") this.io.out(text.endsWith("\n") ? text : `${text}\n`);
    return doc.exitCode;
  }

  /** A failure: one message on stderr, or the one JSON document (`ok: false`, `error`) on stdout. */
  failure(doc: JsonDoc & { error: { kind: string; message: string } }): number {
    if (this.json) this.io.out(asStarted(`${JSON.stringify({ ...doc, warnings: this.warnings })}\n`));
    else this.note(doc.error.message);
    return doc.exitCode;
  }
}

/** `{"create":5,"same":4}` → `5 created, 4 unchanged` (or `5 to create` for a preview). */
export function describeChanges(changes: Readonly<Record<string, number>>, planned: boolean): string {
  const words: Record<string, [string, string]> = {
    create: ["created", "to create"],
    update: ["updated", "to update"],
    delete: ["deleted", "to delete"],
    replace: ["replaced", "to replace"],
    same: ["unchanged", "unchanged"],
    refresh: ["refreshed", "to refresh"],
  };
  const parts = Object.entries(changes)
    .filter(([, n]) => n > 0)
    .map(([op, n]) => `${n} ${words[op]?.[planned ? 1 : 0] ?? op}`);
  return parts.length > 0 ? parts.join(", ") : "nothing";
}
