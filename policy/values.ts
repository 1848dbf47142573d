/**
 * What a field read from a resource can be, and where it came from: the vocabulary of every view (workload.ts,
 * workload-exposure.ts). Every field that comes from the resource is a {@link Val}: the value, `undefined` when the
 * field is absent, or {@link UNKNOWN} when it cannot be known yet (a preview unknown). Rules must treat UNKNOWN as
 * "cannot be checked", never as a violation.
 */

/** A value that is not known during preview (it depends on another resource's output). */
export const UNKNOWN: unique symbol = Symbol.for("sandbox.policy.unknown");
export type Unknown = typeof UNKNOWN;

/**
 * A value that is present in the input but cannot be read as its field's type: a binary value, a tagged scalar, an
 * object where a flag belongs, a Pulumi secret whose value the document does not show. Unlike a preview unknown it
 * will not become known later, so a rule that needs it fails closed: "cannot be checked" is a violation.
 */
export class Unreadable {
  constructor(
    /** Why, in the user's terms: `it is a Pulumi secret`, `a binary value`, `an object where a value belongs`. */
    readonly reason: string,
  ) {}
}

/** A field as read from a resource: the value, absent (`undefined`), not known yet, or unreadable. */
export type Val<T> = T | undefined | Unknown | Unreadable;

/** True when `v` cannot be judged now: a preview unknown or an unreadable value. */
export function isUnknown(v: unknown): v is Unknown | Unreadable {
  return v === UNKNOWN || v instanceof Unreadable;
}

/** True when `v` is present but unreadable (the rules fail closed on it). */
export function isUnreadable(v: unknown): v is Unreadable {
  return v instanceof Unreadable;
}

/** Which front wrote the workload. */
export type Backend = "docker" | "kubernetes" | "launch";

/** Where a workload came from, for messages. */
export interface Origin {
  readonly backend: Backend;
  /** The Pulumi type token (`docker:index/container:Container`, `kubernetes:apps/v1:Deployment`) or `launch`. */
  readonly type: string;
  /** The Kubernetes Kind, or `Container` for Docker. */
  readonly kind: string;
  readonly name: string;
}
