import { describe, expect, it } from "vitest";
import { findUnreadable } from "../../../policy/sources/unreadable";
import { Unreadable } from "../../../policy/values";

/** A value nested `n` levels under `spec`: {spec: {a: {a: ... leaf}}}. */
function nested(n: number, leaf: unknown): unknown {
  let v = leaf;
  for (let i = 0; i < n; i++) v = { a: v };
  return { spec: v };
}

describe("findUnreadable", () => {
  it("finds nothing in plain data, and each unreadable or binary value with its path", () => {
    expect(findUnreadable({ spec: { containers: [{ name: "a", env: [{ value: "x" }] }] } })).toEqual([]);
    const secret = new Unreadable("it is a Pulumi secret");
    expect(
      findUnreadable({ spec: { containers: [{ env: [{ value: secret }] }], data: new Uint8Array([1]) } }),
    ).toEqual([
      { path: "spec.containers[0].env[0].value", reason: "it is a Pulumi secret" },
      { path: "spec.data", reason: "it is a binary value" },
    ]);
  });

  it("leaves out the skipped paths, and still finds the rest", () => {
    const secret = new Unreadable("it is a Pulumi secret");
    expect(findUnreadable({ status: { x: secret } }, "", new Set(["status"]))).toEqual([]);
    expect(findUnreadable({ status: { x: secret }, spec: secret }, "", new Set(["status"]))).toEqual([
      { path: "spec", reason: "it is a Pulumi secret" },
    ]);
  });

  it("reports a value nested past its depth cap, a plain text at the cap included", () => {
    expect(findUnreadable(nested(1990, "x"))).toEqual([]);
    const deep = findUnreadable(nested(1999, "x"));
    expect(deep).toHaveLength(1);
    expect(deep[0]?.reason).toBe("it is nested more than 2000 levels deep");
  });
});
