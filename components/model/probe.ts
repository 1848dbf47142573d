import type { BrokerProbeCase } from "./broker-spec";
import { decodeCapabilityMask, effectiveCapabilities } from "./capabilities";
import { type JobDiskState, judgeJobDisk } from "./probe-job-disk";
import { type Template, templateDrops } from "./template";

export type { JobDiskState } from "./probe-job-disk";

/** The address every cloud serves instance credentials from. */
export const METADATA_URL = "http://169.254.169.254/latest/meta-data/";

/**
 * Where a template's probe tries to go: with egress `none` (or no route) the metadata address, which must not
 * answer; in proxy mode the first allowed host, which must answer through the proxy.
 */
export function probeEgressUrl(egress: {
  readonly mode: "none" | "proxy";
  readonly allow: readonly string[];
}): string {
  const host = egress.allow[0];
  return egress.mode === "proxy" && host !== undefined
    ? `http://${host.replace(/^\*\./, "")}/`
    : METADATA_URL;
}

/** How many processes past the template's limit the Kubernetes probe tries to start before it stops counting. */
export const FORK_COUNT_MARGIN = 16;

/** Longest the probe may run, whatever the template's own deadline. */
export const PROBE_TIMEOUT_SECONDS = 60;

/**
 * The self-check that runs inside a template's own container and prints one `probe.<key>=<value>` line per
 * observation. It uses only busybox/POSIX tools so it runs in the smallest image, and it never needs a network:
 * the egress check targets `egressUrl`, which for a template without egress has no route to go anywhere.
 */
export function probeScript(options: {
  jobFolder: string;
  egressUrl: string;
  /**
   * Kubernetes: the process limit is on the pod's cgroup, which a container cannot read (its own `pids.max` says
   * `max`), so the probe counts how many processes it can start, up to this bound, before a fork is refused.
   */
  countForksUpTo?: number;
  /** A template that calls the broker: what to ask of it (`LaunchSpec.broker.probe`). */
  broker?: BrokerProbeCase;
}): string {
  const job = shellQuote(options.jobFolder);
  const url = shellQuote(options.egressUrl);
  const bound = options.countForksUpTo;
  return [
    'say() { echo "probe.$1=$2"; }',
    'say id "$(id -u):$(id -g)"',
    // Which kernel answers: gVisor's own log opens with its banner; the host's is refused to a task or is the host's.
    'say release "$(uname -r)"',
    'k="$(dmesg 2>/dev/null | head -n 1)"; case "$k" in *gVisor*) say kernel gVisor; say banner "$k";; *) say kernel host;; esac',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a template
    'while read -r k v _; do case "$k" in CapEff:|CapBnd:|CapPrm:|NoNewPrivs:|Seccomp:) say "${k%:}" "$v";; esac; done < /proc/self/status',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a template
    'p=""; for f in /sys/fs/cgroup/pids.max /sys/fs/cgroup/pids/pids.max; do [ -r "$f" ] && p="$(cat "$f")" && break; done; say pidsMax "${p:-unknown}"',
    // /tmp's size (a memory tmpfs on Docker, a memory emptyDir on Kubernetes), in KiB.
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a template
    'set -- $(df -k /tmp 2>/dev/null | tail -n 1); say tmpSizeKb "${2:-unknown}"',
    ...(bound === undefined
      ? []
      : [
          // A subshell starts sleepers until a fork is refused (or the bound is reached), writing each pid with
          // builtins only; then the sleepers are killed with builtins (no fork is possible while they live).
          `: > /tmp/.probe-forks; ( i=0; while [ "$i" -lt ${Math.trunc(bound)} ]; do sleep 30 & echo $! >> /tmp/.probe-forks; i=$((i + 1)); done ) 2>/dev/null`,
          'n=0; while read -r p; do kill "$p" 2>/dev/null; n=$((n + 1)); done < /tmp/.probe-forks; rm -f /tmp/.probe-forks; say forks "$n"',
        ]),
    "if ( : > /.probe-write ) 2>/dev/null; then rm -f /.probe-write; say rootWrite allowed; else say rootWrite denied; fi",
    "if ( : > /tmp/.probe-write ) 2>/dev/null; then rm -f /tmp/.probe-write; say tmpWrite allowed; else say tmpWrite denied; fi",
    `if ( : > ${job}/.probe-write ) 2>/dev/null; then rm -f ${job}/.probe-write; say jobWrite allowed; else say jobWrite denied; fi`,
    // The job folder's size in KiB (-P: one line whatever the device's name) and its mount's options.
    `set -- $(df -Pk ${job} 2>/dev/null | tail -n 1); say jobSizeKb "\${2:-unknown}"`,
    `o=""; while read -r _ m _ x _; do [ "$m" = ${shellQuote(mountsPath(options.jobFolder))} ] && o="$x"; done < /proc/mounts; say jobMount "\${o:-unknown}"`,
    "if ping -c 1 -W 1 127.0.0.1 >/dev/null 2>&1; then say ping allowed; else say ping denied; fi",
    "if mknod /tmp/.probe-node c 1 3 2>/dev/null; then rm -f /tmp/.probe-node; say mknod allowed; else say mknod denied; fi",
    "if chroot / true 2>/dev/null; then say chroot allowed; else say chroot denied; fi",
    "if ip link add probe0 type dummy 2>/dev/null; then ip link del probe0 2>/dev/null; say ipLinkAdd allowed; else say ipLinkAdd denied; fi",
    HTTP_GET,
    // A proxy that has just started may not answer yet: three tries. A 403 is the proxy's refusal, not a way out.
    `n=1; [ -n "\${http_proxy:-}" ] && n=3; r=""; while [ "$n" -gt 0 ]; do r="$(http_get ${url})"; [ -n "$r" ] && break; n=$((n - 1)); [ "$n" -gt 0 ] && sleep 1; done`,
    'case "$r" in "") say egress denied;; *" 403 "*) say egress refused;; HTTP/*) say egress allowed;; *) say egress denied;; esac',
    ...(options.broker === undefined ? [] : brokerProbeLines(options.broker)),
    "say done 1",
  ].join("\n");
}

/**
 * `http_get URL` prints the status line of a plain HTTP GET, or nothing. It speaks HTTP over `nc` (the static busybox's
 * `wget` crashes on every URL: its C library's address lookup needs modules a static binary does not have), and goes through `http_proxy` when
 * one is set, so "allowed" means a real HTTP answer came back, not merely that a connect succeeded. Through the proxy
 * the request side stays open a moment: busybox's `nc` half-closes the connection at the end of its input, and Squid
 * takes a half-closed client as gone (its `half_closed_clients on` crashes Squid 5.7) before the answer is back.
 */
export const HTTP_GET = `http_get() {
  u="$1"; rest="\${u#http://}"; hostport="\${rest%%/*}"; path="/\${rest#*/}"; [ "$rest" = "$hostport" ] && path="/"
  host="\${hostport%%:*}"; port="\${hostport##*:}"; [ "$port" = "$hostport" ] && port=80
  target="$host"; tport="$port"; req="$path"; hold=0
  if [ -n "\${http_proxy:-}" ]; then
    p="\${http_proxy#http://}"; p="\${p%%/*}"; target="\${p%%:*}"; tport="\${p##*:}"; req="$u"; hold=2
  fi
  { printf 'GET %s HTTP/1.0\\r\\nHost: %s\\r\\nConnection: close\\r\\n\\r\\n' "$req" "$hostport"; sleep "$hold"; } |
    nc -w 3 "$target" "$tport" 2>/dev/null | head -n 1
}`;

/**
 * The broker's case of the probe, straight to the broker (never through the proxy): the task holds no broker
 * credential (no credential variable, no credentials folder), the broker answers an unknown route with 404, a path
 * outside the route with 403 and an encoded dot segment with 400, and the upstream is not reachable directly.
 */
function brokerProbeLines(b: BrokerProbeCase): string[] {
  const status = (key: string, url: string) =>
    `r="$(http_get ${url})"; case "$r" in "") say ${key} unreachable;; HTTP/*) set -- $r; say ${key} "$2";; *) say ${key} unreachable;; esac`;
  const base = `"$SANDBOX_BROKER_URL/${b.route}`;
  return [
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a template
    'hp="${http_proxy:-}"; http_proxy=""',
    "if env | grep -q '^SANDBOX_BROKER_CRED_' || [ -e /run/secrets/sandbox-broker ]; then say brokerCredentials present; else say brokerCredentials absent; fi",
    // A broker that has just started may not answer yet: up to five tries of the unknown route before judging.
    'n=5; while [ "$n" -gt 0 ]; do [ -n "$(http_get "$SANDBOX_BROKER_URL/.sandbox-probe-no-route/")" ] && break; n=$((n - 1)); [ "$n" -gt 0 ] && sleep 1; done',
    status("brokerUnknownRoute", '"$SANDBOX_BROKER_URL/.sandbox-probe-no-route/"'),
    b.outsidePath === undefined
      ? "say brokerOutsidePath every-path"
      : status("brokerOutsidePath", `${base}${b.outsidePath}"`),
    status("brokerTraversal", `${base}/%2e%2e/"`),
    `r="$(http_get ${shellQuote(`http://${b.upstream}/`)})"; case "$r" in HTTP/*) say brokerDirect allowed;; *) say brokerDirect denied;; esac`,
    'http_proxy="$hp"',
  ];
}

/** A path as /proc/mounts writes it: without a trailing slash, space, tab, newline and backslash as `\ooo`. */
function mountsPath(path: string): string {
  const trimmed = path.length > 1 ? path.replace(/\/+$/, "") || "/" : path;
  return trimmed.replace(/[ \t\n\\]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, "0")}`);
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Parses the `probe.<key>=<value>` lines out of a container's logs; other lines are ignored. */
export function parseProbeOutput(logs: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of logs.split(/\r?\n/)) {
    const m = /^probe\.([A-Za-z]+)=(.*)$/.exec(line.trim());
    if (m?.[1] !== undefined && m[2] !== undefined) out[m[1]] = m[2].trim();
  }
  return out;
}

/** One wall: what the template declares and what the kernel showed inside the container. */
export interface WallReport {
  readonly wall: string;
  readonly declared: string;
  readonly observed: string;
  /** `true` held, `false` broken, `null` not observable here (e.g. the probe did not report it). */
  readonly ok: boolean | null;
}

/** A judged probe run: every wall, and whether all that could be observed held. */
export interface ProbeReport {
  readonly walls: readonly WallReport[];
  /** True when the probe finished and no wall was broken. */
  readonly passed: boolean;
}

const denied = (observed: string | undefined) => (observed === undefined ? null : observed === "denied");

/** The kernel the probe talked to, in words: `gVisor ("[ 0.0] Starting gVisor...", release 4.4.0)` or `host 6.1.0`. */
function kernelObserved(observed: Readonly<Record<string, string>>): string | undefined {
  if (observed.kernel === undefined) return undefined;
  const release = observed.release === undefined ? "" : `release ${observed.release}`;
  if (observed.kernel === "gVisor") {
    const banner = (observed.banner ?? "").replace(/^\[[^\]]*\]\s*/, "");
    return `gVisor (${[banner, release].filter((x) => x !== "").join(", ")})`;
  }
  return `the host's${release === "" ? "" : ` (${release})`}`;
}

/**
 * Judges a probe's observations against its template. The probe first says which kernel it talks to: a `runsc`
 * template must show gVisor (a task that ran under the host's kernel instead is a broken wall, never a quiet fall
 * back). gVisor is its own kernel: it reports `Seccomp: 0` about its own processes (it filters system calls itself,
 * and the host's filter sits on the sandbox, out of sight), and older releases have no NoNewPrivs line; what it
 * does not show is said to be not observable rather than passed or failed.
 */
export function judgeProbe(
  template: Template,
  observed: Readonly<Record<string, string>>,
  options: {
    /**
     * False when the probe ran in a container made by `@pulumi/docker`, which cannot express a process limit: the
     * launcher sets it on every task (`PidsLimit`), so there an unlimited `pids.max` is reported as not observable
     * rather than as a broken wall. Defaults to true.
     */
    readonly pidsLimitApplied?: boolean;
    /**
     * Kubernetes: the process wall is the node's `podPidsLimit` on the pod's cgroup, out of a container's sight; it
     * is judged by the probe's fork count (`countForksUpTo`): a fork must be refused before the template's limit.
     */
    readonly podLimit?: boolean;
    /** Docker's launcher: whether the job folder had a disk of its own; judges `jobDisk` and `jobMount`. */
    readonly jobDisk?: JobDiskState;
  } = {},
): ProbeReport {
  const gvisor = observed.kernel === "gVisor";
  const keptBound = effectiveCapabilities(templateDrops(template), []);
  const walls: WallReport[] = [];
  const add = (wall: string, declared: string, obs: string | undefined, ok: boolean | null) =>
    walls.push({ wall, declared, observed: obs ?? "(not reported)", ok: obs === undefined ? null : ok });

  const runtimeKernel = { runc: "the host's (runc)", runsc: "gVisor (runsc)", kata: "a VM's (kata)" }[
    template.runtime
  ];
  add(
    "kernel",
    runtimeKernel,
    kernelObserved(observed),
    // runc tasks run under whatever the engine's runc is; kata's VM kernel is not told apart from a host's here.
    template.runtime === "runsc" ? gvisor : template.runtime === "runc" ? true : null,
  );
  add("user", template.user, observed.id, observed.id === template.user);

  const capEff = observed.CapEff === undefined ? undefined : safeDecode(observed.CapEff);
  add("capEff", "(none)", capEff?.join(",") || (capEff ? "(none)" : undefined), capEff?.length === 0);

  const capBnd = observed.CapBnd === undefined ? undefined : safeDecode(observed.CapBnd);
  add(
    "capBnd",
    keptBound.join(",") || "(none)",
    capBnd === undefined ? undefined : capBnd.join(",") || "(none)",
    capBnd?.every((c) => keptBound.includes(c as never)) === true && !capBnd.includes("NET_ADMIN"),
  );

  if (gvisor) {
    // Judged where gVisor shows them (newer releases report NoNewPrivs); said to be hidden where it does not.
    const hidden = (line: string, v: string | undefined) =>
      `not observable under gVisor (${v === undefined ? `no ${line} line` : `${line}: ${v}`})`;
    if (observed.NoNewPrivs === undefined) {
      walls.push({ wall: "noNewPrivs", declared: "1", observed: hidden("NoNewPrivs", undefined), ok: null });
    } else add("noNewPrivs", "1", observed.NoNewPrivs, observed.NoNewPrivs === "1");
    if (observed.Seccomp === "2") add("seccomp", "2", observed.Seccomp, true);
    else
      walls.push({ wall: "seccomp", declared: "2", observed: hidden("Seccomp", observed.Seccomp), ok: null });
  } else {
    add("noNewPrivs", "1", observed.NoNewPrivs, observed.NoNewPrivs === "1");
    add("seccomp", "2", observed.Seccomp, observed.Seccomp === "2");
  }
  // On Kubernetes the fork count is the evidence under either kernel: a fork refused inside the pod is the wall.
  const forksCounted = options.podLimit === true && observed.forks !== undefined;
  if (gvisor && observed.pidsMax === "max" && !forksCounted) {
    // gVisor's own cgroup files show no limit; the launcher's PidsLimit is on the sandbox's host cgroup (the fork
    // bomb escape check proves it holds).
    // On Kubernetes that host cgroup is the pod's, limited by the node's podPidsLimit.
    walls.push({
      wall: "pidsMax",
      declared:
        options.podLimit === true
          ? `${template.resources.pids} (the node's podPidsLimit, on the pod's cgroup)`
          : String(template.resources.pids),
      observed: `not observable under gVisor (its pids.max shows max; the limit is on the ${options.podLimit === true ? "pod's" : "sandbox's"} host cgroup, which gVisor's own threads share)`,
      ok: null,
    });
  } else if (options.podLimit === true && observed.pidsMax === "max") {
    const forks = observed.forks === undefined ? undefined : Number(observed.forks);
    walls.push({
      wall: "pidsMax",
      declared: `${template.resources.pids} (the node's podPidsLimit, on the pod's cgroup)`,
      observed:
        forks === undefined || !Number.isFinite(forks)
          ? "(not reported)"
          : `a fork was refused after ${forks} more processes (pids.max in the container: max; the pod's pause process and the task's shells count too)`,
      ok: forks === undefined || !Number.isFinite(forks) ? null : forks < template.resources.pids,
    });
  } else if (options.pidsLimitApplied === false && observed.pidsMax === "max") {
    walls.push({
      wall: "pidsMax",
      declared: `${template.resources.pids} (set on every task by the launcher; @pulumi/docker cannot express it)`,
      observed: "max",
      ok: null,
    });
  } else {
    add(
      "pidsMax",
      String(template.resources.pids),
      observed.pidsMax,
      observed.pidsMax === String(template.resources.pids),
    );
  }
  const tmpKb = observed.tmpSizeKb === undefined ? undefined : Number(observed.tmpSizeKb);
  add(
    "tmpSize",
    `${template.resources.tmpfsMb * 1024} KiB or less`,
    observed.tmpSizeKb === undefined ? undefined : `${observed.tmpSizeKb} KiB`,
    tmpKb !== undefined && Number.isFinite(tmpKb) && tmpKb > 0 && tmpKb <= template.resources.tmpfsMb * 1024,
  );
  add("rootReadOnly", "denied", observed.rootWrite, denied(observed.rootWrite));
  add("tmpWritable", "allowed", observed.tmpWrite, observed.tmpWrite === "allowed");
  add("jobWritable", "allowed", observed.jobWrite, observed.jobWrite === "allowed");
  if (options.jobDisk !== undefined) judgeJobDisk(template, observed, options.jobDisk, gvisor, walls);
  add("mknod", "denied", observed.mknod, denied(observed.mknod));
  add("chroot", "denied", observed.chroot, denied(observed.chroot));
  add("ipLinkAdd", "denied", observed.ipLinkAdd, denied(observed.ipLinkAdd));
  // Without NET_RAW a raw ICMP socket is refused; the engine may still allow unprivileged ICMP echo on loopback
  // (ping_group_range), which reaches nothing. So ping is judged only when the template has egress.
  add("ping", "denied", observed.ping, template.egress.mode === "none" ? true : denied(observed.ping));
  const egressDeclared = template.egress.mode === "none" ? "denied" : "allowed via proxy";
  add(
    "egress",
    egressDeclared,
    observed.egress,
    template.egress.mode === "none" ? denied(observed.egress) : observed.egress === "allowed",
  );
  if (template.broker.length > 0) judgeBroker(observed, add, walls);
  const finished = observed.done === "1";
  return { walls, passed: finished && walls.every((w) => w.ok !== false) };
}

function safeDecode(mask: string): string[] | undefined {
  try {
    return decodeCapabilityMask(mask);
  } catch {
    return undefined;
  }
}

/** The broker's walls: what the probe's broker case observed (see brokerProbeLines). */
function judgeBroker(
  observed: Readonly<Record<string, string>>,
  add: (wall: string, declared: string, obs: string | undefined, ok: boolean | null) => void,
  walls: WallReport[],
): void {
  add("brokerCredentials", "absent", observed.brokerCredentials, observed.brokerCredentials === "absent");
  add("brokerUnknownRoute", "404", observed.brokerUnknownRoute, observed.brokerUnknownRoute === "404");
  if (observed.brokerOutsidePath === "every-path") {
    walls.push({
      wall: "brokerOutsidePath",
      declared: "403",
      observed: "not observable (the route admits every path)",
      ok: null,
    });
  } else add("brokerOutsidePath", "403", observed.brokerOutsidePath, observed.brokerOutsidePath === "403");
  add("brokerTraversal", "400", observed.brokerTraversal, observed.brokerTraversal === "400");
  add("brokerDirect", "denied", observed.brokerDirect, observed.brokerDirect === "denied");
}
