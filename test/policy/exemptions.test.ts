/**
 * Exemptions work in the CrossGuard pack as in `scan`: the same config (`"<rule>": { "exemptions": [{ resource,
 * reason }] }`), the same matching (a URN, `<Kind>/<name>`, `*` patterns), and the same verdict: a violation on an
 * exempted resource is not reported by the pack (CrossGuard fixes a policy's level per call, so it is skipped, not
 * downgraded) and is listed as exempted, not failing, by `scan`. An exemption without a reason is a config error for
 * both: `scan` exits 2, and the Pulumi CLI refuses it against the schema the pack declares.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { packArgs } from "../../policy/pulumi/pack";
import { runOracle } from "../helpers/goOracle";
import { scan, scanJson, tempFiles } from "../scan/helpers";
import { copy, safeK8sContainer, safePodSpec } from "./fixtures";
import { engineRun } from "./harness";

const POD = "kubernetes:core/v1:Pod";
const RULE = "sandbox-disallow-privileged";

/** A privileged Pod's inputs: only `sandbox-disallow-privileged` (and escalation, which it implies) fail. */
function privilegedPod(name: string): Record<string, unknown> {
  const spec = copy(safePodSpec()) as { containers: Record<string, unknown>[] };
  const c = safeK8sContainer();
  c.securityContext = { ...(c.securityContext as object), privileged: true };
  spec.containers = [c];
  return { apiVersion: "v1", kind: "Pod", metadata: { name }, spec };
}

/** The URN the harness gives a resource (test/policy/harness.ts), which the preview below repeats. */
function urnOf(name: string): string {
  return `urn:pulumi:test::sandbox::${POD}::${name}`;
}

/** Whether the pack reports the rule on the resource, with the config. */
function packReports(name: string, config: Record<string, object>): boolean {
  const { outcome } = engineRun(POD, privilegedPod(name), { name, config });
  return outcome.violations.some((v) => v.policy === RULE);
}

/** Whether `scan` of the same resource as a preview fails the rule: reported, and not exempted. */
async function scanReports(
  name: string,
  config: Record<string, object>,
): Promise<{ fails: boolean; exempted: boolean }> {
  const urn = urnOf(name);
  const preview = {
    steps: [{ op: "create", urn, newState: { type: POD, urn, inputs: privilegedPod(name) } }],
  };
  const dir = tempFiles({ "p.json": JSON.stringify(preview), "c.json": JSON.stringify(config) });
  const { report } = await scanJson(["--config", "c.json", "p.json"], undefined, dir);
  const mine = report.findings.filter((f) => f.ruleId === RULE && !f.unchecked);
  expect(mine.length).toBeGreaterThan(0);
  return {
    fails: mine.some((f) => f.exemption === undefined),
    exempted: mine.some((f) => f.exemption !== undefined),
  };
}

const name = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/);

/** A pattern for resource `n`, and whether it names it. */
const pattern = (n: string) =>
  fc.constantFrom<[string, boolean]>(
    [urnOf(n), true],
    [`Pod/${n}`, true],
    ["Pod/*", true],
    ["*", true],
    [`urn:pulumi:test::sandbox::*::${n}`, true],
    [`*/${n}`, true],
    [`Pod/${n}x`, false],
    [`Deployment/${n}`, false],
    [`${n}`, false],
    [urnOf(`${n}-other`), false],
    [`urn:pulumi:prod::sandbox::*::${n}`, false],
  );

describe("exemptions in the pack and in scan", () => {
  it("give the same verdict for the same config, for every way of naming the resource", async () => {
    await fc.assert(
      fc.asyncProperty(
        name.chain((n) => fc.tuple(fc.constant(n), pattern(n))),
        async ([n, [resource, names]]) => {
          const config = { [RULE]: { exemptions: [{ resource, reason: "a debug pod; OPS-1" }] } };
          const pack = packReports(n, config);
          const scanned = await scanReports(n, config);
          expect(pack).toBe(!names);
          expect(scanned).toEqual({ fails: !names, exempted: names });
        },
      ),
      { numRuns: 40 },
    );
  }, 120_000);

  it("exempt only the rule they name", async () => {
    const config = {
      "sandbox-disallow-host-namespaces": { exemptions: [{ resource: "*", reason: "not this rule" }] },
    };
    expect(packReports("p", config)).toBe(true);
    expect(await scanReports("p", config)).toEqual({ fails: true, exempted: false });
  });

  it("never exempt without a reason: scan refuses the config, and so does the Pulumi CLI", async () => {
    for (const reason of [undefined, "", "   "]) {
      const exemption = reason === undefined ? { resource: "*" } : { resource: "*", reason };
      const config = { [RULE]: { exemptions: [exemption] } };
      const dir = tempFiles({ "c.json": JSON.stringify(config), "p.yaml": "" });
      const r = await scan(["--config", "c.json", "p.yaml"], undefined, dir);
      expect(r.code).toBe(2);
      expect(r.err).toContain("an exemption needs a reason, which the report prints");
      // The pack, handed such a config anyway (no CLI in between), exempts nothing: it fails closed.
      expect(packReports("p", config)).toBe(true);
    }
    const policies = packArgs().policies.map((p) => ({
      name: p.name,
      enforcementLevel: p.enforcementLevel,
      configSchema: p.configSchema,
    }));
    const cases = [
      { resource: "*" },
      { resource: "*", reason: "" },
      { resource: "*", reason: " " },
      { resource: "*", reason: "ok" },
    ].map((e) => ({ policies, config: JSON.stringify({ [RULE]: { exemptions: [e] } }) }));
    const answers = JSON.parse(runOracle("packconfig", JSON.stringify(cases))) as {
      validationErrors?: string[];
      error?: string;
    }[];
    expect(answers.map((a) => a.validationErrors ?? [])).toEqual([
      [`${RULE}: exemptions.0: reason is required`],
      [
        `${RULE}: exemptions.0.reason: String length must be greater than or equal to 1`,
        `${RULE}: exemptions.0.reason: Does not match pattern '\\S'`,
      ],
      [`${RULE}: exemptions.0.reason: Does not match pattern '\\S'`],
      [],
    ]);
  }, 120_000);

  it("reach the pack from the config scan prints, top-level exemptions moved under their rule", async () => {
    const raw = { exemptions: [{ rule: RULE, resource: "Pod/dbg", reason: "debugging; OPS-2" }] };
    const dir = tempFiles({ "c.json": JSON.stringify(raw) });
    const r = await scan(["--config", "c.json", "--print-pack-config"], undefined, dir);
    expect(r.code).toBe(0);
    const printed = JSON.parse(r.out) as Record<string, object>;
    expect(printed[RULE]).toEqual({
      enforcementLevel: "mandatory",
      exemptions: [{ resource: "Pod/dbg", reason: "debugging; OPS-2" }],
    });
    expect(packReports("dbg", printed)).toBe(false);
    expect(packReports("other", printed)).toBe(true);
  });
});
