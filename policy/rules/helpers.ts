/** Small pieces every rule uses: findings, capability notes, container field paths for fixes. */
import {
  type ContainerView,
  containerLabel,
  isUnreadable,
  type Unreadable,
  type WorkloadView,
} from "../workload";
import type { Finding } from "./types";

export function violation(message: string, path?: string): Finding {
  return path === undefined || path === "" ? { message } : { message, path };
}

/**
 * What a rule says about a value it cannot judge. A preview unknown is a note ("not known until the update": the
 * engine runs the policy again once it is known). A value that is present but unreadable (a Pulumi secret, a binary
 * or tagged value, the wrong shape) will never become readable, so the rule fails closed: a violation.
 */
export function unchecked(what: string, path?: string, ...values: readonly unknown[]): Finding {
  const bad = values.find(isUnreadable) ?? values.flatMap(unreadableIn).at(0);
  if (bad !== undefined) {
    return violation(`${what} cannot be checked: ${bad.reason}; the policy fails closed on it`, path);
  }
  const message = `${what} could not be checked: the value is not known until the update`;
  return path === undefined || path === ""
    ? { message, unchecked: true }
    : { message, path, unchecked: true };
}

/** Unreadable entries of a list value (a capability list with one secret entry). */
function unreadableIn(v: unknown): Unreadable[] {
  return Array.isArray(v) ? v.filter(isUnreadable) : [];
}

/** `container "app"` plus, for Kubernetes, nothing else: the path goes into the finding. */
export const label = containerLabel;

/**
 * For messages: `; on Kubernetes the runtime reads "CAP_ALL" as no capability (containerd adds its own CAP_ prefix
 * and does not trim), so that entry drops nothing`, or "" when every entry names something.
 */
export function ineffectiveNote(ineffective: readonly string[]): string {
  if (ineffective.length === 0) return "";
  const shown = ineffective.map((x) => JSON.stringify(x)).join(", ");
  return `; on Kubernetes the container runtime reads ${shown} as no capability (containerd prefixes CAP_ itself and does not trim, and the name must be exact), so ${ineffective.length > 1 ? "those entries drop" : "that entry drops"} nothing`;
}

/** `[ALL, NET_RAW]` for messages. */
export function showList(xs: readonly string[]): string {
  return `[${xs.join(", ")}]`;
}

/** Splits a display path (`spec.containers[0].env`) into segments for an edit. */
export function pathSegments(path: string): (string | number)[] {
  const out: (string | number)[] = [];
  for (const part of path.split(".")) {
    if (part === "") continue;
    const m = /^([^[]*)((?:\[\d+\])*)$/.exec(part);
    if (m === null) {
      out.push(part);
      continue;
    }
    if (m[1] !== undefined && m[1] !== "") out.push(m[1]);
    for (const idx of (m[2] ?? "").matchAll(/\[(\d+)\]/g)) out.push(Number(idx[1]));
  }
  return out;
}

/** The names a container field has on each front, for fixes. */
export interface FieldNames {
  readonly docker: string;
  readonly launch: string;
  readonly kubernetes: string;
}

/** Segments of a container field (`capabilities.drops`, `securityContext.capabilities.drop`, ...). */
export function containerFieldPath(
  w: WorkloadView,
  c: ContainerView,
  names: FieldNames,
): (string | number)[] {
  const name =
    w.origin.backend === "docker"
      ? names.docker
      : w.origin.backend === "launch"
        ? names.launch
        : names.kubernetes;
  return [...pathSegments(c.path), ...pathSegments(name)];
}

/** A number for messages: `0.5`, `2`. */
export function showNumber(n: number): string {
  return Number(n.toFixed(3)).toString();
}

/** A workload's name for stack messages: `Deployment "web"`. */
export function workloadLabel(w: WorkloadView): string {
  return `${w.origin.kind} "${w.origin.name}"`;
}
