// A deep Pulumi value never overflows the stack in the pack, and what is too deep to read fails closed.
import { describe, expect, it } from "vitest";
import { copy, DOCKER, safeContainer, safePodSpec } from "./fixtures";
import { engineRun, secret } from "./harness";

function deep(levels: number, leaf: unknown): unknown {
  let v: unknown = leaf;
  for (let i = 0; i < levels; i++) v = { a: v };
  return v;
}

describe("deep values in the pack", () => {
  it("a 600-level value in a Pod (the SDK itself decodes props recursively; deeper fails there) is refused as unreadable, with no stack overflow", () => {
    const pod = {
      metadata: { name: "task", annotations: { x: "y" }, labels: { deep: "1" } },
      spec: { ...copy(safePodSpec()), nodeSelector: deep(600, "z") },
    };
    const { outcome } = engineRun("kubernetes:core/v1:Pod", pod, { name: "task" });
    expect(outcome.violations.map((v) => v.policy)).toContain("sandbox-require-readable-values");
    expect(outcome.violations.find((v) => v.policy === "sandbox-require-readable-values")?.message).toContain(
      "nested more than 512 levels deep",
    );
  });

  it("a deep secret inside a Docker container's labels is refused, not read as absent", () => {
    const c = { ...safeContainer(), labels: [{ label: "x", value: secret(deep(600, "v")) }] };
    const { outcome } = engineRun(DOCKER, c, { name: "t" });
    expect(outcome.violations.map((v) => v.policy)).toContain("sandbox-require-readable-values");
  });

  it("ordinary depth is read as before: the safe fixtures pass", () => {
    const { outcome } = engineRun(DOCKER, safeContainer(), { name: "t" });
    expect(outcome.violations.filter((v) => v.policy !== "sandbox-require-readonly-rootfs")).toEqual([]);
  });
});
