/**
 * A container's capability lists as the runtime reads them, read once by the sources for every rule: the adds the
 * Docker way on every front (a superset of what any runtime adds, so nothing is missed), the drops as the runtime of
 * the workload's backend applies them (containerd's reading on Kubernetes).
 */
import { CAPABILITIES, canonicalCapability, type DropEntry } from "../../components/model";
import type { Backend, CapabilitiesView, CapabilityRead, Val } from "../workload";
import { isUnknown } from "../workload";

/** The capability view of a container of `backend`, from its add and drop lists as written. */
export function capabilitiesView(
  add: Val<readonly Val<string>[]>,
  drop: Val<readonly Val<string>[]>,
  backend: Backend,
): CapabilitiesView {
  return {
    add,
    drop,
    added: capabilityList(add, "docker"),
    dropped: capabilityList(drop, backend === "kubernetes" ? "kubernetes-drop" : "docker"),
  };
}

/**
 * What one entry of a Kubernetes drop list removes, as containerd's CRI plugin applies it
 * (`WithCapabilities`, pkg/cri/opts/spec_opts.go): the entry is ALL when it equals `ALL` in any case, else it
 * becomes `"CAP_" + upper(entry)`, with no trim and no prefix check. So `CAP_ALL`, `CAP_NET_ADMIN` and ` ALL`
 * name no capability (`CAP_CAP_ALL`, `CAP_ ALL`) and remove nothing. CRI-O also accepts a `CAP_` prefix; a drop counts
 * only when every runtime honours it, so the stricter reading is the one used.
 */
function kubernetesDropEntry(raw: string): DropEntry | undefined {
  const name = raw.toUpperCase();
  if (name === "ALL") return "ALL";
  return Object.hasOwn(CAPABILITIES, name) ? (name as DropEntry) : undefined;
}

/** How the runtime reads a capability list: Docker's (trim, any case, `CAP_` optional) or containerd's drop list. */
type CapabilityReading = "docker" | "kubernetes-drop";

/**
 * A capability list in canonical form; `unknown` when any entry (or the list) is not known. `ineffective` holds the
 * entries the runtime reads as no capability at all (a Kubernetes drop of `CAP_ALL`), which are left out of `caps`.
 * Adds are read the Docker way on every front: it is a superset of what any runtime adds, so nothing is missed.
 */
function capabilityList(l: Val<readonly Val<string>[]>, reading: CapabilityReading): CapabilityRead {
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
