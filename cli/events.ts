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
  private readonly seen = new Set<string>();

  constructor(private readonly progress: (line: string) => void) {}

  readonly onEvent = (event: EngineEvent): void => {
    if (event.resOutputsEvent !== undefined)
      this.outputs(event.resOutputsEvent.metadata, event.resOutputsEvent.planning);
    if (event.resOpFailedEvent !== undefined) {
      const m = event.resOpFailedEvent.metadata;
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
      this.progress(`  ${planning ? done[1] : done[0]} ${object.name} (${object.type})`);
  }

  /** Runs `add` the first time `key` is seen: the engine repeats diagnostics (per step, per plugin load). */
  private note(key: string, add: () => void): void {
    if (this.seen.has(key)) return;
    this.seen.add(key);
    add();
  }
}
