/** sandbox-disallow-unjudged-fields: refused fields and fields outside the claimed schema fail closed, by name. */
import { describe, expect, it } from "vitest";
import { disallowUnjudgedFields } from "../../../policy/rules/disallow-unjudged-fields";
import { resolveConfig } from "../../../policy/rules/types";
import { adaptLaunchSpec } from "../../../policy/sources/docker/read";

const BASE = {
  Image: "sandbox-busybox:1",
  User: "1000:1000",
  HostConfig: {
    CapDrop: ["ALL"],
    SecurityOpt: ["no-new-privileges"],
    ReadonlyRootfs: true,
    NetworkMode: "none",
  },
};

function check(body: unknown, config: object = {}) {
  const view = adaptLaunchSpec(body, "t");
  return disallowUnjudgedFields.check(view, resolveConfig(disallowUnjudgedFields, config));
}

describe("sandbox-disallow-unjudged-fields", () => {
  it("passes a body with only fields it judges or calls inert", () => {
    expect(check(BASE)).toEqual([]);
  });

  it("names a refused field where it is written, with why", () => {
    const f = check({ ...BASE, HostConfig: { ...BASE.HostConfig, CgroupParent: "/" } });
    expect(f.map((x) => x.path)).toEqual(["HostConfig.CgroupParent"]);
    expect(f[0]?.message).toMatch(/^HostConfig\.CgroupParent is not allowed: places the container's cgroup/);
  });

  it("names a key the claimed Engine API does not have, in any case the daemon folds", () => {
    const f = check({ ...BASE, hostconfig: { ...BASE.HostConfig, KernelMemoryTCP: 1 } });
    expect(f.map((x) => x.path)).toEqual(["HostConfig.KernelMemoryTCP"]);
    expect(f[0]?.message).toMatch(/not a field of Engine API 1\.\d+, the version the project claims/);
  });

  it("names fields under map keys and list entries with their keys", () => {
    const f = check({
      ...BASE,
      NetworkingConfig: { EndpointsConfig: { "task-net": { Aliases: ["sandbox-proxy"], MacAddress: "" } } },
    });
    expect(f.map((x) => x.path)).toEqual(['NetworkingConfig.EndpointsConfig["task-net"].Aliases']);
  });

  it("accepts a value as good as unset, and Go's zero value", () => {
    expect(
      check({ ...BASE, HostConfig: { ...BASE.HostConfig, OomScoreAdj: 500, OomKillDisable: false } }),
    ).toEqual([]);
    expect(check({ ...BASE, HostConfig: { ...BASE.HostConfig, Links: [], CgroupParent: "" } })).toEqual([]);
  });

  it("accepts a field the config names in allowFields, and only that one", () => {
    const body = { ...BASE, HostConfig: { ...BASE.HostConfig, Annotations: { a: "b" }, Links: ["x:y"] } };
    const f = check(body, { allowFields: ["HostConfig.Annotations"] });
    expect(f.map((x) => x.path)).toEqual(["HostConfig.Links"]);
  });
});
