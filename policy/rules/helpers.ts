/** Small pieces every rule uses: findings, capability lists, container field paths for fixes. */
import { CAPABILITIES, canonicalCapability, type DropEntry } from "../../components/model";
import {
  type ContainerView,
  containerLabel,
  isUnknown,
  isUnreadable,
  type Unreadable,
  type Val,
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
 * What one entry of a Kubernetes drop list removes, as containerd's CRI plugin applies it
 * (`WithCapabilities`, pkg/cri/opts/spec_opts.go): the entry is ALL when it equals `ALL` in any case, else it
 * becomes `"CAP_" + upper(entry)`, with no trim and no prefix check. So `CAP_ALL`, `CAP_NET_ADMIN` and ` ALL`
 * name no capability (`CAP_CAP_ALL`, `CAP_ ALL`) and remove nothing. CRI-O also accepts a `CAP_` prefix; a drop counts
 * only when every runtime honours it, so the stricter reading is the one used.
 */
export function kubernetesDropEntry(raw: string): DropEntry | undefined {
  const name = raw.toUpperCase();
  if (name === "ALL") return "ALL";
  return Object.hasOwn(CAPABILITIES, name) ? (name as DropEntry) : undefined;
}

/** How the runtime reads a capability list: Docker's (trim, any case, `CAP_` optional) or containerd's drop list. */
export type CapabilityReading = "docker" | "kubernetes-drop";

/** The reading of a workload's drop list: containerd's on Kubernetes, Docker's elsewhere. */
export function dropReading(w: WorkloadView): CapabilityReading {
  return w.origin.backend === "kubernetes" ? "kubernetes-drop" : "docker";
}

/**
 * A capability list in canonical form; `unknown` when any entry (or the list) is not known. `ineffective` holds the
 * entries the runtime reads as no capability at all (a Kubernetes drop of `CAP_ALL`), which are left out of `caps`.
 * Adds are read the Docker way on every front: it is a superset of what any runtime adds, so nothing is missed.
 */
export function capabilityList(
  l: Val<readonly Val<string>[]>,
  reading: CapabilityReading = "docker",
): {
  caps: string[];
  raw: string[];
  ineffective: string[];
  unknown: boolean;
} {
  if (isUnknown(l)) return { caps: [], raw: [], ineffective: [], unknown: true };
  const caps: string[] = [];
  const raw: string[] = [];
  const ineffective: string[] = [];
  let unknown = false;
  for (const c of l ?? []) {
    if (isUnknown(c)) {
      unknown = true;
      continue;
    }
    if (c === undefined) continue;
    raw.push(c);
    if (reading === "kubernetes-drop") {
      const k = kubernetesDropEntry(c);
      if (k === undefined) ineffective.push(c);
      else caps.push(k);
    } else caps.push(canonicalCapability(c) ?? c.trim().toUpperCase());
  }
  return { caps, raw, ineffective, unknown };
}

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
