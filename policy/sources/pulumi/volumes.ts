/**
 * `docker.Volume`s that are host folders, and the containers that mount them. A `local` volume whose driver options
 * bind a host path (`driverOpts: {type: none, o: bind, device: /var/run}`) is that folder: moby's local driver mounts
 * `device` onto the volume with `mount(device, path, "none", "bind")` when a container starts with it. So a
 * `docker.Container` that mounts the volume by name (`volumes[].volumeName`, `mounts[]` of type volume with the name as
 * `source`) is judged as binding the host folder, the way claims.ts judges a pod through its claim.
 */
import { isUnknown, type Val } from "../../workload";
import { volumeDriverExposures } from "../docker/mounts";
import type { ClaimResource } from "../kubernetes/claims";
import { field, isObj, str } from "../lenient";
import { DOCKER_CONTAINER_TYPE } from "./container";

export const DOCKER_VOLUME_TYPE = "docker:index/volume:Volume";

/** A resource as this step sees it; `dependsOn` names the URNs each input property was computed from. */
export interface VolumeResource extends ClaimResource {
  readonly urn?: string;
  readonly propertyDependencies?: Readonly<Record<string, readonly { readonly urn: string }[]>>;
}

/** A `docker.Volume` that binds a host path. */
export interface DockerHostVolume {
  /** The volume's engine name (`name`), undefined when the daemon generates it. */
  readonly name: string | undefined;
  readonly path: Val<string>;
  readonly at: string;
  readonly resource: VolumeResource;
}

/** Every `docker.Volume` whose driver options bind a host path (or whose options cannot be read). */
export function dockerHostVolumes(resources: readonly VolumeResource[]): DockerHostVolume[] {
  const out: DockerHostVolume[] = [];
  for (const r of resources) {
    if (r.type !== DOCKER_VOLUME_TYPE) continue;
    // The daemon's default driver is `local` unless its configuration says otherwise.
    // What it exposes of the host, as the local driver mounts it (docker/mounts.ts): a bind's device, an overlay's
    // folders, a kernel filesystem, a block device. The first exposure stands for the volume.
    const exposed = volumeDriverExposures(str(field(r.props, "driver")), field(r.props, "driverOpts"))[0];
    if (exposed === undefined || exposed.source === undefined) continue;
    const name = str(field(r.props, "name"));
    out.push({
      name: typeof name === "string" && name !== "" ? name : undefined,
      path: exposed.source,
      at: exposed.at === "" ? "driverOpts" : `driverOpts.${exposed.at}`,
      resource: r,
    });
  }
  return out;
}

/** The host volume a container's volume reference names: by its engine name, or by what the list was computed from. */
function volumeFor(
  ref: Val<string>,
  key: "volumes" | "mounts",
  r: VolumeResource,
  volumes: readonly DockerHostVolume[],
): DockerHostVolume | undefined {
  if (typeof ref === "string") return volumes.find((v) => v.name === ref);
  // A name not known yet (the volume's generated name): the volume the list was computed from.
  if (!isUnknown(ref)) return undefined;
  const deps = new Set((r.propertyDependencies?.[key] ?? []).map((d) => d.urn));
  return volumes.find((v) => v.resource.urn !== undefined && deps.has(v.resource.urn));
}

/**
 * The container with every mount of a host-binding `docker.Volume` rewritten as a bind of that host folder, and
 * which volumes were used. Other resources are returned as they are.
 */
export function resolveDockerVolumes(
  r: VolumeResource,
  volumes: readonly DockerHostVolume[],
): { props: unknown; used: { ref: string; volume: DockerHostVolume }[] } {
  const used: { ref: string; volume: DockerHostVolume }[] = [];
  if (r.type !== DOCKER_CONTAINER_TYPE || volumes.length === 0 || !isObj(r.props))
    return { props: r.props, used };
  const props: Record<string, unknown> = { ...r.props };
  const shown = (v: Val<string>) => (typeof v === "string" ? v : "(not known yet)");
  if (Array.isArray(props.volumes))
    props.volumes = props.volumes.map((v: unknown) => {
      const ref = str(field(v, "volumeName"));
      const hv =
        isObj(v) && field(v, "hostPath") === undefined ? volumeFor(ref, "volumes", r, volumes) : undefined;
      if (hv === undefined || !isObj(v)) return v;
      used.push({ ref: shown(ref), volume: hv });
      const { volumeName: _name, ...rest } = v;
      return { ...rest, hostPath: hv.path };
    });
  if (Array.isArray(props.mounts))
    props.mounts = props.mounts.map((m: unknown) => {
      const t = str(field(m, "type"));
      if (!isObj(m) || typeof t !== "string" || t.trim().toLowerCase() !== "volume") return m;
      const ref = str(field(m, "source"));
      const hv = volumeFor(ref, "mounts", r, volumes);
      if (hv === undefined) return m;
      used.push({ ref: shown(ref), volume: hv });
      return { ...m, type: "bind", source: hv.path };
    });
  return { props, used };
}
