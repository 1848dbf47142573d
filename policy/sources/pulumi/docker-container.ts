/**
 * The verdict of every input of `docker.Container` (@pulumi/docker 5.2.0 `ContainerArgs`, the provider's schema as
 * its SDK spells it): test/policy/sources/pulumi/docker-container.test.ts fails on an input with no verdict, and proves
 * each judged input's hostile value is refused. A refused input that a container sets fails
 * sandbox-disallow-unjudged-fields (sources/pulumi/container.ts hands them over).
 */
import { RULES as R } from "../rule-ids";
import { inert, judged, refused, refusedInputs, type UnjudgedField, type VerdictTable } from "../verdict";

const LIFECYCLE = "how the provider creates, waits for and removes the container";
const LIMIT = "a limit or weight inside the container's own cgroup: it can only take away";
const LOCAL_LOG_DRIVERS = new Set(["json-file", "local", "none"]);
const HOST_ULIMITS = new Set(["rtprio", "rttime", "nice", "memlock"]);
const SECRET_CMD = ["sh", "-c", "curl -u admin:Sup3rS3cretPassw0rd https://example.com"];

export const DOCKER_CONTAINER_VERDICTS: VerdictTable = {
  attach: inert(LIFECYCLE),
  capabilities: judged([R.addedCaps], { capabilities: { adds: ["SYS_ADMIN"], drops: ["ALL"] } }),
  cgroupParent: refused(
    "places the container's cgroup anywhere in the host's hierarchy, under limits (or none) the stack does not show",
  ),
  cgroupnsMode: judged([R.namespaces], { cgroupnsMode: "host" }),
  command: judged([R.secrets], { command: SECRET_CMD }),
  containerReadRefreshTimeoutMilliseconds: inert(LIFECYCLE),
  cpuPeriod: judged(
    [R.limits],
    { cpus: undefined, cpuQuota: 100000, cpuPeriod: 1000 },
    { config: { [R.limits]: { maxCpu: 2 } } },
  ),
  cpuQuota: judged(
    [R.limits],
    { cpus: undefined, cpuQuota: 400000 },
    { config: { [R.limits]: { maxCpu: 2 } } },
  ),
  cpuSet: inert("which of the host's CPUs the container may use: it can only take away"),
  cpuShares: inert(LIMIT),
  cpus: judged([R.limits], { cpus: "0" }),
  destroyGraceSeconds: inert(LIFECYCLE),
  deviceCgroupRules: judged([R.devices], { deviceCgroupRules: ["a *:* rwm"] }),
  deviceReadBps: inert(LIMIT),
  deviceReadIops: inert(LIMIT),
  deviceRequests: judged([R.devices], { deviceRequests: [{ driver: "nvidia", count: -1 }] }),
  deviceWriteBps: inert(LIMIT),
  deviceWriteIops: inert(LIMIT),
  devices: judged([R.devices], { devices: [{ hostPath: "/dev/sda" }] }),
  dns: inert("where the container's resolver asks; what it can reach is the network's wall"),
  dnsOpts: inert("resolver options inside the container"),
  dnsSearches: inert("resolver search domains inside the container"),
  domainname: inert("the container's own domain name"),
  entrypoints: judged([R.secrets], { entrypoints: SECRET_CMD }),
  envs: judged([R.secrets], { envs: ["AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"] }),
  gpus: judged([R.devices], { gpus: "all" }),
  groupAdds: judged([R.nonRoot], { groupAdds: ["0"] }),
  healthcheck: judged([R.secrets], { healthcheck: { tests: ["CMD", ...SECRET_CMD] } }),
  hostname: inert("the container's own host name"),
  hosts: inert("lines of the container's /etc/hosts; a name opens no route"),
  image: inert("the image the container runs; what it is given is judged"),
  init: inert("runs the engine's small init as process 1"),
  ipcMode: judged([R.namespaces], { ipcMode: "host" }),
  labels: inert("metadata of the container; the broker's identity also needs its image and entry point"),
  logDriver: refused(
    "a log driver other than json-file, local or none sends the task's output off the machine from the host (syslog, fluentd, gelf, awslogs, ...)",
    (v) => typeof v === "string" && LOCAL_LOG_DRIVERS.has(v),
  ),
  logOpts: inert("options of the log driver, which is judged"),
  logs: inert(LIFECYCLE),
  maxRetryCount: inert("how often a restart policy retries; the policy is judged"),
  memory: judged([R.limits], { memory: 0 }),
  memoryReservation: inert(LIMIT),
  memorySwap: judged([R.limits], { memorySwap: -1 }, { config: { [R.limits]: { requireNoSwap: true } } }),
  mounts: judged([R.socket, R.hostMounts], {
    mounts: [{ type: "bind", source: "/var/run/docker.sock", target: "/var/run/docker.sock" }],
  }),
  mustRun: inert(LIFECYCLE),
  name: inert("the container's name on the engine"),
  networkMode: judged([R.namespaces], { networkMode: "host" }),
  networksAdvanced: judged([R.ports, R.proxyEgress], {
    networksAdvanced: [{ name: "lan", driver: "macvlan" }],
  }),
  pidMode: judged([R.namespaces], { pidMode: "host" }),
  platform: inert("which image variant is pulled"),
  ports: judged([R.ports], { ports: [{ internal: 80, external: 8080 }] }),
  privileged: judged([R.privileged], { privileged: true }),
  publishAllPorts: judged([R.ports], { publishAllPorts: true }),
  readOnly: judged([R.readOnly], { readOnly: false }),
  removeVolumes: inert(LIFECYCLE),
  restart: judged([R.restart], { restart: "always" }),
  rm: inert(LIFECYCLE),
  runtime: judged(
    [R.runtime],
    { runtime: "runc" },
    { control: { runtime: "runsc" }, config: { [R.runtime]: { allowed: ["runsc"] } } },
  ),
  securityOpts: judged([R.seccomp], { securityOpts: ["no-new-privileges", "seccomp=unconfined"] }),
  shmSize: inert("the size of the container's own /dev/shm, counted in its memory"),
  start: inert(LIFECYCLE),
  stdinOpen: inert("the container's own standard input"),
  stopSignal: inert("the signal that stops the container"),
  stopTimeout: inert("how long the engine waits before it kills the container"),
  storageOpts: inert("storage driver quotas of the container's own layer: it can only take away"),
  sysctls: judged([R.sysctls], { sysctls: { "kernel.shm_rmid_forced": "1" } }),
  tmpfs: inert("memory file systems inside the container, counted in its memory"),
  tty: inert("the container's own terminal"),
  ulimits: refused(
    "rtprio, rttime, nice and memlock give the task the host's real-time scheduler, priorities or locked memory without a capability",
    (v) =>
      Array.isArray(v) &&
      v.every((u) => {
        const n = (u as { name?: unknown } | null)?.name;
        return typeof n === "string" && !HOST_ULIMITS.has(n.toLowerCase());
      }),
  ),
  uploads: judged([R.secrets], {
    uploads: [{ file: "/root/.netrc", content: "machine a login u password Sup3rS3cretPassw0rd" }],
  }),
  user: judged([R.nonRoot], { user: "0" }),
  usernsMode: judged([R.namespaces], { usernsMode: "host" }),
  volumes: judged([R.socket], { volumes: [{ hostPath: "/var/run/docker.sock", containerPath: "/s" }] }),
  wait: inert(LIFECYCLE),
  waitTimeout: inert(LIFECYCLE),
  workingDir: inert("the folder the process starts in, inside the container"),
};

/** The inputs of a `docker.Container` that the project refuses (unknown props are outputs or other versions' inputs). */
export function refusedContainerInputs(props: unknown): UnjudgedField[] {
  return refusedInputs(DOCKER_CONTAINER_VERDICTS, "docker.Container", props);
}
