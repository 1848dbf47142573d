/**
 * Every input that can carry a variable or a command line, built around one entry, and the verdict of
 * `sandbox-disallow-secret-env` on it: a Kubernetes Job (env, command/args), a `docker.Container` (envs, command),
 * an Engine API create body (Env, Cmd), and a Compose service (environment as a list and as a map, command as a list
 * and as a string), each read by the same adapters the pack and `scan` use.
 */

import { disallowSecretEnv } from "../../policy/rules/disallow-secret-env";
import { judge } from "../../policy/rules/registry";
import type { Finding } from "../../policy/rules/types";
import { composeServiceToContainerProps } from "../../policy/sources/compose/service-props";
import { adaptResource } from "../../policy/sources/subject";
import { carrier, copy, DOCKER, first, safeContainer, safePodSpec } from "./fixtures";

export interface Input {
  readonly carrier: string;
  readonly type: string;
  readonly props: unknown;
}

const JOB = carrier("Job");

function k8s(mutate: (c: Record<string, unknown>) => void): Input {
  const spec = copy(safePodSpec());
  mutate(first(spec));
  return { carrier: "kubernetes", type: JOB.type, props: JOB.build(spec) };
}

function docker(mutate: (p: Record<string, unknown>) => void): Input {
  const p = copy(safeContainer());
  mutate(p);
  return { carrier: "docker", type: DOCKER, props: p };
}

function engine(env: string[], cmd?: string[]): Input {
  return {
    carrier: "engine",
    type: "launch",
    props: { Image: "sandbox-busybox:1", Env: ["LANG=C.UTF-8", ...env], Cmd: cmd ?? ["sh", "/job/run.sh"] },
  };
}

function compose(service: Record<string, unknown>, carrierName: string): Input {
  return {
    carrier: carrierName,
    type: DOCKER,
    props: composeServiceToContainerProps("svc", { image: "sandbox-busybox:1", ...service }),
  };
}

/** `NAME=value` through every input. */
export function envInputs(name: string, value: string): Input[] {
  return [
    k8s((c) => {
      c.env = [
        { name: "LANG", value: "C.UTF-8" },
        { name, value },
      ];
    }),
    docker((p) => {
      p.envs = ["LANG=C.UTF-8", `${name}=${value}`];
    }),
    engine([`${name}=${value}`]),
    compose({ environment: ["LANG=C.UTF-8", `${name}=${value}`] }, "compose list"),
    compose({ environment: { LANG: "C.UTF-8", [name]: value } }, "compose map"),
  ];
}

/** A command line through every input (Kubernetes: the first word as `command`, the rest as `args`). */
export function argInputs(argv: readonly string[]): Input[] {
  const out = [
    k8s((c) => {
      c.command = argv.slice(0, 1);
      c.args = argv.slice(1);
    }),
    docker((p) => {
      p.command = [...argv];
    }),
    engine([], [...argv]),
    compose({ command: [...argv] }, "compose list"),
  ];
  // The string form is split on blanks (quotes kept together): only for words without blanks or quotes.
  if (argv.every((a) => /^[^\s"']+$/.test(a)))
    out.push(compose({ command: argv.join(" ") }, "compose string"));
  return out;
}

/** The rule's violations (not "could not be checked" notes) on an input. */
export function secretViolations(input: Input): Finding[] {
  const subject = adaptResource(input.type, input.props, "fixture");
  if (subject === undefined) throw new Error(`${input.carrier}: not adapted`);
  const [result] = judge(subject, [disallowSecretEnv]);
  return (result?.findings ?? []).filter((f) => f.unchecked !== true);
}

/** True when no message shows the value or a long piece of it. */
export function leaks(findings: readonly Finding[], value: string): boolean {
  const piece = value.length > 12 ? value.slice(0, 12) : value;
  return findings.some((f) => f.message.includes(value) || (piece.length >= 8 && f.message.includes(piece)));
}
