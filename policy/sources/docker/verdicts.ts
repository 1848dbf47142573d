/**
 * The verdict of every field of a container create body (`POST /containers/create`) at the Engine API version the
 * project claims (schema.generated.ts). The conformance test walks the generated table: a field with no verdict, a
 * verdict for a field the API does not have, a judged verdict whose rules do not refuse its hostile value, all fail
 * it. Bumping the API version lists the new fields here to classify.
 */
import { BROKER_IMAGE } from "../../../components/model/broker-spec";
import { RULES } from "../rule-ids";
import { inert, judged, refused, type VerdictTable } from "../verdict";

const R = RULES;

const STREAMS = "the container's own standard streams and terminal";
const STATUS = "filled in by the daemon when it reports an endpoint; not read from a create body";
const WINDOWS = "Windows containers only; the Linux daemon ignores it";
const LIMIT = "a limit or weight inside the container's own cgroup: it can only take away";
const CRED = "SANDBOX_BROKER_CRED_API=token-value-1234";

/** Log drivers that keep the container's output on the engine's host; every other one ships it off the machine. */
const LOCAL_LOG_DRIVERS = new Set(["", "json-file", "local", "none"]);

/**
 * ulimits that hand the task the host's scheduler or locked memory without a capability; the daemon names the
 * limit `RLIMIT_` + the name in upper case, so any case is the same limit.
 */
const HOST_ULIMITS = new Set(["rtprio", "rttime", "nice", "memlock"]);

/** A verdict per field of `container.CreateRequest` (and the HostConfig and NetworkingConfig it holds). */
export const CONTAINER_CREATE_VERDICTS: VerdictTable = {
  Hostname: inert("the container's own host name, in its own UTS namespace (UTSMode is judged)"),
  Domainname: inert("the container's own domain name, in its own UTS namespace"),
  User: judged([R.nonRoot], { User: "0" }),
  AttachStdin: inert(STREAMS),
  AttachStdout: inert(STREAMS),
  AttachStderr: inert(STREAMS),
  ExposedPorts: inert("metadata until a port is published (PortBindings and PublishAllPorts are judged)"),
  Tty: inert(STREAMS),
  OpenStdin: inert(STREAMS),
  StdinOnce: inert(STREAMS),
  Env: judged([R.secrets], { Env: ["AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"] }),
  Cmd: judged([R.secrets], { Cmd: ["sh", "-c", "curl -u admin:Sup3rS3cretPassw0rd https://example.com"] }),
  Healthcheck: inert("when and how often the engine runs the healthcheck; what it runs is Healthcheck.Test"),
  "Healthcheck.Test": judged([R.secrets], {
    Healthcheck: { Test: ["CMD", "curl", "-u", "admin:Sup3rS3cretPassw0rd", "https://example.com"] },
  }),
  ArgsEscaped: inert(WINDOWS),
  Image: judged(
    [R.secrets],
    { Image: "sandbox-busybox:1", Labels: { "sandbox.role": "broker" }, Env: [CRED] },
    { control: { Image: BROKER_IMAGE, Labels: { "sandbox.role": "broker" }, Env: [CRED] } },
  ),
  Volumes: inert(
    "anonymous volumes the engine creates for the container (engine storage, never a host path chosen by the body)",
  ),
  WorkingDir: inert("the folder the process starts in, inside the container"),
  Entrypoint: judged([R.secrets], {
    Entrypoint: ["sh", "-c", "curl -u admin:Sup3rS3cretPassw0rd https://example.com"],
  }),
  NetworkDisabled: inert("takes the network away: it can only tighten"),
  OnBuild: inert("image build instructions kept as metadata; nothing runs them at create or start"),
  Labels: judged(
    [R.secrets],
    { Image: BROKER_IMAGE, Labels: { "sandbox.role": "task" }, Env: [CRED] },
    { control: { Image: BROKER_IMAGE, Labels: { "sandbox.role": "broker" }, Env: [CRED] } },
  ),
  StopSignal: inert("the signal the engine sends to stop the container"),
  StopTimeout: inert("how long the engine waits before it kills the container"),
  Shell: inert("the shell of the image's build instructions; not used to run the container"),

  HostConfig: inert("the host settings; each field below has its own verdict"),
  "HostConfig.Binds": judged([R.socket, R.hostMounts, R.jobMount], {
    HostConfig: { Binds: ["/var/run/docker.sock:/var/run/docker.sock"] },
  }),
  "HostConfig.ContainerIDFile": inert(
    "written by the docker command line on the client's machine; the daemon ignores it",
  ),
  "HostConfig.LogConfig": refused(
    "a log driver other than json-file, local or none sends the task's output off the machine from the host (syslog, fluentd, gelf, awslogs, ...), outside the egress walls",
    (v) => {
      const t = (v as { Type?: unknown }).Type;
      return typeof t === "string" && LOCAL_LOG_DRIVERS.has(t);
    },
  ),
  "HostConfig.NetworkMode": judged([R.namespaces], { HostConfig: { NetworkMode: "host" } }),
  "HostConfig.PortBindings": judged([R.ports], {
    HostConfig: { PortBindings: { "80/tcp": [{ HostIp: "", HostPort: "8080" }] } },
  }),
  "HostConfig.RestartPolicy": judged([R.restart], { HostConfig: { RestartPolicy: { Name: "always" } } }),
  "HostConfig.AutoRemove": inert("the engine removes the container when it ends"),
  "HostConfig.VolumeDriver": refused(
    "Binds' named volumes come from this volume plugin instead of the local driver: what it mounts is the plugin's, not the body's",
    (v) => v === "local",
  ),
  "HostConfig.VolumesFrom": judged([R.hostMounts], { HostConfig: { VolumesFrom: ["other-container"] } }),
  "HostConfig.ConsoleSize": inert(STREAMS),
  "HostConfig.Annotations": refused(
    "annotations go to the OCI runtime, which may act on them (gVisor's dev.gvisor.*, crun's run.oci.*, Kata's io.katacontainers.*)",
  ),
  "HostConfig.CapAdd": judged([R.addedCaps], { HostConfig: { CapAdd: ["SYS_ADMIN"] } }),
  "HostConfig.CapDrop": judged([R.dropAll, R.netAdmin], { HostConfig: { CapDrop: [] } }),
  "HostConfig.CgroupnsMode": judged([R.namespaces], { HostConfig: { CgroupnsMode: "host" } }),
  "HostConfig.Dns": inert("where the container's resolver asks; what it can reach is the network's wall"),
  "HostConfig.DnsOptions": inert("resolver options inside the container"),
  "HostConfig.DnsSearch": inert("resolver search domains inside the container"),
  "HostConfig.ExtraHosts": inert(
    "lines of the container's /etc/hosts; a name opens no route (host-gateway names the host, the network decides what answers)",
  ),
  "HostConfig.GroupAdd": judged([R.nonRoot], { HostConfig: { GroupAdd: ["0"] } }),
  "HostConfig.IpcMode": judged([R.namespaces], { HostConfig: { IpcMode: "host" } }),
  "HostConfig.Cgroup": refused(
    "joins another container's cgroup (container:<id>), out of the limits set here",
  ),
  "HostConfig.Links": refused(
    "a legacy link copies the linked container's environment into this one: linked to the broker or the proxy, a task gets their secrets",
  ),
  "HostConfig.OomScoreAdj": refused(
    "a negative score shields the task from the out-of-memory killer, which then takes the host's own processes",
    (v) => typeof v === "number" && v >= 0,
  ),
  "HostConfig.PidMode": judged([R.namespaces], { HostConfig: { PidMode: "host" } }),
  "HostConfig.Privileged": judged([R.privileged], { HostConfig: { Privileged: true } }),
  "HostConfig.PublishAllPorts": judged([R.ports], { HostConfig: { PublishAllPorts: true } }),
  "HostConfig.ReadonlyRootfs": judged([R.readOnly], { HostConfig: { ReadonlyRootfs: false } }),
  "HostConfig.SecurityOpt": judged([R.seccomp, R.lsm, R.escalation, R.proc], {
    HostConfig: { SecurityOpt: ["seccomp=unconfined", "no-new-privileges"] },
  }),
  "HostConfig.StorageOpt": inert(
    "storage driver quotas of the container's own layer (size=): it can only take away",
  ),
  "HostConfig.Tmpfs": inert("memory file systems inside the container, counted in its memory cgroup"),
  "HostConfig.UTSMode": judged([R.namespaces], { HostConfig: { UTSMode: "host" } }),
  "HostConfig.UsernsMode": judged([R.namespaces], { HostConfig: { UsernsMode: "host" } }),
  "HostConfig.ShmSize": inert("the size of the container's own /dev/shm, counted in its memory cgroup"),
  "HostConfig.Sysctls": judged([R.sysctls], { HostConfig: { Sysctls: { "kernel.shm_rmid_forced": "1" } } }),
  "HostConfig.Runtime": judged(
    [R.runtime],
    { HostConfig: { Runtime: "runc" } },
    { control: { HostConfig: { Runtime: "runsc" } }, config: { [R.runtime]: { allowed: ["runsc"] } } },
  ),
  "HostConfig.Umask": inert("the file mode mask of the container's first process"),
  "HostConfig.Isolation": inert(WINDOWS),
  "HostConfig.CpuShares": inert(LIMIT),
  "HostConfig.Memory": judged([R.limits], { HostConfig: { Memory: 0 } }),
  "HostConfig.NanoCpus": judged([R.limits], { HostConfig: { NanoCpus: 0 } }),
  "HostConfig.CgroupParent": refused(
    "places the container's cgroup anywhere in the host's hierarchy, under limits (or none) that this body does not show",
  ),
  "HostConfig.BlkioWeight": inert(LIMIT),
  "HostConfig.BlkioWeightDevice": inert(LIMIT),
  "HostConfig.BlkioDeviceReadBps": inert(LIMIT),
  "HostConfig.BlkioDeviceWriteBps": inert(LIMIT),
  "HostConfig.BlkioDeviceReadIOps": inert(LIMIT),
  "HostConfig.BlkioDeviceWriteIOps": inert(LIMIT),
  "HostConfig.CpuPeriod": judged(
    [R.limits],
    { HostConfig: { NanoCpus: 0, CpuQuota: 100000, CpuPeriod: 1000 } },
    {
      control: { HostConfig: { NanoCpus: 0, CpuQuota: 100000, CpuPeriod: 100000 } },
      config: { [R.limits]: { maxCpu: 2 } },
    },
  ),
  "HostConfig.CpuQuota": judged([R.limits], { HostConfig: { NanoCpus: 0, CpuQuota: 0 } }),
  "HostConfig.CpuRealtimePeriod": refused(
    "a real-time budget lets the task's threads take the host's CPUs ahead of every normal process",
  ),
  "HostConfig.CpuRealtimeRuntime": refused(
    "a real-time budget lets the task's threads take the host's CPUs ahead of every normal process",
  ),
  "HostConfig.CpusetCpus": inert("which of the host's CPUs the container may use: it can only take away"),
  "HostConfig.CpusetMems": inert("which memory nodes the container may use: it can only take away"),
  "HostConfig.Devices": judged([R.devices], {
    HostConfig: {
      Devices: [{ PathOnHost: "/dev/sda", PathInContainer: "/dev/sda", CgroupPermissions: "rwm" }],
    },
  }),
  "HostConfig.DeviceCgroupRules": judged([R.devices], { HostConfig: { DeviceCgroupRules: ["a *:* rwm"] } }),
  "HostConfig.DeviceRequests": judged([R.devices], {
    HostConfig: { DeviceRequests: [{ Driver: "nvidia", Count: -1, Capabilities: [["gpu"]] }] },
  }),
  "HostConfig.MemoryReservation": inert(LIMIT),
  "HostConfig.MemorySwap": judged(
    [R.limits],
    { HostConfig: { MemorySwap: -1 } },
    { config: { [R.limits]: { requireNoSwap: true } } },
  ),
  "HostConfig.MemorySwappiness": inert(LIMIT),
  "HostConfig.OomKillDisable": refused(
    "with the out-of-memory killer off, a task at its memory limit hangs holding the memory instead of ending",
    (v) => v === false,
  ),
  "HostConfig.PidsLimit": judged([R.limits], { HostConfig: { PidsLimit: 0 } }),
  "HostConfig.Ulimits": refused(
    "rtprio, rttime, nice and memlock give the task the host's real-time scheduler, priorities or locked memory without a capability",
    (v) =>
      Array.isArray(v) &&
      v.every((u) => {
        const n = (u as { Name?: unknown } | null)?.Name;
        return typeof n === "string" && !HOST_ULIMITS.has(n.toLowerCase());
      }),
  ),
  "HostConfig.CpuCount": inert(WINDOWS),
  "HostConfig.CpuPercent": inert(WINDOWS),
  "HostConfig.IOMaximumIOps": inert(WINDOWS),
  "HostConfig.IOMaximumBandwidth": inert(WINDOWS),
  "HostConfig.Mounts": judged([R.socket, R.hostMounts, R.jobMount], {
    HostConfig: {
      Mounts: [{ Type: "bind", Source: "/var/run/docker.sock", Target: "/var/run/docker.sock" }],
    },
  }),
  "HostConfig.Mounts[].Consistency": inert("a macOS file sharing hint; Linux ignores it"),
  "HostConfig.Mounts[].BindOptions.NonRecursive": inert(
    "leaves the host folder's submounts out: it can only take away",
  ),
  "HostConfig.Mounts[].BindOptions.CreateMountpoint": inert(
    "creates the bind's host folder when it is missing; the bind itself is judged",
  ),
  "HostConfig.Mounts[].BindOptions.ReadOnlyNonRecursive": refused(
    "a read-only bind whose submounts stay writable: the host folders mounted below it are written through it",
  ),
  "HostConfig.Mounts[].BindOptions.ReadOnlyForceRecursive": inert(
    "makes every submount read-only too: it can only take away",
  ),
  "HostConfig.Mounts[].VolumeOptions.NoCopy": inert("skips copying the image's files into a new volume"),
  "HostConfig.Mounts[].VolumeOptions.Labels": inert("labels of the volume the engine creates"),
  "HostConfig.Mounts[].ImageOptions": inert(
    "mounts part of an image read-only: image content, never a host path",
  ),
  "HostConfig.Mounts[].TmpfsOptions": inert(
    "size, mode and flags of a memory file system inside the container",
  ),
  "HostConfig.Mounts[].ClusterOptions": inert("swarm cluster volumes only; a plain daemon refuses them"),
  "HostConfig.MaskedPaths": judged([R.proc], { HostConfig: { MaskedPaths: [] } }),
  "HostConfig.ReadonlyPaths": judged([R.proc], { HostConfig: { ReadonlyPaths: [] } }),
  "HostConfig.Init": inert("runs the engine's small init as process 1 of the container"),

  NetworkingConfig: inert("the networks the container joins; each field below has its own verdict"),
  "NetworkingConfig.EndpointsConfig": judged([R.namespaces], {
    NetworkingConfig: { EndpointsConfig: { host: {} } },
  }),
  "NetworkingConfig.EndpointsConfig{}.IPAMConfig": refused(
    "a fixed address on the network can take the one another member (the proxy, the broker) is known by",
  ),
  "NetworkingConfig.EndpointsConfig{}.Links": refused(
    "names other containers by aliases of this one's choosing on the network",
  ),
  "NetworkingConfig.EndpointsConfig{}.Aliases": refused(
    "a name other members of the network resolve: a task could answer for the proxy's or the broker's",
  ),
  "NetworkingConfig.EndpointsConfig{}.DriverOpts": refused(
    "endpoint options of the network driver, which set the interface's kernel settings on the host side (com.docker.network.endpoint.sysctls)",
  ),
  "NetworkingConfig.EndpointsConfig{}.GwPriority": inert(
    "which of the container's own networks gives its default route",
  ),
  "NetworkingConfig.EndpointsConfig{}.NetworkID": inert(STATUS),
  "NetworkingConfig.EndpointsConfig{}.EndpointID": inert(STATUS),
  "NetworkingConfig.EndpointsConfig{}.Gateway": inert(STATUS),
  "NetworkingConfig.EndpointsConfig{}.IPAddress": inert(STATUS),
  "NetworkingConfig.EndpointsConfig{}.MacAddress": refused(
    "a chosen hardware address can take the one of another member of the network",
  ),
  "NetworkingConfig.EndpointsConfig{}.IPPrefixLen": inert(STATUS),
  "NetworkingConfig.EndpointsConfig{}.IPv6Gateway": inert(STATUS),
  "NetworkingConfig.EndpointsConfig{}.GlobalIPv6Address": inert(STATUS),
  "NetworkingConfig.EndpointsConfig{}.GlobalIPv6PrefixLen": inert(STATUS),
  "NetworkingConfig.EndpointsConfig{}.DNSNames": inert(STATUS),
};
