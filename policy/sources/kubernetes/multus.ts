/**
 * Secondary networks (Multus CNI v4): the pod annotation `k8s.v1.cni.cncf.io/networks` gives the pod an interface
 * on each NetworkAttachmentDefinition it names, and `v1.multus-cni.io/default-network` replaces its default
 * network. The annotation is read as Multus reads it (multus-cni v4.2 pkg/k8sclient/k8sclient.go
 * parsePodNetworkAnnotation): a JSON list of selection elements when the text holds `[`, `{` or `"` (Go's decoder:
 * field names in any case), else a comma list of `[<namespace>/]<name>[@<interface>]`, each item trimmed.
 *
 * Every attachment is exposure: the interface is outside the pod network, its NetworkPolicies (which do not apply to
 * secondary interfaces) and the proxy, and a macvlan, ipvlan, host-device, SR-IOV, bridge or vlan attachment gives the
 * pod an address on the host's own network, as Docker's macvlan does. No CNI plugin type is known to keep a task
 * walled (even an overlay's interface bypasses the egress NetworkPolicy and the proxy), so the attachment is refused
 * whatever its NetworkAttachmentDefinition's `spec.config` says, with no definition in the input too; a definition
 * by itself attaches nothing and passes.
 */
import { isUnknown, isUnreadable, UNKNOWN } from "../../workload";
import { field, isObj, str } from "../lenient";

export const MULTUS_NETWORKS = "k8s.v1.cni.cncf.io/networks";
export const MULTUS_DEFAULT_NETWORK = "v1.multus-cni.io/default-network";

/** One attachment a pod asks for, or why the annotation cannot be read. */
export interface SecondaryNetwork {
  /** `namespace/name` as written (namespace absent: the pod's own), or a description of what cannot be read. */
  readonly name: string;
  /** Which annotation: a secondary network, or a replaced default network. */
  readonly kind: "secondary" | "default";
  /** Where it is written. */
  readonly path: string;
  /** True for a preview unknown (a note); false for an attachment or an unreadable value (refused). */
  readonly unknown: boolean;
}

/** A key of a JSON object, matched as Go's encoding/json matches field names: any case. */
function goField(o: Record<string, unknown>, key: string): unknown {
  if (Object.hasOwn(o, key)) return o[key];
  const k = Object.keys(o).find((x) => x.toLowerCase() === key.toLowerCase());
  return k === undefined ? undefined : o[k];
}

/** The attachments of a `k8s.v1.cni.cncf.io/networks` value, as Multus parses it. */
export function parseNetworks(text: string): string[] | { readonly reason: string } {
  if (text === "") return [];
  if (/[[{"]/.test(text)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return { reason: "the JSON list does not parse" };
    }
    if (!Array.isArray(parsed)) return { reason: "the JSON value is not a list" };
    return parsed.map((e) => {
      if (!isObj(e)) return "an entry that is not an object";
      const name = goField(e, "name");
      const ns = goField(e, "namespace");
      const shown = typeof name === "string" ? name : JSON.stringify(name);
      return typeof ns === "string" && ns !== "" ? `${ns}/${shown}` : shown;
    });
  }
  return text.split(",").map((item) => {
    const t = item.trim();
    const at = t.indexOf("@");
    return (at < 0 ? t : t.slice(0, at)).trim() || "(empty)";
  });
}

/** The secondary and default networks the pod's annotations ask for; `metaPath` is where its metadata is. */
export function secondaryNetworks(annotations: unknown, metaPath: string | undefined): SecondaryNetwork[] {
  const out: SecondaryNetwork[] = [];
  const base = `${metaPath ?? "metadata"}.annotations`;
  const read = (key: string, kind: SecondaryNetwork["kind"]) => {
    const path = `${base}["${key}"]`;
    const raw = field(annotations, key);
    if (raw === undefined) return;
    const v = str(raw);
    if (v === UNKNOWN) out.push({ name: "a value not known yet", kind, path, unknown: true });
    else if (isUnreadable(v))
      out.push({ name: `a value that cannot be read (${v.reason})`, kind, path, unknown: false });
    else if (typeof v === "string" && kind === "default")
      out.push({ name: v.trim() || "(empty)", kind, path, unknown: false });
    else if (typeof v === "string") {
      const nets = parseNetworks(v);
      if ("reason" in nets)
        out.push({ name: `a value that cannot be read (${nets.reason})`, kind, path, unknown: false });
      else for (const n of nets) out.push({ name: n, kind, path, unknown: false });
    }
  };
  if (isUnknown(annotations) && annotations === UNKNOWN) return out;
  read(MULTUS_NETWORKS, "secondary");
  read(MULTUS_DEFAULT_NETWORK, "default");
  return out;
}
