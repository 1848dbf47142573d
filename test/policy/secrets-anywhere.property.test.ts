/**
 * Class 4 of "the rules read what the engine reads": a Pulumi secret in any field a rule reads hides the value the
 * wall depends on, so the rule fails closed, in the pack (remediation then validation, as the engine runs them)
 * and in `scan` of a preview (`[secret]`) or a stack export (ciphertext, or plaintext shown), with the same rules.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { pathSegments } from "../../policy/rules/helpers";
import { ALL_RULES } from "../../policy/rules/registry";
import { DECLARED_ARGS, scanJson, tempFiles } from "../scan/helpers";
import { copy, DOCKER, safeContainer, safePodSpec } from "./fixtures";
import { engineRun, secret, validate } from "./harness";

const POD = "kubernetes:core/v1:Pod";
const MANDATORY = new Set(ALL_RULES.filter((r) => r.enforcementLevel !== "advisory").map((r) => r.id));

/** A field a rule reads, its safe value, and the rule that must fail closed when it is a secret. */
interface Case {
  readonly type: string;
  readonly path: string;
  readonly safe: unknown;
  readonly rule: string;
}

const CASES: readonly Case[] = [
  { type: DOCKER, path: "privileged", safe: false, rule: "sandbox-disallow-privileged" },
  { type: DOCKER, path: "networkMode", safe: "none", rule: "sandbox-disallow-host-namespaces" },
  { type: DOCKER, path: "pidMode", safe: "private", rule: "sandbox-disallow-host-namespaces" },
  { type: DOCKER, path: "user", safe: "1000:1000", rule: "sandbox-require-non-root" },
  {
    type: DOCKER,
    path: "securityOpts[0]",
    safe: "no-new-privileges:true",
    rule: "sandbox-disallow-privilege-escalation",
  },
  {
    type: DOCKER,
    path: "securityOpts",
    safe: ["no-new-privileges:true"],
    rule: "sandbox-disallow-privilege-escalation",
  },
  {
    type: DOCKER,
    path: "mounts[0].source",
    safe: "/var/lib/sandbox-projects/demo/jobs/1",
    rule: "sandbox-disallow-runtime-socket",
  },
  { type: DOCKER, path: "capabilities.drops", safe: ["ALL"], rule: "sandbox-require-drop-net-admin" },
  { type: DOCKER, path: "capabilities.drops[0]", safe: "ALL", rule: "sandbox-require-drop-net-admin" },
  { type: DOCKER, path: "memory", safe: 512, rule: "sandbox-require-resource-limits" },
  {
    type: POD,
    path: "spec.containers[0].securityContext.privileged",
    safe: false,
    rule: "sandbox-disallow-privileged",
  },
  {
    type: POD,
    path: "spec.containers[0].securityContext.runAsUser",
    safe: 1000,
    rule: "sandbox-require-non-root",
  },
  { type: POD, path: "spec.hostNetwork", safe: false, rule: "sandbox-disallow-host-namespaces" },
  { type: POD, path: "spec.hostPID", safe: false, rule: "sandbox-disallow-host-namespaces" },
  {
    type: POD,
    path: "spec.containers[0].securityContext.allowPrivilegeEscalation",
    safe: false,
    rule: "sandbox-disallow-privilege-escalation",
  },
  {
    type: POD,
    path: "spec.containers[0].securityContext.capabilities.drop",
    safe: ["ALL"],
    rule: "sandbox-require-drop-net-admin",
  },
  {
    type: POD,
    path: "spec.containers[0].resources.limits.memory",
    safe: "512Mi",
    rule: "sandbox-require-resource-limits",
  },
];

function safeProps(type: string): Record<string, unknown> {
  return type === DOCKER
    ? safeContainer()
    : { apiVersion: "v1", kind: "Pod", metadata: { name: "task" }, spec: copy(safePodSpec()) };
}

function setAt(root: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const out = copy(root);
  const segs = pathSegments(path);
  let cur = out as Record<string | number, unknown>;
  for (const s of segs.slice(0, -1)) cur = cur[s] as Record<string | number, unknown>;
  cur[segs.at(-1) as string | number] = value;
  return out;
}

/** How a secret holding `value` is written in each input. */
const WIRE = {
  preview: () => "[secret]",
  cipher: () => ({
    "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
    ciphertext: "v1:abc",
  }),
  plain: (v: unknown) => ({
    "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
    plaintext: JSON.stringify(v),
  }),
} as const;

async function scanViolations(c: Case, form: keyof typeof WIRE, value: unknown): Promise<string[]> {
  const inputs = setAt(safeProps(c.type), c.path, WIRE[form](value));
  const urn = `urn:pulumi:dev::p::${c.type}::t`;
  const doc =
    form === "preview"
      ? { steps: [{ op: "create", urn, newState: { urn, type: c.type, inputs } }] }
      : { version: 3, deployment: { resources: [{ urn, type: c.type, custom: true, inputs }] } };
  const dir = tempFiles({ "in.json": JSON.stringify(doc) });
  const { report } = await scanJson(["in.json", ...DECLARED_ARGS], undefined, dir);
  return [
    ...new Set(report.findings.filter((f) => !f.unchecked && MANDATORY.has(f.ruleId)).map((f) => f.ruleId)),
  ].sort();
}

function packViolations(c: Case, value: unknown): string[] {
  const props = setAt(safeProps(c.type), c.path, secret(value));
  const { outcome } = engineRun(c.type, props, { name: "t" });
  return [...new Set(outcome.violations.map((v) => v.policy).filter((p) => MANDATORY.has(p)))].sort();
}

describe("a Pulumi secret in a field a rule reads fails that rule closed", () => {
  it("the safe fixtures pass as plain values (so every failure below comes from the secret)", () => {
    for (const type of [DOCKER, POD]) {
      const o = validate(type, safeProps(type), { name: "t" });
      expect(o.violations.filter((v) => MANDATORY.has(v.policy))).toEqual([]);
    }
  });

  it.each(CASES)("$type $path", async (c) => {
    const pack = packViolations(c, c.safe);
    expect(pack).toContain(c.rule);
    for (const form of ["preview", "cipher", "plain"] as const) {
      const scan = await scanViolations(c, form, c.safe);
      expect(scan, form).toContain(c.rule);
      expect(scan, `${form}: the pack and scan agree`).toEqual(pack);
    }
  });

  it("whatever value the secret holds, safe or not, the verdict is the same", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...CASES),
        fc.oneof(
          fc.boolean(),
          fc.integer({ min: 0, max: 70000 }),
          fc.constantFrom("host", "0", "ALL", "/", "none"),
        ),
        fc.constantFrom("preview", "cipher", "plain"),
        async (c, value, form) => {
          expect(await scanViolations(c, form as keyof typeof WIRE, value)).toContain(c.rule);
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe("a secret in the environment stays the secret-env rule's", () => {
  it.each([
    [DOCKER, "envs[1]", "TOKEN=abc"],
    [POD, "spec.containers[0].env[0].value", "abc"],
  ])("%s %s", async (type, path, value) => {
    const c: Case = { type, path, safe: value, rule: "sandbox-disallow-secret-env" };
    expect(packViolations(c, value)).toEqual(["sandbox-disallow-secret-env"]);
    for (const form of ["preview", "cipher", "plain"] as const)
      expect(await scanViolations(c, form, value), form).toEqual(["sandbox-disallow-secret-env"]);
  });
});
