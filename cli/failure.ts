import type { EngineFailure, EngineWatch } from "./events";

/** Kinds of stack-verb failure; stable for `--json` readers. */
export type FailureKind = "policy" | "engine" | "locked" | "cancelled";

/** One failure, in the user's terms: what failed, on which object, what to do. */
export interface StackFailure {
  readonly kind: FailureKind;
  /** The whole message a person reads (one block, printed once). */
  readonly message: string;
  /** The object it failed on, when the engine named one. */
  readonly object?: string;
  readonly hint: string;
  /** The engine's own words (its command line, its full output): shown with `--verbose`. */
  readonly detail: string;
}

/** The `error: ...` lines of the engine's stderr, without the Automation API's wrapping (command line, exit code). */
export function engineErrorLines(detail: string): string[] {
  const lines = detail
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.startsWith("error: "))
    .map((l) => l.slice("error: ".length));
  return [...new Set(lines)];
}

/** The engine's refusal to create an object whose name another object already has (HTTP 409). */
const OUTSIDE_STATE = /\(HTTP code 409\)|conflict|already in use|already exists/i;

/** What to do about a failure whose message matches, in order; the last is the default. */
const HINTS: readonly [RegExp, string][] = [
  [
    /is not present on the Docker engine|No such image|image .* not found/i,
    "build the offline images with `bash toolchain/docker.sh`, or name an image that is on the engine in the stack's config; nothing is ever pulled",
  ],
  [
    /Cannot connect to the Docker daemon|ECONNREFUSED|docker\.sock/i,
    "start the Docker engine (`bash toolchain/docker.sh` does, as root on Debian) and run the verb again",
  ],
  [
    OUTSIDE_STATE,
    "objects of this project exist on the engine outside this stack's state (another checkout, or an earlier state of the stack, made them): remove them with `./sandbox off <stack>` (it removes every object labelled with the project) and run the verb again",
  ],
];

function hintFor(message: string, verb: string, stack: string): string {
  for (const [pattern, hint] of HINTS) if (pattern.test(message)) return hint.replace("<stack>", stack);
  return `run \`./sandbox ${verb} ${stack} --verbose\` for the engine's full output`;
}

/**
 * Turns what the engine said about a failed operation into one message. Sources, best first: the policy findings,
 * the per-object errors from the event stream, the engine's own `error:` lines, the raw error.
 */
export function describeFailure(
  verb: string,
  stack: string,
  watch: EngineWatch,
  error: unknown,
  interrupted: NodeJS.Signals | undefined,
): StackFailure {
  const detail = error instanceof Error ? error.message : String(error);
  const head = `${verb} of stack ${stack}`;
  if (interrupted !== undefined) {
    return {
      kind: "cancelled",
      message: `${head} was cancelled (${interrupted}): the engine finished the steps it had started and recorded them; nothing is left to recover`,
      hint: `run \`./sandbox ${verb} ${stack}\` again to finish`,
      detail,
    };
  }
  if (watch.violations.length > 0) {
    const lines = watch.violations.map(
      (v) => `  - ${v.object ? `${v.object.name} (${v.object.type})` : "the stack"}: ${v.rule}: ${v.message}`,
    );
    const hint = "change the stack's config (or the program) so that each object named passes its rule";
    return {
      kind: "policy",
      message: `${head} was refused by the policy pack${watch.beforeSteps ? " on its preview, before any step: nothing was created, changed or deleted" : ""}:\n${lines.join("\n")}\n  what to do: ${hint}`,
      ...(watch.violations[0]?.object ? { object: watch.violations[0].object.name } : {}),
      hint,
      detail,
    };
  }
  const locked = /the stack is currently locked by|locked by \d+ lock/.test(detail);
  if (locked) {
    const owner = /(\S+@\S+ \(pid \d+\))/.exec(detail)?.[1];
    const hint = `wait for it to end and run the verb again; a run that died is recovered by the next \`./sandbox ${verb} ${stack}\``;
    return {
      kind: "locked",
      message: `${head} did not start: another run on this stack${owner ? ` (${owner})` : ""} holds its lock\n  what to do: ${hint}`,
      hint,
      detail,
    };
  }
  // The same message on several objects (one missing image, two probes) is one failure: name the objects once.
  const groups = new Map<string, EngineFailure[]>();
  for (const f of watch.failures) groups.set(f.message, [...(groups.get(f.message) ?? []), f]);
  const entries = [...groups.entries()].map(([message, fs]) => {
    const named = fs.filter((f) => f.object !== undefined);
    if (named.length === 0) return { onObject: false, line: message };
    const first = named[0];
    const doing = first?.doing ?? "working on";
    const objects = named.map((f) => `${f.object?.name} (${f.object?.type})`).join(", ");
    return { onObject: true, line: `${doing} ${objects}: ${message}` };
  });
  // Failures on objects first: a stack-level line mostly repeats that the program or an object failed.
  const lines = [...entries.filter((e) => e.onObject), ...entries.filter((e) => !e.onObject)].map(
    (e) => e.line,
  );
  const object = watch.failures.find((f) => f.object !== undefined)?.object?.name;
  const what =
    lines.length > 0
      ? lines.join("\n  also: ")
      : (engineErrorLines(detail)[0] ??
        detail.split("\n").find((l) => l.trim() !== "") ??
        "the engine failed");
  const hint = hintFor(what, verb, stack);
  // A name taken outside the state is said in those words first; the engine's own follow.
  const said = OUTSIDE_STATE.test(what)
    ? `an object of this project already exists on the engine, outside this stack's state (${what})`
    : what;
  return {
    kind: "engine",
    message: `${head} failed: ${said}\n  what to do: ${hint}`,
    ...(object === undefined ? {} : { object }),
    hint,
    detail,
  };
}
