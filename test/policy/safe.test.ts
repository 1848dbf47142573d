import { describe, expect, it } from "vitest";
import { CARRIERS, DOCKER, SERVICE, safeContainer, safePodSpec, safeService } from "./fixtures";
import { validate, violated } from "./harness";

describe("safe workloads pass every rule", () => {
  it("the hardened docker.Container", () => {
    const o = validate(DOCKER, safeContainer());
    expect(o.violations).toEqual([]);
    expect(o.notes).toEqual([]);
  });

  it.each(CARRIERS.map((c) => [c.type, c] as const))("%s", (_type, c) => {
    const o = validate(c.type, c.build(safePodSpec()));
    expect(o.violations).toEqual([]);
    expect(o.notes).toEqual([]);
  });

  it("a ClusterIP Service", () => {
    expect(violated(validate(SERVICE, safeService()))).toEqual([]);
  });

  it("an unrelated resource is not applicable to any resource rule", () => {
    const o = validate("random:index/randomId:RandomId", { byteLength: 8 });
    expect(o.violations).toEqual([]);
    expect(o.notApplicable.length).toBeGreaterThan(20);
  });
});
