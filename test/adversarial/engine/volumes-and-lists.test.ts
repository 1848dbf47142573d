/**
 * Class 7: Engine API create bodies and docker.Container mounts as moby applies them (docker v28.5.2 and
 * v20.10.24, the toolkit's docker.io):
 * - `HostConfig.VolumeDriver` is for Binds only (`handleVolumeDriverBC`, `ParseMountSpec`): a `Mounts` volume with no
 *   `DriverConfig.Name` is a `local` volume, whose options may bind a host path;
 * - an empty list `[]` is a fresh slice in encoding/json (decode.go `array()`: `MakeSlice(0, 0)`), so a later list
 *   reuses nothing written before it;
 * - a `local` volume mounts `device` with `type` and `o` as the kernel reads them (volume/local `mount()`): `o=bind`
 *   binds a host folder, `type: overlay` stacks host folders (`lowerdir`, `upperdir`, `workdir`), a kernel
 *   filesystem (`proc`, `sysfs`) shows the host's own, and any other type mounts a host block device however its
 *   path is spelled (`//dev/sda1`, `/./dev/sda1`, `/proc/1/root/dev/sda1`);
 * - the provider maps docker.Container `mounts[].volumeOptions.driverName/driverOptions` to the same DriverConfig,
 *   and Compose creates a named volume with its `driver_opts`;
 * - `IpcMode: shareable` lets other containers join the IPC namespace, in every format.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { engineBody } from "../../../policy/sources/docker/body";
import { fromYaml } from "../../../policy/sources/docker/json-node";
import { HOST_CONFIG, type Shape } from "../../../policy/sources/docker/schema";
import { runOracle } from "../../helpers/goOracle";
import { DOCKER, safeContainer } from "../../policy/fixtures";
import { validate, violated } from "../../policy/harness";
import { compose, engineBody as safeBody } from "../fixtures";
import { assertVerdict, blocked, cases, passes, scanFiles } from "../harness";

const host = (h: Record<string, unknown>) => ({ "create.json": safeBody({}, h) });
const localVolume = (options: Record<string, string>, name?: string) =>
  host({
    Mounts: [
      {
        Type: "volume",
        Source: "v",
        Target: "/mnt",
        VolumeOptions: { DriverConfig: { ...(name === undefined ? {} : { Name: name }), Options: options } },
      },
    ],
  });
const SOCKET = blocked("sandbox-disallow-runtime-socket");
const SENSITIVE = blocked("sandbox-disallow-sensitive-host-mounts");
const BIND_RUN = { type: "none", o: "bind", device: "/var/run" };

/** The safe HostConfig's fields as JSON text, without braces, to splice repeated keys after. */
const SAFE_HC = safeBody()
  .replace(/^[\s\S]*"HostConfig": \{/, "")
  .replace(/\}\s*\}\s*$/, "")
  .trim();
const bodyText = (extra: string) =>
  `{"Image": "busybox:1.36", "Cmd": ["sh", "-c", "id"], "User": "1000:1000", "HostConfig": {${SAFE_HC}, ${extra}}}\n`;

cases("class 7: VolumeDriver and Mounts", [
  {
    name: "VolumeDriver: convoy does not apply to a Mounts volume (local, o=bind of /var/run)",
    files: host({
      VolumeDriver: "convoy",
      Mounts: [
        {
          Type: "volume",
          Source: "x",
          Target: "/mnt",
          VolumeOptions: { DriverConfig: { Options: BIND_RUN } },
        },
      ],
    }),
    plain: host({ Binds: ["/var/run:/mnt"] }),
    want: SOCKET,
  },
  {
    name: "a volume that names another driver in DriverConfig is that plugin's: it mounts what its options say, unreadable",
    files: localVolume(BIND_RUN, "convoy"),
    want: { ...SOCKET, says: 'volume driver "convoy" is a plugin' },
  },
]);

cases("class 7: an empty list is a fresh slice", [
  {
    name: 'Mounts [driver convoy], then "Mounts": [], then a local bind: nothing of the first is reused',
    files: {
      "create.json": bodyText(
        '"Mounts": [{"Type":"volume","Source":"v","Target":"/m","VolumeOptions":{"DriverConfig":{"Name":"convoy"}}}], "Mounts": [], ' +
          '"Mounts": [{"Type":"volume","Source":"v2","Target":"/m","VolumeOptions":{"DriverConfig":{"Options":{"type":"none","o":"bind","device":"/var/run"}}}}]',
      ),
    },
    plain: localVolume(BIND_RUN),
    want: SOCKET,
  },
  {
    name: "without the empty list the second list decodes into the first one's element (driver convoy stays: a plugin)",
    files: {
      "create.json": bodyText(
        '"Mounts": [{"Type":"volume","Source":"v","Target":"/m","VolumeOptions":{"DriverConfig":{"Name":"convoy"}}}], ' +
          '"Mounts": [{"Type":"volume","Source":"v2","Target":"/m","VolumeOptions":{"DriverConfig":{"Options":{"type":"none","o":"bind","device":"/var/run"}}}}]',
      ),
    },
    want: { ...SOCKET, says: 'volume driver "convoy" is a plugin' },
  },
]);

/** A value of shape `s` with every field set to a non-zero value. */
function filled(s: Shape): unknown {
  switch (s.k) {
    case "string":
      return "x";
    case "bool":
      return true;
    case "int":
    case "float":
      return 1;
    case "ptr":
      return filled(s.to);
    case "struct":
      return Object.fromEntries(Object.entries(s.fields).map(([k, f]) => [k, filled(f)]));
    case "map":
      return { a: filled(s.of) };
    case "slice":
    case "array":
      return [filled(s.of)];
    case "strslice":
      return ["x"];
  }
}

function allZero(v: unknown): boolean {
  if (v === null || v === false || v === 0 || v === "") return true;
  if (Array.isArray(v)) return v.every(allZero);
  if (typeof v === "object") return Object.values(v as object).every(allZero);
  return false;
}

describe("class 7: every list of structs starts afresh after []", () => {
  const fields = (HOST_CONFIG as { fields: Record<string, Shape> }).fields;
  const lists = Object.entries(fields).filter(
    ([, f]) => f.k === "slice" && (f.of.k === "struct" || (f.of.k === "ptr" && f.of.to.k === "struct")),
  );
  it("matches the daemon's decoder: the element after an empty list holds nothing of the one before", () => {
    expect(lists.map(([k]) => k)).toContain("Mounts");
    const bodies = lists.map(
      ([k, f]) => `{"HostConfig": {"${k}": ${JSON.stringify(filled(f))}, "${k}": [], "${k}": [{}]}}`,
    );
    const go = JSON.parse(runOracle("engine-json", JSON.stringify(bodies))) as {
      body: { HostConfig: Record<string, unknown[]> };
    }[];
    lists.forEach(([k], i) => {
      const element = go[i]?.body.HostConfig[k]?.[0];
      expect({ k, goZero: allZero(element) }).toEqual({ k, goZero: true });
      const ours = engineBody(fromYaml(parseDocument(bodies[i] ?? "", { uniqueKeys: false }).contents));
      expect({ k, ours }).toEqual({ k, ours: { HostConfig: { [k]: [{}] } } });
    });
  });
});

/** Spellings the kernel resolves to /dev/sda1 when the daemon mounts the device. */
const SDA1 = ["//dev/sda1", "/./dev/sda1", "/var/../dev/sda1", "/dev//sda1", "///dev/./sda1", "/dev/sda1/"];

describe("class 7: local volumes that mount a host device (generated)", () => {
  it("every spelling of /dev/sda1 is the host device, as the plain one", async () => {
    assertVerdict(await scanFiles(localVolume({ type: "ext4", device: "/dev/sda1" })), SENSITIVE);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...SDA1),
        fc.constantFrom("ext4", "xfs", "btrfs", "vfat"),
        fc.constantFrom(undefined, "local"),
        async (device, type, name) => {
          assertVerdict(await scanFiles(localVolume({ type, device }, name)), SENSITIVE);
        },
      ),
      { numRuns: 20 },
    );
  });
  it("a device outside /dev (a link, /proc/1/root/dev/..., a dataset) fails closed", async () => {
    for (const device of ["/proc/1/root/dev/sda1", "/srv/disk-link", "tank/data"]) {
      const r = await scanFiles(localVolume({ type: device === "tank/data" ? "zfs" : "ext4", device }));
      assertVerdict(r, blocked());
      expect(JSON.stringify(r.report.findings)).toContain("VolumeOptions.DriverConfig.Options.device");
    }
  });
});

cases("class 7: local volumes that show host folders without o=bind", [
  {
    name: "overlay with upperdir=/etc (writes land in the host's /etc)",
    files: localVolume({
      type: "overlay",
      device: "overlay",
      o: "lowerdir=/tmp/l,upperdir=/etc,workdir=/tmp/w",
    }),
    plain: host({ Binds: ["/etc:/mnt"] }),
    want: SENSITIVE,
  },
  {
    name: "overlay with lowerdir=/srv:/ (the host root, read)",
    files: localVolume({ type: "overlay", device: "overlay", o: "lowerdir=/srv:/" }),
    plain: host({ Binds: ["/:/mnt:ro"] }),
    want: SENSITIVE,
  },
  {
    name: "overlay with lowerdir=/etc:/var/run (the socket folder)",
    files: localVolume({
      type: "overlay",
      device: "overlay",
      o: "lowerdir=/etc:/var/run,upperdir=/tmp/u,workdir=/tmp/w",
    }),
    plain: host({ Binds: ["/var/run:/mnt:ro"] }),
    want: SOCKET,
  },
  {
    name: "type proc (the host's /proc, mounted by the daemon in the host's namespaces)",
    files: localVolume({ type: "proc", device: "x" }),
    plain: host({ Binds: ["/proc:/mnt:ro"] }),
    want: SENSITIVE,
  },
  {
    name: "type sysfs",
    files: localVolume({ type: "sysfs", device: "sysfs" }, "local"),
    plain: host({ Binds: ["/sys:/mnt:ro"] }),
    want: SENSITIVE,
  },
  {
    name: "a tmpfs volume (memory only) passes",
    files: localVolume({ type: "tmpfs", device: "tmpfs", o: "size=64m" }),
    want: passes,
  },
  {
    name: "an nfs volume (a remote share the host mounts over its own network, outside the egress walls)",
    files: localVolume({ type: "nfs", device: ":/export", o: "addr=10.0.0.1,ro" }),
    want: SENSITIVE,
  },
  {
    name: "a cifs volume (an SMB share, the same route off the machine)",
    files: localVolume({ type: "cifs", device: "//10.0.0.1/share", o: "username=u" }),
    want: SENSITIVE,
  },
  {
    name: "a local volume with no options passes",
    files: host({ Mounts: [{ Type: "volume", Source: "v", Target: "/mnt" }] }),
    want: passes,
  },
]);

cases("class 7: Compose named volumes, judged as the daemon mounts them", [
  {
    name: "driver_opts type ext4, device //dev/sda1",
    files: {
      "compose.yaml": compose(
        "app",
        "volumes: [disk:/d]",
        "volumes:\n  disk:\n    driver_opts: {type: ext4, device: //dev/sda1}",
      ),
    },
    plain: localVolume({ type: "ext4", device: "/dev/sda1" }),
    want: SENSITIVE,
  },
  {
    name: "driver_opts overlay upperdir=/etc",
    files: {
      "compose.yaml": compose(
        "app",
        "volumes: [ov:/d]",
        'volumes:\n  ov:\n    driver: local\n    driver_opts: {type: overlay, device: overlay, o: "lowerdir=/tmp/l,upperdir=/etc,workdir=/tmp/w"}',
      ),
    },
    want: SENSITIVE,
  },
  {
    name: "driver_opts tmpfs passes",
    files: {
      "compose.yaml": compose(
        "app",
        "volumes: [t:/d]",
        "volumes:\n  t:\n    driver_opts: {type: tmpfs, device: tmpfs}",
      ),
    },
    want: passes,
  },
]);

describe("class 7: the pack reads docker.Container mounts[].volumeOptions", () => {
  const withMount = (volumeOptions: Record<string, unknown>) => ({
    ...safeContainer(),
    mounts: [
      ...(safeContainer().mounts as object[]),
      { type: "volume", source: "v", target: "/mnt", volumeOptions },
    ],
  });
  it("a local volume whose driverOptions bind /var/run is the socket folder, driver named or not", () => {
    for (const vo of [{ driverOptions: BIND_RUN }, { driverName: "local", driverOptions: BIND_RUN }])
      expect(violated(validate(DOCKER, withMount(vo)))).toContain("sandbox-disallow-runtime-socket");
  });
  it("an overlay over /etc and a device spelled //dev/sda1 are host paths", () => {
    const overlay = { type: "overlay", device: "overlay", o: "lowerdir=/tmp/l,upperdir=/etc,workdir=/tmp/w" };
    expect(violated(validate(DOCKER, withMount({ driverOptions: overlay })))).toContain(
      "sandbox-disallow-sensitive-host-mounts",
    );
    const disk = { type: "ext4", device: "//dev/sda1" };
    expect(violated(validate(DOCKER, withMount({ driverOptions: disk })))).toContain(
      "sandbox-disallow-devices",
    );
  });
  it("a plugin driver's options cannot be read (refused); a local tmpfs volume passes", () => {
    expect(
      violated(validate(DOCKER, withMount({ driverName: "convoy", driverOptions: BIND_RUN }))),
    ).toContain("sandbox-disallow-runtime-socket");
    expect(
      violated(validate(DOCKER, withMount({ driverOptions: { type: "tmpfs", device: "tmpfs" } }))),
    ).toEqual([]);
  });
});

cases("class 7: IpcMode shareable in every format", [
  {
    name: 'Engine body IpcMode: "shareable"',
    files: host({ IpcMode: "shareable" }),
    plain: { "compose.yaml": compose("app", "ipc: shareable") },
    want: blocked("sandbox-disallow-host-namespaces"),
  },
  {
    name: 'Engine body IpcMode: "private" passes',
    files: host({ IpcMode: "private" }),
    want: passes,
  },
]);

describe("class 7: IpcMode shareable in the pack", () => {
  it("is a joined namespace, as in scan", () => {
    expect(violated(validate(DOCKER, { ...safeContainer(), ipcMode: "shareable" }))).toContain(
      "sandbox-disallow-host-namespaces",
    );
  });
});
