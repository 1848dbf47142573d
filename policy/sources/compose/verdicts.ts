/**
 * The verdict of every key of a Compose service, job and `pre_start` hook, as the Compose schema the project claims
 * defines them (schema.generated.ts, compose-go's embedded compose-spec.json). The conformance test walks the
 * generated table: a key with no verdict, or a verdict for a key the schema does not have, fails it. A refused key
 * that a service sets is a finding of sandbox-disallow-unjudged-fields (fields.ts).
 */
import { BROKER_IMAGE } from "../../../components/model/broker-spec";
import { RULES } from "../rule-ids";
import { inert, judged, refused, type VerdictTable } from "../verdict";

const R = RULES;

const WINDOWS = "Windows containers only";
const LIMIT = "a limit or weight inside the container's own cgroup: it can only take away";
const LOCAL_LOG_DRIVERS = new Set(["json-file", "local", "none"]);
const HOST_ULIMITS = new Set(["rtprio", "rttime", "nice", "memlock"]);

const CRED = "SANDBOX_BROKER_CRED_API=token-value-1234";
const SECRET_CMD = ["sh", "-c", "curl -u admin:Sup3rS3cretPassw0rd https://example.com"];

/** A verdict per key of a service (the same keys serve jobs and `pre_start` hooks, which are containers too). */
export const COMPOSE_SERVICE_VERDICTS: VerdictTable = {
  annotations: refused(
    "annotations go to the OCI runtime, which may act on them (gVisor's dev.gvisor.*, crun's run.oci.*)",
  ),
  attach: inert("whether docker compose shows the service's output"),
  blkio_config: inert(LIMIT),
  build: judged([R.privileged, R.namespaces, R.hostMounts], { build: { context: ".", privileged: true } }),
  "build.ssh": refused("hands the build the user's SSH agent or keys: a credential of the host"),
  "build.secrets": refused("copies host files or variables into the build as secrets"),
  "build.cache_to": refused(
    "a local cache export writes the build cache into a host folder",
    (v) => Array.isArray(v) && v.every((x) => typeof x === "string" && !/type\s*=\s*local/i.test(x)),
  ),
  "build.cache_from": refused(
    "a local cache import reads a host folder into the build",
    (v) => Array.isArray(v) && v.every((x) => typeof x === "string" && !/type\s*=\s*local/i.test(x)),
  ),
  cap_add: judged([R.addedCaps], { cap_add: ["SYS_ADMIN"] }),
  cap_drop: judged([R.dropAll], { cap_drop: [] }),
  cgroup: judged([R.namespaces], { cgroup: "host" }),
  cgroup_parent: refused(
    "places the container's cgroup anywhere in the host's hierarchy, under limits (or none) the file does not show",
  ),
  command: judged([R.secrets], { command: SECRET_CMD }),
  configs: judged([R.hostMounts], { configs: ["hostkeys"] }),
  container_name: inert("the container's name on the engine"),
  cpu_count: inert(WINDOWS),
  cpu_percent: inert(WINDOWS),
  cpu_period: judged(
    [R.limits],
    { cpus: 0, cpu_quota: 100000, cpu_period: 1000 },
    { config: { [R.limits]: { maxCpu: 2 } } },
  ),
  cpu_quota: judged(
    [R.limits],
    { cpus: 0, cpu_quota: 100000, cpu_period: 1000 },
    { config: { [R.limits]: { maxCpu: 2 } } },
  ),
  cpu_rt_period: refused(
    "a real-time budget lets the task's threads take the host's CPUs ahead of every normal process",
  ),
  cpu_rt_runtime: refused(
    "a real-time budget lets the task's threads take the host's CPUs ahead of every normal process",
  ),
  cpu_shares: inert(LIMIT),
  cpus: judged([R.limits], { cpus: 0 }),
  cpuset: inert("which of the host's CPUs the container may use: it can only take away"),
  credential_spec: inert(WINDOWS),
  depends_on: inert("the order services start in"),
  deploy: judged([R.restart, R.limits, R.devices], { deploy: { restart_policy: { condition: "any" } } }),
  develop: judged([R.hostMounts], { develop: { watch: [{ path: "/", action: "sync", target: "/host" }] } }),
  device_cgroup_rules: judged([R.devices], { device_cgroup_rules: ["a *:* rwm"] }),
  devices: judged([R.devices], { devices: ["/dev/sda:/dev/sda"] }),
  dns: inert("where the container's resolver asks; what it can reach is the network's wall"),
  dns_opt: inert("resolver options inside the container"),
  dns_search: inert("resolver search domains inside the container"),
  domainname: inert("the container's own domain name"),
  entrypoint: judged([R.secrets], { entrypoint: SECRET_CMD }),
  env_file: judged([R.secrets], {
    environment: ["AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"],
  }),
  environment: judged([R.secrets], {
    environment: ["AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"],
  }),
  expose: inert("metadata until a port is published (ports is judged)"),
  extends: inert("the loader merges the extended service in; the result is judged"),
  external_links: refused(
    "a legacy link to a container outside the project copies its environment into this one (the broker's or the proxy's secrets)",
  ),
  extra_hosts: inert("lines of the container's /etc/hosts; a name opens no route"),
  gpus: judged([R.devices], { gpus: "all" }),
  group_add: judged([R.nonRoot], { group_add: ["0"] }),
  healthcheck: judged([R.secrets], { healthcheck: { test: ["CMD", ...SECRET_CMD] } }),
  hostname: inert("the container's own host name"),
  image: judged(
    [R.secrets],
    { image: "busybox:1.36", labels: { "sandbox.role": "broker" }, environment: [CRED] },
    { control: { image: BROKER_IMAGE, labels: { "sandbox.role": "broker" }, environment: [CRED] } },
  ),
  init: inert("runs the engine's small init as process 1"),
  ipc: judged([R.namespaces], { ipc: "host" }),
  isolation: inert(WINDOWS),
  label_file: refused(
    "labels read from a file the scan does not read (they could name the service as the broker)",
  ),
  labels: judged(
    [R.secrets],
    { image: BROKER_IMAGE, labels: { "sandbox.role": "task" }, environment: [CRED] },
    { control: { image: BROKER_IMAGE, labels: { "sandbox.role": "broker" }, environment: [CRED] } },
  ),
  links: refused(
    "a legacy link copies the linked service's environment into this one (on the default bridge): linked to the broker or the proxy, a task gets their secrets",
  ),
  logging: refused(
    "a log driver other than json-file, local or none sends the service's output off the machine from the host",
    (v) => {
      const d = (v as { driver?: unknown } | null)?.driver;
      return d === undefined || (typeof d === "string" && LOCAL_LOG_DRIVERS.has(d));
    },
  ),
  mac_address: refused("a chosen hardware address can take another member's on the network"),
  mem_limit: judged([R.limits], { mem_limit: 0 }),
  mem_reservation: inert(LIMIT),
  mem_swappiness: inert(LIMIT),
  memswap_limit: judged(
    [R.limits],
    { memswap_limit: -1 },
    { config: { [R.limits]: { requireNoSwap: true } } },
  ),
  models: refused(
    "hands the container the address of a model runner on the host (Docker Model Runner), a service outside the project's network",
  ),
  network_mode: judged([R.namespaces], { network_mode: "host" }),
  networks: judged([R.namespaces], { network_mode: null, networks: { hostnet: {} } }),
  oom_kill_disable: refused(
    "with the out-of-memory killer off, a task at its memory limit hangs holding the memory",
    (v) => v === false,
  ),
  oom_score_adj: refused(
    "a negative score shields the task from the out-of-memory killer, which then takes the host's own processes",
    (v) => typeof v === "number" && v >= 0,
  ),
  pid: judged([R.namespaces], { pid: "host" }),
  pids_limit: judged([R.limits], { pids_limit: -1 }),
  platform: inert("which image variant is pulled"),
  ports: judged([R.ports], { ports: ["8080:80"] }),
  post_start: judged([R.privileged], { post_start: [{ command: ["true"], privileged: true }] }),
  pre_start: judged([R.privileged], { pre_start: [{ command: ["true"], privileged: true }] }),
  pre_stop: judged([R.privileged], { pre_stop: [{ command: ["true"], privileged: true }] }),
  privileged: judged([R.privileged], { privileged: true }),
  profiles: inert("which services start together; the scan judges every profile"),
  provider: refused("docker compose runs the host program the provider names instead of a container"),
  pull_policy: inert("when the image is pulled"),
  pull_refresh_after: inert("when the image is pulled"),
  read_only: judged([R.readOnly], { read_only: false }),
  restart: judged([R.restart], { restart: "always" }),
  runtime: judged(
    [R.runtime],
    { runtime: "runc" },
    { control: { runtime: "runsc" }, config: { [R.runtime]: { allowed: ["runsc"] } } },
  ),
  scale: inert("how many copies run; each is the same container"),
  secrets: judged([R.secrets], { secrets: ["token"] }),
  security_opt: judged([R.seccomp], { security_opt: ["seccomp=unconfined"] }),
  shm_size: inert("the size of the container's own /dev/shm, counted in its memory"),
  stdin_open: inert("the container's own standard input"),
  stop_grace_period: inert("how long docker compose waits before it kills the container"),
  stop_signal: inert("the signal that stops the container"),
  storage_opt: inert("storage driver quotas of the container's own layer: it can only take away"),
  sysctls: judged([R.sysctls], { sysctls: { "kernel.shm_rmid_forced": "1" } }),
  tmpfs: inert("memory file systems inside the container, counted in its memory"),
  triggers: inert("when a job runs; each run is the container it is"),
  tty: inert("the container's own terminal"),
  ulimits: refused(
    "rtprio, rttime, nice and memlock give the task the host's real-time scheduler, priorities or locked memory without a capability",
    (v) =>
      typeof v === "object" && v !== null && Object.keys(v).every((k) => !HOST_ULIMITS.has(k.toLowerCase())),
  ),
  umask: inert("the file mode mask of the container's first process"),
  per_replica: inert("whether a pre_start hook runs once per replica"),
  use_api_socket: judged([R.socket], { use_api_socket: true }),
  user: judged([R.nonRoot], { user: "0" }),
  userns_mode: judged([R.namespaces], { userns_mode: "host" }),
  uts: judged([R.namespaces], { uts: "host" }),
  volumes: judged([R.socket, R.hostMounts], { volumes: ["/var/run/docker.sock:/var/run/docker.sock"] }),
  volumes_from: judged([R.hostMounts], { volumes_from: ["container:other"] }),
  working_dir: inert("the folder the process starts in, inside the container"),
};
