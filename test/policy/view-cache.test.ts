// The pack reads each resource into views once for all its rules (policy/pulumi/view-cache.ts). A reading may be
// reused only for the same resource with the same props and secret paths: anything else is read afresh, so a
// verdict never comes from another input.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { resourcePolicy } from "../../policy/pulumi/pack";
import { samePlainData, ViewCache } from "../../policy/pulumi/view-cache";
import { ALL_RULES } from "../../policy/rules/registry";
import { UNKNOWN, Unreadable } from "../../policy/workload";
import { DOCKER, safeContainer } from "./fixtures";

describe("samePlainData", () => {
  it("tells apart what JSON would merge: NaN and null, -0 and 0, a hole and undefined, undefined and absent", () => {
    expect(samePlainData(Number.NaN, Number.NaN)).toBe(true);
    expect(samePlainData(Number.NaN, null)).toBe(false);
    expect(samePlainData(-0, 0)).toBe(false);
    // biome-ignore lint/suspicious/noSparseArray: the hole is the case
    expect(samePlainData([1, , 3], [1, undefined, 3])).toBe(false);
    expect(samePlainData({ a: undefined }, {})).toBe(false);
    expect(samePlainData({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(true);
    expect(samePlainData(["1"], [1])).toBe(false);
    expect(samePlainData({ 0: "x" }, ["x"])).toBe(false);
    expect(samePlainData(UNKNOWN, UNKNOWN)).toBe(true);
    expect(samePlainData(UNKNOWN, "04da6b54-80e4-46f7-96ec-b56ff0331ba9")).toBe(false);
  });

  it("is false for anything but plain data, even compared with itself", () => {
    const marker = new Unreadable("it is nested too deep");
    expect(samePlainData(marker, marker)).toBe(false);
    expect(samePlainData({ x: new Date(0) }, { x: new Date(0) })).toBe(false);
    const f = () => 1;
    expect(samePlainData([f], [f])).toBe(false);
    const sym = { [Symbol("k")]: 1 };
    expect(samePlainData(sym, sym)).toBe(false);
    let deep: unknown = "leaf";
    for (let i = 0; i < 700; i++) deep = [deep];
    expect(samePlainData(deep, deep)).toBe(false);
  });

  it("agrees with a structural comparison on generated JSON values", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        expect(samePlainData(a, structuredClone(a))).toBe(true);
        if (JSON.stringify(a) !== JSON.stringify(b)) expect(samePlainData(a, b)).toBe(false);
      }),
    );
  });
});

describe("ViewCache", () => {
  it("reads once for the same resource and props, again for other props, another key or no URN", () => {
    const cache = new ViewCache<string>();
    let reads = 0;
    const read = (v: string) => () => `${v}#${++reads}`;
    expect(cache.get("u1", ["t", "n", []], { a: 1 }, read("a"))).toBe("a#1");
    expect(cache.get("u1", ["t", "n", []], { a: 1 }, read("a"))).toBe("a#1");
    expect(cache.get("u1", ["t", "n", []], { a: 2 }, read("b"))).toBe("b#2");
    expect(cache.get("u1", ["t", "n", ["envs[0]"]], { a: 2 }, read("c"))).toBe("c#3");
    expect(cache.get(undefined, ["t", "n", []], { a: 2 }, read("d"))).toBe("d#4");
    expect(cache.get(undefined, ["t", "n", []], { a: 2 }, read("e"))).toBe("e#5");
    cache.clear();
    expect(cache.get("u1", ["t", "n", ["envs[0]"]], { a: 2 }, read("f"))).toBe("f#6");
  });

  it("keeps no reading of props that are not plain data", () => {
    const cache = new ViewCache<number>();
    let reads = 0;
    const props = { x: new Unreadable("cut") };
    cache.get("u", [], props, () => ++reads);
    cache.get("u", [], props, () => ++reads);
    expect(reads).toBe(2);
  });
});

describe("the pack with the cache", () => {
  const ports = ALL_RULES.find((r) => r.id === "sandbox-disallow-exposed-ports");
  const urn = "urn:pulumi:dev::sandbox::docker:index/container:Container::task";
  const validate = (props: Record<string, unknown>) => {
    if (ports === undefined) throw new Error("the rule exists");
    const policy = resourcePolicy(ports);
    const found: string[] = [];
    const validation = policy.validateResource;
    if (typeof validation !== "function") throw new Error("one validation");
    void validation(
      {
        type: DOCKER,
        props,
        urn,
        name: "task",
        opts: {
          protect: false,
          ignoreChanges: [],
          aliases: [],
          customTimeouts: {},
          additionalSecretOutputs: [],
        },
        getConfig: <T>() => ({}) as T,
        notApplicable: () => {
          throw new Error("applies");
        },
        isType: () => false,
        asType: () => undefined,
        stackTags: new Map(),
      } as unknown as Parameters<typeof validation>[0],
      (m: string) => found.push(m),
    );
    return found;
  };

  it("judges the same URN afresh when its props change, either way", () => {
    const exposed = { ...safeContainer(), ports: [{ internal: 8080, external: 8080 }] };
    expect(validate(safeContainer())).toEqual([]);
    expect(validate(exposed).length).toBeGreaterThan(0);
    expect(validate(safeContainer())).toEqual([]);
    // The port number alone differs: still read afresh.
    expect(validate({ ...safeContainer(), ports: [{ internal: 9090 }] }).length).toBeGreaterThan(0);
  });
});
