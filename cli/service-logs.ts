/**
 * `sandbox logs <stack> proxy|broker [--template <t>] [--since <when>]`: what the project's egress proxy decided and
 * what its secrets broker answered, line by line, each decision with its reason. On Docker each template has its own
 * proxy and broker (`<project>-proxy-<template>`); on Kubernetes the project has one of each, in its namespace. A line
 * the unit wrote that is not a decision or a call (its start-up) is shown as it is. Reads only; exit 0, 1 when the
 * engine or the cluster cannot be read, 2 for bad arguments.
 */
import type Dockerode from "dockerode";
import {
  type BrokerCall,
  decisionReason,
  LABELS,
  type ProxyDecision,
  parseBrokerLog,
  parseDecisionLog,
  proxyListeners,
  type ResolvedProject,
  SpecError,
} from "../components/model";
import { demuxLogs } from "../runtime/docker/client";
import { parseSince } from "./ledger";
import { type Io, Reporter } from "./output";

/** The units `logs` reads. */
export const LOG_UNITS = ["proxy", "broker"] as const;
export type LogUnit = (typeof LOG_UNITS)[number];

const USAGE =
  "usage: sandbox logs <stack> proxy|broker [--template <name>] [--since <30m|12h|7d|ISO date>] [--json] (`sandbox logs --help`)";

/** One line of a unit's log: a decision or a call when it reads as one, else the text as written. */
export interface LogEntry {
  readonly template: string;
  readonly decision?: ProxyDecision & { readonly reason: string };
  readonly call?: BrokerCall;
  readonly text?: string;
}

/** A unit's log, as the engine or the cluster gives it: stdout and stderr text of one template's unit. */
export interface UnitLog {
  readonly template: string;
  readonly text: string;
}

/** Reads a unit's lines into entries; a proxy decision gets the reason its template's allowlist gives. */
export function logEntries(project: ResolvedProject, unit: LogUnit, logs: readonly UnitLog[]): LogEntry[] {
  const listeners = proxyListeners(project);
  const out: LogEntry[] = [];
  for (const log of logs) {
    for (const line of log.text.split("\n")) {
      if (line.trim() === "") continue;
      if (unit === "proxy") {
        const [d] = parseDecisionLog(line);
        if (d !== undefined) {
          // The listener names the template whose allowlist applied (one proxy serves all on Kubernetes).
          const l = listeners.find((x) => x.port === d.listener);
          const template = l?.template ?? log.template;
          const allow = l?.allow ?? project.spec.templates[template]?.egress.allow ?? [];
          out.push({ template, decision: { ...d, reason: decisionReason(d, allow) } });
          continue;
        }
      } else {
        const [c] = parseBrokerLog(line);
        if (c !== undefined) {
          out.push({ template: log.template, call: c });
          continue;
        }
      }
      out.push({ template: log.template, text: line });
    }
  }
  return out;
}

function entryText(e: LogEntry): string {
  const when = (t: number) => new Date(t * 1000).toISOString();
  if (e.decision !== undefined) {
    const d = e.decision;
    return `${when(d.time)} [${e.template}] ${d.decision} ${d.method} ${d.host}:${d.port} ${d.status} (${d.reason})`;
  }
  if (e.call !== undefined) {
    const c = e.call;
    return `${when(c.time)} [${e.template}] ${c.route} ${c.method} ${c.path} ${c.status} ${c.ms} ms`;
  }
  return `[${e.template}] ${e.text ?? ""}`;
}

/** The Docker units of `role` of a project, by template (labels), with their logs since `since` (ms). */
export async function dockerUnitLogs(
  docker: Dockerode,
  project: string,
  role: LogUnit,
  since: number | undefined,
): Promise<UnitLog[]> {
  const found = await docker.listContainers({
    all: true,
    filters: { label: [`${LABELS.project}=${project}`, `${LABELS.role}=${role}`] },
  });
  const logs: UnitLog[] = [];
  for (const c of found.sort((a, b) => (a.Names[0] ?? "").localeCompare(b.Names[0] ?? ""))) {
    const raw = (await docker.getContainer(c.Id).logs({
      stdout: true,
      stderr: true,
      ...(since === undefined ? {} : { since: Math.floor(since / 1000) }),
    })) as Buffer;
    const { stdout, stderr } = demuxLogs(raw, Number.POSITIVE_INFINITY);
    logs.push({ template: c.Labels[LABELS.template] ?? "-", text: `${stderr}${stdout}` });
  }
  return logs;
}

export interface LogsContext {
  readonly io: Io;
  readonly json: boolean;
  /** Reads the units' logs of the project (Docker or Kubernetes), or throws what could not be read. */
  readonly read: (project: ResolvedProject, unit: LogUnit, since: number | undefined) => Promise<UnitLog[]>;
}

/** Runs `logs` on a loaded project; `rest` is what follows the stack name. */
export async function runLogsVerb(
  stack: string,
  project: ResolvedProject,
  rest: readonly string[],
  c: LogsContext,
): Promise<number> {
  const rep = new Reporter(c.io, c.json, false);
  const fail = (message: string, exitCode = 2) =>
    rep.failure({
      verb: "logs",
      stack,
      ok: false,
      exitCode,
      error: { kind: exitCode === 2 ? "bad-input" : "engine", message },
    });
  const [unit, ...flags] = rest;
  if (unit === undefined || !(LOG_UNITS as readonly string[]).includes(unit)) {
    return fail(`logs: name the unit, proxy or broker (got ${JSON.stringify(unit ?? "")}); ${USAGE}`);
  }
  let template: string | undefined;
  let since: number | undefined;
  for (let i = 0; i < flags.length; i += 2) {
    const [flag, value] = [flags[i], flags[i + 1]];
    if ((flag !== "--template" && flag !== "--since") || value === undefined)
      return fail(
        `logs: unexpected ${JSON.stringify(flag)}${value === undefined ? " (without a value)" : ""}; ${USAGE}`,
      );
    if (flag === "--template") {
      if (project.spec.templates[value] === undefined) {
        const names = Object.keys(project.spec.templates).sort().join(", ");
        return fail(
          `logs: --template ${JSON.stringify(value)} is not one of stack ${stack}'s templates (${names})`,
        );
      }
      template = value;
    } else {
      try {
        since = parseSince(value);
      } catch (e) {
        return fail(`logs: ${(e as Error).message}`);
      }
    }
  }
  const role = unit as LogUnit;
  const uses = Object.entries(project.spec.templates).filter(([, t]) =>
    role === "proxy" ? t.egress.mode === "proxy" : (t.broker ?? []).length > 0,
  );
  let logs: UnitLog[];
  try {
    logs = await c.read(project, role, since);
  } catch (e) {
    return fail(`logs ${stack} ${role}: ${e instanceof Error ? e.message : String(e)}`, 1);
  }
  const entries = logEntries(project, role, logs).filter(
    (e) => template === undefined || e.template === template,
  );
  const none =
    logs.length > 0
      ? `no ${role} lines${since === undefined ? "" : " since then"}${template === undefined ? "" : ` for template ${template}`}`
      : uses.length === 0
        ? `stack ${stack} has no ${role}: no template ${role === "proxy" ? "sends egress through the proxy" : "names a broker route"}`
        : `no ${role} of project ${project.spec.name} runs: deploy the stack (\`up\`) first`;
  return rep.result(
    { verb: "logs", stack, ok: true, exitCode: 0, project: project.spec.name, unit: role, entries },
    entries.length > 0 ? entries.map(entryText).join("\n") : none,
  );
}

/** The Kubernetes units of `role` of a project: its pods in the project's namespace, by label. */
export async function kubeUnitLogs(
  target: { kubeconfig?: string; context?: string },
  project: string,
  role: LogUnit,
  since: number | undefined,
): Promise<UnitLog[]> {
  const { kubeApis } = await import("../runtime/kubernetes/api.js");
  const { unitLogTexts } = await import("../runtime/kubernetes/unit-logs.js");
  const texts = await unitLogTexts(await kubeApis(target), project, role, since);
  return texts.map((text) => ({ template: "-", text }));
}

/** `sandbox logs <stack> …` from the front: loads the stack and reads its units where the stack runs. */
export async function logsCommand(
  stack: string | undefined,
  rest: readonly string[],
  c: {
    readonly io: Io;
    readonly json: boolean;
    readonly load: (stack: string) => ResolvedProject;
    readonly kube: (stack: string) => { kubeconfig?: string; context?: string };
  },
): Promise<number> {
  const rep = new Reporter(c.io, c.json, false);
  if (stack === undefined)
    return rep.failure({
      verb: "logs",
      stack: "",
      ok: false,
      exitCode: 2,
      error: { kind: "bad-input", message: USAGE },
    });
  let project: ResolvedProject;
  try {
    project = c.load(stack);
  } catch (e) {
    if (!(e instanceof SpecError)) throw e;
    return rep.failure({
      verb: "logs",
      stack,
      ok: false,
      exitCode: 2,
      error: { kind: "bad-input", message: e.message },
    });
  }
  const read: LogsContext["read"] =
    project.spec.backend === "kubernetes"
      ? (p, unit, since) => kubeUnitLogs(c.kube(stack), p.spec.name, unit, since)
      : async (p, unit, since) => {
          const { dockerEngineProblem } = await import("./engine-host.js");
          const problem = await dockerEngineProblem();
          if (problem !== undefined) throw new Error(problem);
          const { dockerClient } = await import("../runtime/docker/client.js");
          return dockerUnitLogs(dockerClient(), p.spec.name, unit, since);
        };
  return runLogsVerb(stack, project, rest, { io: c.io, json: c.json, read });
}
