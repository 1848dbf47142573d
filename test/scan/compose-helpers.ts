// In-memory Compose projects for the loader's tests: files under a fixed project folder, an environment, and the
// rules' verdict on each service.
import { join } from "node:path";
import { judge } from "../../policy/rules/registry";
import { type ComposeServices, loadComposeServices } from "../../policy/sources/compose/services";
import { DOCKER_CONTAINER_TYPE } from "../../policy/sources/pulumi/container";
import { adaptResource } from "../../policy/sources/subject";
import type { WorkloadView } from "../../policy/workload";

/** The folder the in-memory files live in (the oracle writes its temporary folder as ROOT: the same name). */
export const PROJECT = "/ROOT";

export interface Project {
  readonly files: Readonly<Record<string, string>>;
  readonly env?: Readonly<Record<string, string>>;
  readonly main?: string;
}

export function load(p: Project): ComposeServices {
  const main = p.main ?? "compose.yaml";
  const readFile = (abs: string): string => {
    const rel = abs.startsWith(`${PROJECT}/`) ? abs.slice(PROJECT.length + 1) : undefined;
    const text = rel === undefined ? undefined : p.files[rel];
    if (text === undefined) throw new Error(`ENOENT: ${abs}`);
    return text;
  };
  return loadComposeServices(join(PROJECT, main), p.files[main] ?? "", { readFile, env: p.env ?? {} });
}

/** The loaded services or the load error's message. */
export function loaded(p: Project): Record<string, Record<string, unknown>> {
  const r = load(p);
  if ("error" in r) throw new Error(r.error.message);
  return Object.fromEntries(r.services.map((s) => [s.name, s.props]));
}

export function view(props: Record<string, unknown>, name = "svc"): WorkloadView {
  const v = adaptResource(DOCKER_CONTAINER_TYPE, props, name);
  if (v === undefined || v.subject !== "workload") throw new Error("not a workload");
  return v;
}

/** Rule ids with a violation (not a "could not be checked" note), sorted. */
export function ruleIds(props: Record<string, unknown>): string[] {
  const ids = new Set<string>();
  for (const { rule, findings } of judge(view(props)))
    if (findings.some((f) => f.unchecked !== true)) ids.add(rule.id);
  return [...ids].sort();
}

/** Each service's violated rule ids, or `error: <message>`. */
export function verdicts(p: Project): Record<string, string[]> | string {
  const r = load(p);
  if ("error" in r) return `error: ${r.error.message}`;
  return Object.fromEntries(r.services.map((s) => [s.name, ruleIds(s.props)]));
}

/** A hardened service body (YAML lines, indented for a service) that passes every mandatory rule. */
export const HARDENED = [
  "image: sandbox-busybox:1",
  'user: "1000:1000"',
  "read_only: true",
  "cap_drop: [ALL]",
  'security_opt: ["no-new-privileges:true"]',
  "network_mode: none",
  "mem_limit: 512m",
  "cpus: 1",
];

export function service(name: string, extra: readonly string[] = [], base = HARDENED): string {
  const keys = new Set(extra.map((l) => l.slice(0, l.indexOf(":"))));
  const lines = [...base.filter((l) => !keys.has(l.slice(0, l.indexOf(":")))), ...extra];
  return [`  ${name}:`, ...lines.map((l) => `    ${l}`)].join("\n");
}

export function composeFile(...services: string[]): string {
  return `services:\n${services.join("\n")}\n`;
}
