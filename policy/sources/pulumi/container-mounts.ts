/**
 * What a `docker.Container` mounts, as the provider sends it and the daemon mounts it: `mounts[]` (a `local` volume's
 * driver options exposing host paths read as binds of them), `uploads[]` (a host file copied in), `volumes[]` (a
 * `volumeName` that is a path is a bind; `fromContainer` is every mount of another container), the scanner's
 * `secretMounts` and `tmpfs`.
 */
import { isUnknown, isUnreadable, type MountView, Unreadable } from "../../workload";
import { type LocalVolumeExposure, tmpfsMounts, volumeDriverExposures } from "../docker/mounts";
import { bool, field, items, join, list, str, type TaintCheck } from "../lenient";

/** Every mount of the container, and whether a list of them is not known yet. */
export function dockerMounts(props: unknown, tainted: TaintCheck): { mounts: MountView[]; unknown: boolean } {
  const mounts: MountView[] = [];
  let unknown = false;
  const ms = list(field(props, "mounts"));
  if (isUnknown(ms)) unknown = true;
  (isUnknown(ms) ? [] : (ms ?? [])).forEach((m, i) => {
    const path = join("mounts", i);
    const t = str(field(m, "type"));
    const type = typeof t === "string" ? t.trim().toLowerCase() : t;
    // A named pipe (`npipe`) is a host endpoint, like a bind of a socket.
    const kind =
      type === "bind" || type === "npipe"
        ? "bind"
        : type === "tmpfs"
          ? "tmpfs"
          : type === "volume"
            ? "volume"
            : "other";
    const view: MountView = {
      type: isUnknown(type) ? "bind" : kind, // an unknown type may be a bind: judge its source
      source: str(field(m, "source")),
      target: str(field(m, "target")),
      readOnly: bool(field(m, "readOnly")),
      propagation: str(field(field(m, "bindOptions"), "propagation")),
      tainted: tainted(path),
      path,
    };
    // The provider sends `volumeOptions.driverName`/`driverOptions` as the mount's DriverConfig: a `local` volume
    // whose options bind, overlay or mount host paths exposes them like a bind.
    const vo = field(m, "volumeOptions");
    const host: LocalVolumeExposure[] =
      kind !== "volume"
        ? []
        : isUnknown(vo) || isUnreadable(vo)
          ? [{ source: vo, at: "", readOnly: false }]
          : volumeDriverExposures(str(field(vo, "driverName")), field(vo, "driverOptions"));
    if (host.length === 0) mounts.push(view);
    for (const h of host)
      mounts.push({
        ...view,
        type: "bind",
        source: h.source,
        readOnly: h.readOnly || view.readOnly,
        path: `${path}.volumeOptions${h.at === "" ? "" : `.driverOptions.${h.at}`}`,
      });
  });
  // `uploads[].source`: the provider copies that file of the deployer's machine into the container before it starts;
  // the container holds the host's file as a read-only bind would show it.
  items(field(props, "uploads")).forEach((u, i) => {
    const source = str(field(u, "source"));
    if (source === undefined) return;
    mounts.push({
      type: "bind",
      source,
      target: str(field(u, "file")),
      readOnly: true,
      propagation: undefined,
      tainted: tainted(join(join("uploads", i), "source")),
      path: join(join("uploads", i), "source"),
    });
  });
  const vs = list(field(props, "volumes"));
  if (isUnknown(vs)) unknown = true;
  (isUnknown(vs) ? [] : (vs ?? [])).forEach((v, i) => {
    const path = join("volumes", i);
    const hostPath = str(field(v, "hostPath"));
    const fromContainer = str(field(v, "fromContainer"));
    const named = str(field(v, "volumeName"));
    // The provider sends `<volumeName>:<containerPath>` as a bind string, and the daemon reads a source that is a
    // path (absolute, `~`, a Windows drive) as a host folder, not a volume's name.
    const nameIsPath = typeof named === "string" && /^(?:\/|~|[A-Za-z]:[\\/]|\\\\)/.test(named.trim());
    const volumeName = nameIsPath ? undefined : named;
    const type =
      hostPath !== undefined || nameIsPath
        ? "bind"
        : volumeName !== undefined
          ? "volume"
          : fromContainer !== undefined
            ? "other"
            : "volume";
    mounts.push({
      // `volumes_from`: every mount of another container, which the policy cannot see: judged as unreadable.
      type: fromContainer !== undefined && hostPath === undefined ? "bind" : type,
      source:
        fromContainer !== undefined && hostPath === undefined
          ? new Unreadable(
              `it is every mount of container ${JSON.stringify(String(fromContainer))}, which the policy cannot see`,
            )
          : nameIsPath && hostPath === undefined
            ? named
            : hostPath,
      target: str(field(v, "containerPath")),
      readOnly: bool(field(v, "readOnly")),
      propagation: undefined,
      tainted: tainted(path),
      path,
    });
  });
  // Not a @pulumi/docker input: the scanner's Compose reader writes a service's secrets here (compose/project.ts).
  items(field(props, "secretMounts")).forEach((sm, i) => {
    const name = str(field(sm, "name"));
    mounts.push({
      type: "secret",
      source: undefined,
      target: str(field(sm, "target")),
      readOnly: true,
      propagation: undefined,
      ...(typeof name === "string" ? { volume: name } : {}),
      tainted: false,
      path: join("secretMounts", i),
    });
  });
  mounts.push(...tmpfsMounts(field(props, "tmpfs"), "tmpfs"));
  return { mounts, unknown };
}
