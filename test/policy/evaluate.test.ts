/**
 * The one rule runner (policy/evaluate.ts) that the pack, the launcher's preflight and `scan` share: levels (rule
 * default < preset < configured, `disabled` not run), exemptions (an exempted violation keeps its level; nothing
 * that could not be checked is exempted), the notes a workload's unread parts give every rule, and the resource a
 * stack finding is about. The callers' own agreement is test/scan/same-verdict.test.ts and exemptions.test.ts.
 */
import { describe, expect, it } from "vitest";
import { type EvaluationConfig, evaluate, levelOf, renderFinding } from "../../policy/evaluate";
import { type AnyRule, defineRule, type EnforcementLevel, type Finding } from "../../policy/rules/types";
import { adaptResource } from "../../policy/sources/subject";
import { defineStackRule, type StackFinding, type StackResource } from "../../policy/stack/types";
import type { Subject, WorkloadView } from "../../policy/workload";
import { DOCKER, safeContainer } from "./fixtures";

const URN = "urn:pulumi:dev::sandbox::docker:index/container:Container::task";

/** A rule that reports what it is given: its findings, and the settings it ran with (in `seen`). */
function probeRule(
  id: string,
  findings: readonly Finding[],
  level: EnforcementLevel = "mandatory",
  psa: readonly string[] = [],
): { rule: AnyRule; seen: object[] } {
  const seen: object[] = [];
  const rule = defineRule<{ limit: number }>({
    id,
    description: "A test rule.",
    mission: false,
    enforcementLevel: level,
    severity: "high",
    crosswalk: { psa },
    subjects: ["workload"],
    defaults: { limit: 1 },
    remediationSteps: "None.",
    check(_s, config) {
      seen.push(config);
      return [...findings];
    },
  });
  return { rule, seen };
}

function workload(): WorkloadView {
  const view = adaptResource(DOCKER, safeContainer(), "task");
  if (view?.subject !== "workload") throw new Error("the fixture is a workload");
  return view;
}

const VIOLATION: Finding = { message: "it is bad", path: "privileged" };
const NOTE: Finding = { message: "x could not be checked", unchecked: true };

describe("levels", () => {
  const { rule } = probeRule("test-rule", [VIOLATION], "advisory", ["privileged"]);
  it("run from the rule's default, under a preset, under a configured level; `levels` wins over the entry", () => {
    expect(levelOf(rule, {})).toBe("advisory");
    expect(levelOf(rule, { preset: "baseline" })).toBe("mandatory");
    expect(
      levelOf(rule, { preset: "baseline", rules: { "test-rule": { enforcementLevel: "advisory" } } }),
    ).toBe("advisory");
    expect(
      levelOf(rule, {
        preset: "baseline",
        rules: { "test-rule": { enforcementLevel: "advisory" } },
        levels: { "test-rule": "remediate" },
      }),
    ).toBe("remediate");
  });

  it("are what each finding carries, and a disabled rule does not run", () => {
    const probe = probeRule("test-rule", [VIOLATION]);
    const view = { view: workload() };
    expect(evaluate(view, [probe.rule], { preset: "sandbox" }).map((e) => e.level)).toEqual(["mandatory"]);
    expect(evaluate(view, [probe.rule], { levels: { "test-rule": "advisory" } }).map((e) => e.level)).toEqual(
      ["advisory"],
    );
    probe.seen.length = 0;
    expect(
      evaluate(view, [probe.rule], { rules: { "test-rule": { enforcementLevel: "disabled" } } }),
    ).toEqual([]);
    expect(probe.seen).toEqual([]);
  });
});

describe("settings", () => {
  it("are the rule's defaults overlaid with its entry, without the entry's level and exemptions", () => {
    const probe = probeRule("test-rule", []);
    evaluate({ view: workload() }, [probe.rule], {
      rules: {
        "test-rule": {
          enforcementLevel: "mandatory",
          exemptions: [{ resource: "*", reason: "r" }],
          limit: 3,
        },
      },
    });
    expect(probe.seen).toEqual([{ limit: 3 }]);
  });
});

describe("exemptions", () => {
  const probe = probeRule("test-rule", [VIOLATION, NOTE]);
  const run = (config: EvaluationConfig, named = true) =>
    evaluate({ view: workload(), ...(named ? { resource: URN } : {}) }, [probe.rule], config).map((e) => [
      e.finding.unchecked === true,
      e.level,
      e.exemption?.reason,
    ]);

  it("mark a covered violation with the exemption and keep its level; a note is never exempted", () => {
    const listed = { exemptions: [{ rule: "test-rule", resource: "Container/task", reason: "listed" }] };
    const entry = { rules: { "test-rule": { exemptions: [{ resource: URN, reason: "under the rule" }] } } };
    expect(run(listed)).toEqual([
      [false, "mandatory", "listed"],
      [true, "mandatory", undefined],
    ]);
    expect(run(entry)).toEqual([
      [false, "mandatory", "under the rule"],
      [true, "mandatory", undefined],
    ]);
  });

  it("cover only their rule and their resource, need a reason, and need the resource to be named", () => {
    const none = [
      [false, "mandatory", undefined],
      [true, "mandatory", undefined],
    ];
    expect(run({ exemptions: [{ rule: "other-rule", resource: "*", reason: "r" }] })).toEqual(none);
    expect(run({ exemptions: [{ rule: "test-rule", resource: "Container/other", reason: "r" }] })).toEqual(
      none,
    );
    expect(run({ rules: { "test-rule": { exemptions: [{ resource: "*", reason: " " }] } } })).toEqual(none);
    expect(run({ exemptions: [{ rule: "test-rule", resource: "*", reason: "r" }] }, false)).toEqual(none);
  });
});

describe("what could not be checked", () => {
  it("gives every rule that judges the workload a note per unread part, after the rule's own findings", () => {
    const a = probeRule("rule-a", [VIOLATION]).rule;
    const b = probeRule("rule-b", []).rule;
    const view: Subject = { ...workload(), unknownParts: ["spec.containers"] };
    const found = evaluate({ view }, [a, b]).map((e) => [
      e.rule.id,
      renderFinding(e.finding),
      e.finding.unchecked,
    ]);
    expect(found).toEqual([
      ["rule-a", "it is bad [privileged]", undefined],
      ["rule-a", "spec.containers could not be checked", true],
      ["rule-b", "spec.containers could not be checked", true],
    ]);
  });

  it("runs no rule on a view it does not judge", () => {
    const service = adaptResource("kubernetes:core/v1:Service", { spec: { type: "ClusterIP" } }, "svc");
    if (service === undefined) throw new Error("a Service has a view");
    expect(evaluate({ view: service }, [probeRule("test-rule", [VIOLATION]).rule])).toEqual([]);
  });
});

describe("stack rules", () => {
  const resource = (name: string): StackResource => ({
    type: DOCKER,
    name,
    urn: `urn:pulumi:dev::sandbox::${DOCKER}::${name}`,
    props: {},
    subject: undefined,
    additionalSecretOutputs: [],
    propertyDependencies: {},
  });
  const stack = [resource("a"), resource("b")];
  const findings: StackFinding[] = [
    { message: "about b", urn: stack[1]?.urn ?? "" },
    { message: "about the stack" },
  ];
  const rule = defineStackRule({
    id: "test-stack-rule",
    description: "A test stack rule.",
    mission: false,
    enforcementLevel: "mandatory",
    severity: "high",
    crosswalk: {},
    defaults: {},
    remediationSteps: "None.",
    check: () => findings,
  });

  it("name the resource the finding names, else the stack's first, and exempt on it", () => {
    const config = { exemptions: [{ rule: "test-stack-rule", resource: "Container/a", reason: "first" }] };
    expect(evaluate({ stack }, [rule], config).map((e) => [e.resource, e.exemption?.reason])).toEqual([
      [stack[1]?.urn, undefined],
      [stack[0]?.urn, "first"],
    ]);
  });
});
