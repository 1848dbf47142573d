import type { EngineEvent, OpType, StepEventMetadata } from "@pulumi/pulumi/automation";
import { parseUrn } from "../policy/urn";

/** An object the engine works on, in the user's terms: its name and a short type (`docker Container`). */
export interface ObjectRef {
  readonly name: string;
  readonly type: string;
}

/** An object a refresh found changed behind the stack's back. */
export interface Drift extends ObjectRef {
  /** `gone`: removed outside the stack (the operation re-creates it); `changed`: its fields differ. */
  readonly change: "gone" | "changed";
  readonly fields: readonly string[];
}

/** A failure the engine reported on one object (or on the stack as a whole when `object` is absent). */
export interface EngineFailure {
  readonly object?: ObjectRef;
  /** What the engine was doing: creating, updating, deleting, replacing, reading. */
  readonly doing?: string;
  readonly message: string;
}

/** A step the engine plans or takes on one object, with why (`preview --json` lists them; `--diff` prints them). */
export interface Step extends ObjectRef {
  readonly op: string;
  /** The keys that change (an update), or that force the replacement (a replace). */
  readonly keys: readonly string[];
  readonly reason: string;
}

/** What the watch tells the person while the engine works (cli/progress.ts). */
export interface Progress {
  /** An object's step started. */
  start(key: string, doing: string): void;
  /** A line to print (an object's step done, when `key` names it). */
  line(text: string, key?: string): void;
  /** An object's step ended without a line (it failed: the failure is reported at the end). */
  end(key: string): void;
}

/** A mandatory policy finding. */
export interface Violation {
  readonly object?: ObjectRef;
  readonly rule: string;
  readonly message: string;
}

/** `urn:pulumi:<stack>::<project>::<type chain>::<name>` → the object's name and its last type, made short. */
export function objectOf(urn: string): ObjectRef {
  // Split as Pulumi splits it (policy/urn.ts): a name may hold `::` itself.
  const parts = parseUrn(urn);
  const name = parts?.name ?? urn;
  const type = parts?.type ?? "";
  // `docker:index/container:Container` → `docker Container`; `sandbox:docker:TaskTemplate` → `sandbox TaskTemplate`.
  const [pkg = type, , kind] = type.split(":");
  return { name, type: kind === undefined ? type : `${pkg} ${kind}` };
}

const DOING: Partial<Record<OpType, string>> = {
  create: "creating",
  update: "updating",
  delete: "deleting",
  replace: "replacing",
  "create-replacement": "creating the replacement of",
  "delete-replaced": "deleting the replaced",
  read: "reading",
  refresh: "refreshing",
  import: "importing",
};

const DONE: Partial<Record<OpType, [string, string]>> = {
  create: ["created", "would create"],
  update: ["updated", "would update"],
  delete: ["deleted", "would delete"],
  replace: ["replaced", "would replace"],
};

/** Why the engine takes a step, in words; undefined for what is no change (same, read, refresh, the halves of a replace). */
function stepReason(m: StepEventMetadata): string | undefined {
  const list = (keys: readonly string[] | undefined) => (keys ?? []).join(", ");
  switch (m.op) {
    case "create":
      return "new in the program (not in the stack's state)";
    case "delete":
      return "no longer in the program";
    case "update":
      return (m.diffs ?? []).length > 0 ? `changed: ${list(m.diffs)}` : "changed";
    case "replace":
      return (m.keys ?? []).length > 0
        ? `${list(m.keys)} cannot change in place`
        : "the provider cannot change it in place";
    default:
      return undefined;
  }
}

/** The engine's generic closing errors, which only repeat that a resource failed. */
const GENERIC = /^(update|preview|refresh|destroy) failed$|^an unhandled error occurred/;

/**
 * Reads the engine's structured events of one operation: what changed (for progress lines), what drifted (the
 * refresh step of `up`/`preview --refresh`), the failures and policy findings (each once), and the warnings.
 */
export class EngineWatch {
  readonly drift: Drift[] = [];
  readonly failures: EngineFailure[] = [];
  readonly violations: Violation[] = [];
  readonly warnings: string[] = [];
  /** True when the run was refused on the preview it starts with: no step was taken. */
  beforeSteps = false;
  /** Every create, update, replace and delete the engine planned or took, in order. */
  readonly steps: Step[] = [];
  private readonly seen = new Set<string>();
  private readonly progress: Progress;

  constructor(progress: Progress | ((line: string) => void)) {
    this.progress =
      typeof progress === "function"
        ? { start: () => undefined, line: (t) => progress(t), end: () => undefined }
        : progress;
  }

  readonly onEvent = (event: EngineEvent): void => {
    if (event.resourcePreEvent !== undefined)
      this.pre(event.resourcePreEvent.metadata, event.resourcePreEvent.planning);
    if (event.resOutputsEvent !== undefined)
      this.outputs(event.resOutputsEvent.metadata, event.resOutputsEvent.planning);
    if (event.resOpFailedEvent !== undefined) {
      const m = event.resOpFailedEvent.metadata;
      this.progress.end(m.urn);
      this.note(`failed ${m.urn}`, () => {
        // The message came in the diagnostic just before; attach what was being done to it.
        const i = this.failures.findIndex(
          (f) => f.object?.name === objectOf(m.urn).name && f.doing === undefined,
        );
        const f = this.failures[i];
        if (f !== undefined) this.failures[i] = { ...f, doing: DOING[m.op] ?? m.op };
      });
    }
    const d = event.diagnosticEvent;
    if (d !== undefined) {
      const message = d.message.trim();
      if (d.severity === "error" && !GENERIC.test(message)) {
        this.note(`error ${d.urn ?? ""} ${message}`, () =>
          this.failures.push(
            d.urn === undefined || d.urn.includes("pulumi:pulumi:Stack")
              ? { message }
              : { object: objectOf(d.urn), message },
          ),
        );
      } else if (d.severity === "warning") {
        this.note(`warning ${message}`, () => this.warnings.push(message));
      }
    }
    const p = event.policyEvent;
    if (p !== undefined) {
      const object = p.resourceUrn === undefined ? undefined : objectOf(p.resourceUrn);
      const message = p.message.trim().split("\n")[0] ?? "";
      if (p.enforcementLevel === "mandatory") {
        this.note(`policy ${p.resourceUrn} ${p.policyName}`, () =>
          this.violations.push({ ...(object === undefined ? {} : { object }), rule: p.policyName, message }),
        );
      } else {
        this.note(`advice ${p.resourceUrn} ${p.policyName}`, () =>
          this.warnings.push(`${p.policyName}${object ? ` on ${object.name}` : ""}: ${message}`),
        );
      }
    }
  };

  private pre(m: StepEventMetadata, planning: boolean | undefined): void {
    if (m.type === "pulumi:pulumi:Stack" || m.type.startsWith("pulumi:providers:")) return;
    const object = objectOf(m.urn);
    const reason = stepReason(m);
    if (reason === undefined) return;
    this.steps.push({
      ...object,
      op: m.op,
      keys: [...(m.op === "replace" ? (m.keys ?? []) : (m.diffs ?? []))],
      reason,
    });
    const doing = DOING[m.op];
    if (!planning && doing !== undefined)
      this.progress.start(m.urn, `${doing} ${object.name} (${object.type})`);
  }

  private outputs(m: StepEventMetadata, planning: boolean | undefined): void {
    const object = objectOf(m.urn);
    if (m.op === "refresh") {
      // The engine writes `new: null` for an object the refresh found gone.
      if (m.new === undefined || m.new === null) this.drift.push({ ...object, change: "gone", fields: [] });
      else if ((m.diffs ?? []).length > 0)
        this.drift.push({ ...object, change: "changed", fields: [...(m.diffs ?? [])] });
      return;
    }
    const done = DONE[m.op];
    // The stack itself and the engine's default providers are bookkeeping, not objects a person declared.
    if (m.type === "pulumi:pulumi:Stack" || m.type.startsWith("pulumi:providers:")) return;
    if (done !== undefined)
      this.progress.line(`  ${planning ? done[1] : done[0]} ${object.name} (${object.type})`, m.urn);
  }

  /** Runs `add` the first time `key` is seen: the engine repeats diagnostics (per step, per plugin load). */
  private note(key: string, add: () => void): void {
    if (this.seen.has(key)) return;
    this.seen.add(key);
    add();
  }
}
