import { describe, expect, it } from "vitest";
import { carrier, copy, DOCKER, first, safeContainer, safePodSpec, sc } from "./fixtures";
import { UNKNOWN_WIRE, validate, violated } from "./harness";

type Obj = Record<string, unknown>;

/** Preview unknowns in the fields each rule reads: no crash, no violation, an advisory note instead. */
const DOCKER_UNKNOWNS: [string, (p: Obj) => void][] = [
  ["capabilities", (p) => (p.capabilities = UNKNOWN_WIRE)],
  ["capabilities.drops", (p) => (p.capabilities = { drops: UNKNOWN_WIRE })],
  ["one drop entry", (p) => (p.capabilities = { drops: [UNKNOWN_WIRE] })],
  ["securityOpts", (p) => (p.securityOpts = UNKNOWN_WIRE)],
  ["one securityOpts entry", (p) => (p.securityOpts = [UNKNOWN_WIRE])],
  ["user", (p) => (p.user = UNKNOWN_WIRE)],
  ["readOnly", (p) => (p.readOnly = UNKNOWN_WIRE)],
  ["memory", (p) => (p.memory = UNKNOWN_WIRE)],
  ["cpus", (p) => (p.cpus = UNKNOWN_WIRE)],
  ["envs", (p) => (p.envs = UNKNOWN_WIRE)],
  ["one env entry", (p) => (p.envs = ["A=1", UNKNOWN_WIRE])],
  ["mounts", (p) => (p.mounts = UNKNOWN_WIRE)],
  ["a mount source", (p) => (p.mounts = [{ type: "bind", source: UNKNOWN_WIRE, target: "/job" }])],
  ["ports", (p) => (p.ports = UNKNOWN_WIRE)],
  ["networkMode", (p) => (p.networkMode = UNKNOWN_WIRE)],
  ["restart", (p) => (p.restart = UNKNOWN_WIRE)],
  ["privileged", (p) => (p.privileged = UNKNOWN_WIRE)],
  ["sysctls", (p) => (p.sysctls = UNKNOWN_WIRE)],
];

describe("docker.Container with preview unknowns", () => {
  it.each(DOCKER_UNKNOWNS)("%s", (_what, change) => {
    const p = copy(safeContainer());
    change(p);
    const o = validate(DOCKER, p);
    expect(o.violations).toEqual([]);
    expect(o.notes.length).toBeGreaterThan(0);
    for (const n of o.notes) expect(n.message).toMatch(/^not checked because values are not known yet: /);
  });

  it("a known violation is still reported next to an unknown", () => {
    const p = copy(safeContainer());
    p.privileged = true;
    p.user = UNKNOWN_WIRE;
    const o = validate(DOCKER, p);
    expect(violated(o)).toEqual(["sandbox-disallow-privilege-escalation", "sandbox-disallow-privileged"]);
    expect(o.notes.map((n) => n.policy)).toEqual(["sandbox-require-non-root"]);
  });
});

const K8S_UNKNOWNS: [string, (s: Obj) => void][] = [
  ["the containers list", (s) => (s.containers = UNKNOWN_WIRE)],
  ["a container securityContext", (s) => (first(s).securityContext = UNKNOWN_WIRE)],
  ["capabilities.drop", (s) => (sc(first(s)).capabilities = { drop: UNKNOWN_WIRE })],
  ["runAsUser", (s) => Object.assign(sc(first(s)), { runAsUser: UNKNOWN_WIRE, runAsNonRoot: undefined })],
  ["limits.memory", (s) => (first(s).resources = { limits: { cpu: "1", memory: UNKNOWN_WIRE } })],
  ["env", (s) => (first(s).env = UNKNOWN_WIRE)],
  ["an env value", (s) => (first(s).env = [{ name: "X", value: UNKNOWN_WIRE }])],
  [
    "a hostPath path",
    (s) => {
      (s.volumes as Obj[]).push({ name: "h", hostPath: { path: UNKNOWN_WIRE } });
      (first(s).volumeMounts as Obj[]).push({ name: "h", mountPath: "/h", readOnly: true });
    },
  ],
  ["hostNetwork", (s) => (s.hostNetwork = UNKNOWN_WIRE)],
  ["automountServiceAccountToken", (s) => (s.automountServiceAccountToken = UNKNOWN_WIRE)],
  ["a hostPort", (s) => (first(s).ports = [{ containerPort: 80, hostPort: UNKNOWN_WIRE }])],
];

describe("Kubernetes Deployment with preview unknowns", () => {
  it.each(K8S_UNKNOWNS)("%s", (_what, change) => {
    const spec = copy(safePodSpec());
    change(spec);
    const o = validate("kubernetes:apps/v1:Deployment", carrier("Deployment").build(spec));
    expect(o.violations).toEqual([]);
    expect(o.notes.length).toBeGreaterThan(0);
  });

  it("a whole unknown spec is a note, never a crash", () => {
    const o = validate("kubernetes:apps/v1:Deployment", { metadata: { name: "x" }, spec: UNKNOWN_WIRE });
    expect(o.violations).toEqual([]);
    expect(noteMessages(o.notes)).toContain("spec.template.spec could not be checked");
  });
});

function noteMessages(notes: readonly { message: string }[]): string {
  return notes.map((n) => n.message).join("\n");
}
