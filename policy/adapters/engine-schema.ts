/**
 * The Go types the Docker daemon decodes a `POST /containers/create` body into (docker v28.5.2,
 * `api/types/container.CreateRequest` and what it holds), as much as the decoder needs: each field's JSON name and
 * kind. Embedded structs (`*Config` in CreateRequest, `Resources` in HostConfig) are flattened, as Go promotes their
 * fields. Map keys are data (labels, sysctls, ports) and keep their case; struct field names are matched the way
 * encoding/json matches them (engine-json.ts).
 */

/** A Go type, as encoding/json sees it. */
export type Shape =
  | { readonly k: "string" }
  | { readonly k: "bool" }
  | { readonly k: "int"; readonly bits: 8 | 16 | 32 | 64; readonly unsigned: boolean }
  | { readonly k: "float" }
  | { readonly k: "ptr"; readonly to: Shape }
  | { readonly k: "struct"; readonly fields: Readonly<Record<string, Shape>> }
  | { readonly k: "map"; readonly of: Shape }
  | { readonly k: "slice"; readonly of: Shape }
  /** A fixed-length Go array (`ConsoleSize [2]uint`). */
  | { readonly k: "array"; readonly len: number; readonly of: Shape }
  /** `strslice.StrSlice`: a list of texts, or one text read as a one-element list (its own UnmarshalJSON). */
  | { readonly k: "strslice" };

const string: Shape = { k: "string" };
const bool: Shape = { k: "bool" };
const int: Shape = { k: "int", bits: 64, unsigned: false };
const int64 = int;
const uint16: Shape = { k: "int", bits: 16, unsigned: true };
const uint32: Shape = { k: "int", bits: 32, unsigned: true };
const uint64: Shape = { k: "int", bits: 64, unsigned: true };
const uint: Shape = uint64;
const strslice: Shape = { k: "strslice" };
const ptr = (to: Shape): Shape => ({ k: "ptr", to });
const struct = (fields: Record<string, Shape>): Shape => ({ k: "struct", fields });
const map = (of: Shape): Shape => ({ k: "map", of });
const slice = (of: Shape): Shape => ({ k: "slice", of });
const strings = slice(string);
const stringMap = map(string);
const empty = struct({});

const weightDevice = struct({ Path: string, Weight: uint16 });
const throttleDevice = struct({ Path: string, Rate: uint64 });

/** `container.Resources`, embedded in HostConfig. */
const resources: Record<string, Shape> = {
  CpuShares: int64,
  Memory: int64,
  NanoCpus: int64,
  CgroupParent: string,
  BlkioWeight: uint16,
  BlkioWeightDevice: slice(ptr(weightDevice)),
  BlkioDeviceReadBps: slice(ptr(throttleDevice)),
  BlkioDeviceWriteBps: slice(ptr(throttleDevice)),
  BlkioDeviceReadIOps: slice(ptr(throttleDevice)),
  BlkioDeviceWriteIOps: slice(ptr(throttleDevice)),
  CpuPeriod: int64,
  CpuQuota: int64,
  CpuRealtimePeriod: int64,
  CpuRealtimeRuntime: int64,
  CpusetCpus: string,
  CpusetMems: string,
  Devices: slice(struct({ PathOnHost: string, PathInContainer: string, CgroupPermissions: string })),
  DeviceCgroupRules: strings,
  DeviceRequests: slice(
    struct({
      Driver: string,
      Count: int,
      DeviceIDs: strings,
      Capabilities: slice(strings),
      Options: stringMap,
    }),
  ),
  KernelMemory: int64,
  KernelMemoryTCP: int64,
  MemoryReservation: int64,
  MemorySwap: int64,
  MemorySwappiness: ptr(int64),
  OomKillDisable: ptr(bool),
  PidsLimit: ptr(int64),
  Ulimits: slice(ptr(struct({ Name: string, Hard: int64, Soft: int64 }))),
  CpuCount: int64,
  CpuPercent: int64,
  IOMaximumIOps: uint64,
  IOMaximumBandwidth: uint64,
};

/** `mount.Mount`. */
const mount = struct({
  Type: string,
  Source: string,
  Target: string,
  ReadOnly: bool,
  Consistency: string,
  BindOptions: ptr(
    struct({
      Propagation: string,
      NonRecursive: bool,
      CreateMountpoint: bool,
      ReadOnlyNonRecursive: bool,
      ReadOnlyForceRecursive: bool,
    }),
  ),
  VolumeOptions: ptr(
    struct({
      NoCopy: bool,
      Labels: stringMap,
      Subpath: string,
      DriverConfig: ptr(struct({ Name: string, Options: stringMap })),
    }),
  ),
  ImageOptions: ptr(struct({ Subpath: string })),
  TmpfsOptions: ptr(struct({ SizeBytes: int64, Mode: uint32, Options: slice(strings) })),
  ClusterOptions: ptr(empty),
});

/** `container.HostConfig` with `Resources` promoted. */
export const HOST_CONFIG: Shape = struct({
  Binds: strings,
  ContainerIDFile: string,
  LogConfig: struct({ Type: string, Config: stringMap }),
  NetworkMode: string,
  PortBindings: map(slice(struct({ HostIp: string, HostPort: string }))),
  RestartPolicy: struct({ Name: string, MaximumRetryCount: int }),
  AutoRemove: bool,
  VolumeDriver: string,
  VolumesFrom: strings,
  ConsoleSize: { k: "array", len: 2, of: uint },
  Annotations: stringMap,
  CapAdd: strslice,
  CapDrop: strslice,
  CgroupnsMode: string,
  Dns: strings,
  DnsOptions: strings,
  DnsSearch: strings,
  ExtraHosts: strings,
  GroupAdd: strings,
  IpcMode: string,
  Cgroup: string,
  Links: strings,
  OomScoreAdj: int,
  PidMode: string,
  Privileged: bool,
  PublishAllPorts: bool,
  ReadonlyRootfs: bool,
  SecurityOpt: strings,
  StorageOpt: stringMap,
  Tmpfs: stringMap,
  UTSMode: string,
  UsernsMode: string,
  ShmSize: int64,
  Sysctls: stringMap,
  Runtime: string,
  Isolation: string,
  ...resources,
  Mounts: slice(mount),
  MaskedPaths: strings,
  ReadonlyPaths: strings,
  Init: ptr(bool),
});

const endpointSettings = struct({
  IPAMConfig: ptr(struct({ IPv4Address: string, IPv6Address: string, LinkLocalIPs: strings })),
  Links: strings,
  Aliases: strings,
  MacAddress: string,
  DriverOpts: stringMap,
  GwPriority: int,
  NetworkID: string,
  EndpointID: string,
  Gateway: string,
  IPAddress: string,
  IPPrefixLen: int,
  IPv6Gateway: string,
  GlobalIPv6Address: string,
  GlobalIPv6PrefixLen: int,
  DNSNames: strings,
});

/** `container.CreateRequest`: `*Config` promoted, plus HostConfig and NetworkingConfig. */
export const CREATE_REQUEST: Shape = struct({
  Hostname: string,
  Domainname: string,
  User: string,
  AttachStdin: bool,
  AttachStdout: bool,
  AttachStderr: bool,
  ExposedPorts: map(empty),
  Tty: bool,
  OpenStdin: bool,
  StdinOnce: bool,
  Env: strings,
  Cmd: strslice,
  Healthcheck: ptr(
    struct({
      Test: strings,
      Interval: int64,
      Timeout: int64,
      StartPeriod: int64,
      StartInterval: int64,
      Retries: int,
    }),
  ),
  ArgsEscaped: bool,
  Image: string,
  Volumes: map(empty),
  WorkingDir: string,
  Entrypoint: strslice,
  NetworkDisabled: bool,
  MacAddress: string,
  OnBuild: strings,
  Labels: stringMap,
  StopSignal: string,
  StopTimeout: ptr(int),
  Shell: strslice,
  HostConfig: ptr(HOST_CONFIG),
  NetworkingConfig: ptr(struct({ EndpointsConfig: map(ptr(endpointSettings)) })),
});

/**
 * The body as docker v20.10 ... v26 decode it (runconfig `ContainerConfigWrapper`: `*Config`, `HostConfig`, `Cpuset`,
 * `NetworkingConfig` and an embedded `*HostConfig`, whose fields are promoted to the top level). v27 and later decode
 * {@link CREATE_REQUEST}, where the top-level HostConfig fields are unknown and ignored.
 */
export const CONFIG_WRAPPER: Shape = struct({
  ...(CREATE_REQUEST as { fields: Record<string, Shape> }).fields,
  ...(HOST_CONFIG as { fields: Record<string, Shape> }).fields,
  Cpuset: string,
});

/** The HostConfig fields the wrapper promotes to the top level. */
export const TOP_LEVEL_HOST_FIELDS: readonly string[] = Object.keys(
  (HOST_CONFIG as { fields: Record<string, Shape> }).fields,
);
