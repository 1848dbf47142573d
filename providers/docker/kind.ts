/**
 * What each resource kind of the local Docker provider implements (in the type tokens and property names of the
 * `@pulumi/docker` version provider.ts reports, on the real Engine API), and what the kinds share: labels,
 * auto-naming and the refresh overlay.
 */

import type Dockerode from "dockerode";
import { LABELS } from "../../components/model";

/** A resource's properties, in `@pulumi/docker`'s names. */
export type Props = Record<string, unknown>;

/** One resource kind the provider serves. */
export interface ResourceKind {
  /** The `@pulumi/docker` type token. */
  readonly type: string;
  /** The input properties it implements; the official plugin supports more, and any other fails `check`. */
  readonly inputs: readonly string[];
  /** The outputs it computes (never inputs). */
  readonly outputs: readonly string[];
  /** The inputs whose change it applies in place (Pulumi-only settings); a change of any other replaces. */
  readonly inPlace: readonly string[];
  /** Check failures of its own, beyond properties it does not implement. */
  readonly check?: (news: Props) => { property: string; reason: string }[];
  create(docker: Dockerode, urn: string, p: Props): Promise<{ id: string; outs: Props }>;
  /** The object as the engine has it, over the recorded `state`; undefined when it is gone. */
  read(docker: Dockerode, id: string, state: Props): Promise<Props | undefined>;
  /** Removes the object; the caller treats "not found" as done. */
  remove(docker: Dockerode, id: string): Promise<void>;
}

/** A label as `@pulumi/docker` lists it. */
export type Label = { label: string; value: string };

/**
 * The label that ties an object to the Pulumi resource that created it. After an interrupted `up` the engine
 * creates the resource again; the provider then finds what the first attempt left instead of duplicating it.
 */
export const URN_LABEL = LABELS.pulumiUrn;

/** `@pulumi/docker`'s label list as the Engine's label map, with the URN label added. */
export function engineLabels(labels: unknown, urn: string): Record<string, string> {
  const declared = ((labels as Label[] | undefined) ?? []).map((l) => [l.label, l.value]);
  return { ...Object.fromEntries(declared), [URN_LABEL]: urn };
}

/** Labels as `@pulumi/docker` lists them, without the provider's own bookkeeping label. */
export function labelsList(labels: Record<string, string> | undefined): Label[] {
  return Object.entries(labels ?? {})
    .filter(([k]) => k !== URN_LABEL)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([label, value]) => ({ label, value }));
}

/** The name to give an object: the declared one, else the resource's name with a random suffix, as Pulumi names. */
export function objectName(p: Props, urn: string): string {
  return (
    (p.name as string | undefined) ??
    `${urn.split("::").pop() ?? "resource"}-${Math.random().toString(16).slice(2, 9)}`
  );
}

/** Overrides the keys the state has with what the engine says, so a refresh shows drift. */
export function overlay(state: Props, observed: Props): Props {
  const out: Props = { ...state };
  for (const [k, v] of Object.entries(observed)) if (state[k] !== undefined || k === "name") out[k] = v;
  return out;
}
