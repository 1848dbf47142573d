/**
 * Every kind has a verdict, in every format that carries it: objects of built-in kinds, of operators' kinds and of
 * kinds no verdict names (random groups and names), written as YAML (block or flow), JSON, a `pulumi preview --json`
 * and a `pulumi stack export`, get the same mandatory findings from `scan` as from the pack; an object fails closed
 * as unjudged exactly when its kind's verdict says so. Pod specs with keys outside the claimed PodSpec fail the same
 * way in every format.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { kindVerdict } from "../../policy/sources/kubernetes/kinds";
import { BUILTIN_KIND_VERDICTS } from "../../policy/sources/kubernetes/kinds-builtin";
import { OPERATOR_KINDS } from "../../policy/sources/kubernetes/kinds-operators";
import { POD_SPEC } from "../../policy/sources/kubernetes/schema.generated";
import { copy, safePodSpec } from "../policy/fixtures";
import { engineRun } from "../policy/harness";
import { mandatoryVerdict, scanMandatory } from "./helpers";

const UNJUDGED = "sandbox-disallow-unjudged-workloads";
const FIELDS = "sandbox-disallow-unjudged-fields";

function packOf(type: string, props: Record<string, unknown>, name: string): string[] {
  const { outcome } = engineRun(type, props, { name });
  return mandatoryVerdict(outcome.violations.map((v) => ({ rule: v.policy, message: v.message })));
}

/** The object in every format; each must give `want`. */
async function everyFormat(
  group: string,
  version: string,
  kind: string,
  props: Record<string, unknown>,
  want: string[],
): Promise<void> {
  const apiVersion = group === "core" ? version : `${group}/${version}`;
  const type = `kubernetes:${group}/${version}:${kind}`;
  const manifest = { apiVersion, kind, ...props };
  expect(await scanMandatory("m.yaml", stringify(manifest)), "YAML").toEqual(want);
  expect(
    await scanMandatory("f.yaml", stringify(manifest, { collectionStyle: "flow" })),
    "flow YAML",
  ).toEqual(want);
  expect(await scanMandatory("m.json", JSON.stringify(manifest)), "JSON").toEqual(want);
  const urn = `urn:pulumi:dev::p::${type}::obj`;
  const state = { urn, type, custom: true, inputs: props };
  expect(
    await scanMandatory("p.json", JSON.stringify({ steps: [{ op: "create", urn, newState: state }] })),
    "preview",
  ).toEqual(want);
  expect(
    await scanMandatory("s.json", JSON.stringify({ version: 3, deployment: { resources: [state] } })),
    "stack export",
  ).toEqual(want);
}

const known = [...Object.entries(BUILTIN_KIND_VERDICTS), ...Object.entries(OPERATOR_KINDS)].flatMap(
  ([group, kinds]) =>
    Object.entries(kinds)
      .filter(([, v]) => v.v !== "read")
      .map(([kind]) => [group, kind] as const),
);

const dns = fc.stringMatching(/^[a-z][a-z0-9]{1,8}$/);
const unknownKind = fc
  .tuple(
    dns,
    fc.constantFrom("example.com", "corp.internal", "io"),
    fc.stringMatching(/^[A-Z][A-Za-z0-9]{2,12}$/),
  )
  .map(([a, b, kind]) => [`${a}.${b}`, kind] as const);

describe("every kind's verdict, in every format", () => {
  it("scan and the pack agree, and an object fails closed exactly when its kind says so", async () => {
    let failed = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.constantFrom(...known), unknownKind),
        fc.constantFrom({}, { spec: { replicas: 2 } }, { data: { a: "b" } }),
        async ([group, kind], extra) => {
          const props = { metadata: { name: "obj", namespace: "agents" }, ...copy(extra) };
          const type = `kubernetes:${group}/v1:${kind}`;
          const pack = packOf(type, props, "obj");
          const verdict = kindVerdict({ group, version: "v1", kind });
          const fails = verdict === undefined || verdict.v === "unjudged";
          expect(
            pack.some((l) => l.startsWith(`${UNJUDGED}:`)),
            `${group}/${kind}`,
          ).toBe(fails);
          if (fails) failed++;
          await everyFormat(group, "v1", kind, props, pack);
        },
      ),
      { numRuns: 40 },
    );
    expect(failed).toBeGreaterThan(5);
  });

  it("a pod spec key outside the claimed PodSpec fails closed in every format, named where it is written", async () => {
    const fields = Object.keys((POD_SPEC as { fields: Record<string, unknown> }).fields);
    await fc.assert(
      fc.asyncProperty(
        fc
          .stringMatching(/^[a-zA-Z][a-zA-Z0-9]{2,14}$/)
          .filter((k) => !fields.includes(k) && !["__proto__", "constructor"].includes(k)),
        fc.constantFrom(true, 1, "x", { a: 1 }),
        async (key, value) => {
          const spec = { ...copy(safePodSpec()), [key]: value };
          const props = {
            metadata: { name: "obj", labels: { "sandbox.project": "demo", "sandbox.role": "task" } },
            spec,
          };
          const pack = packOf("kubernetes:core/v1:Pod", props, "obj");
          expect(pack.filter((l) => l.startsWith(`${FIELDS}:`)).join("\n")).toContain(`spec.${key}`);
          await everyFormat("core", "v1", "Pod", props, pack);
        },
      ),
      { numRuns: 15 },
    );
  });
});
