/**
 * PersistentVolumes that are host folders (`hostPath`, `local.path`), and the claims bound to them. A pod that mounts
 * such a claim mounts that host folder, so its volumes are rewritten as the host path the kubelet will mount
 * (k8s.io/api core/v1: a claim binds to the volume its `spec.volumeName` names, or that names it in `claimRef`).
 */
import { isUnknown, type Val } from "../../workload";
import { at, field, isObj, str } from "../lenient";
import { parseKubeType } from "./sites";

/** A resource as the resolution step sees it: a scan document or a stack resource. */
export interface ClaimResource {
  readonly type: string;
  readonly name: string;
  readonly props: unknown;
}

/** A PersistentVolume backed by a host folder. */
export interface HostVolume {
  readonly name: string;
  readonly path: Val<string>;
  /** Where the host path is written in the PersistentVolume (`spec.hostPath.path`, `spec.local.path`). */
  readonly at: string;
  readonly claim?: { readonly namespace?: string; readonly name: string };
  /** `spec.storageClassName`; "" when the volume has none. */
  readonly storageClass: string;
  readonly resource: ClaimResource;
}

function kindOf(r: ClaimResource): string | undefined {
  const t = parseKubeType(r.type);
  return t?.group === "core" ? t.kind : undefined;
}

function text(v: unknown): string | undefined {
  const s = str(v);
  return typeof s === "string" && s !== "" ? s : undefined;
}

/** The object's own name: `metadata.name`, else the resource's name. */
function objectName(r: ClaimResource): string {
  return text(at(r.props, "metadata.name")) ?? r.name;
}

/** Every PersistentVolume that is a host folder. */
export function hostVolumes(resources: readonly ClaimResource[]): HostVolume[] {
  const out: HostVolume[] = [];
  for (const r of resources) {
    if (kindOf(r) !== "PersistentVolume") continue;
    const spec = field(r.props, "spec");
    const where =
      field(spec, "hostPath") !== undefined
        ? "hostPath"
        : field(spec, "local") !== undefined
          ? "local"
          : undefined;
    if (where === undefined) continue;
    const src = field(spec, where);
    const claimName = text(at(spec, "claimRef.name"));
    const ns = text(at(spec, "claimRef.namespace"));
    out.push({
      name: objectName(r),
      path: isUnknown(src) ? src : str(field(src, "path")),
      at: `spec.${where}.path`,
      storageClass: text(field(spec, "storageClassName")) ?? "",
      ...(claimName === undefined
        ? {}
        : { claim: { name: claimName, ...(ns === undefined ? {} : { namespace: ns }) } }),
      resource: r,
    });
  }
  return out;
}

/** Namespaces match when equal or when either side does not say (the context's namespace). */
function sameNamespace(a: string | undefined, b: string | undefined): boolean {
  return a === undefined || b === undefined || a === b;
}

/** Finds the host volume a claim is bound to. */
export function claimResolver(resources: readonly ClaimResource[]) {
  const volumes = hostVolumes(resources);
  const claims = resources
    .filter((r) => kindOf(r) === "PersistentVolumeClaim")
    .map((r) => ({
      name: objectName(r),
      namespace: text(at(r.props, "metadata.namespace")),
      volumeName: text(at(r.props, "spec.volumeName")),
      // Unset: the default class is filled in at admission, which a manifest cannot see.
      storageClass: str(at(r.props, "spec.storageClassName")),
    }));
  return (namespace: string | undefined, claim: string): HostVolume | undefined => {
    const byRef = volumes.find(
      (v) => v.claim !== undefined && v.claim.name === claim && sameNamespace(v.claim.namespace, namespace),
    );
    if (byRef !== undefined) return byRef;
    const pvc = claims.find((c) => c.name === claim && sameNamespace(c.namespace, namespace));
    if (pvc === undefined) return undefined;
    if (pvc.volumeName !== undefined) return volumes.find((v) => v.name === pvc.volumeName);
    // Dynamic binding: the binder may give the claim any available volume of its class (a volume no other claim
    // reserved). Which one it picks cannot be known here, so any host volume it may pick counts.
    return volumes.find(
      (v) =>
        v.claim === undefined &&
        (typeof pvc.storageClass !== "string" || pvc.storageClass === v.storageClass),
    );
  };
}

/**
 * The resource with every claim volume bound to a host folder rewritten as that `hostPath` (anywhere a `volumes`
 * list holds it, so custom resources' pods are covered too), and which claims were rewritten.
 */
export function resolveClaims(
  r: ClaimResource,
  resolve: ReturnType<typeof claimResolver>,
): { props: unknown; used: { claim: string; volume: HostVolume }[] } {
  const namespace = text(at(r.props, "metadata.namespace"));
  const used: { claim: string; volume: HostVolume }[] = [];
  const walk = (v: unknown, inVolumes: boolean): unknown => {
    if (Array.isArray(v)) return v.map((x) => walk(x, inVolumes));
    if (!isObj(v)) return v;
    if (inVolumes) {
      const claim = text(at(v, "persistentVolumeClaim.claimName"));
      const hv = claim === undefined ? undefined : resolve(namespace, claim);
      if (claim !== undefined && hv !== undefined) {
        used.push({ claim, volume: hv });
        const { persistentVolumeClaim: _claim, ...rest } = v;
        return { ...rest, hostPath: { path: hv.path } };
      }
    }
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = walk(x, k === "volumes");
    return out;
  };
  return { props: walk(r.props, false), used };
}
