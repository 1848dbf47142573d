/**
 * Conformance of the docker.Container input table with the provider's schema as the installed SDK spells it
 * (@pulumi/docker's `ContainerArgs`): every input has a verdict; every verdict names an input and rules that exist;
 * each judged input's hostile value is refused by one of its rules; each refused input fails closed when set.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ALL_RULES } from "../../../../policy/rules/registry";
import { DOCKER_CONTAINER_VERDICTS } from "../../../../policy/sources/pulumi/docker-container";
import { ALL_STACK_RULES } from "../../../../policy/stack/registry";
import { failing } from "./container-fixture";

/** The inputs of `ContainerArgs` in the installed SDK's declarations. */
function containerArgs(): string[] {
  const d = readFileSync(
    join(__dirname, "..", "..", "..", "..", "node_modules", "@pulumi", "docker", "container.d.ts"),
    "utf8",
  );
  const start = d.indexOf("export interface ContainerArgs {");
  const body = d.slice(start, d.indexOf("\n}", start));
  return [...body.matchAll(/^ {4}(?:readonly )?([A-Za-z]+)\??:/gm)].map((m) => m[1] as string);
}

const inputs = containerArgs();
const entries = Object.entries(DOCKER_CONTAINER_VERDICTS);

describe("the docker.Container input table", () => {
  it("gives every input of ContainerArgs a verdict and names only its inputs and rules that exist", () => {
    expect(inputs.length).toBeGreaterThan(60);
    expect(inputs.filter((k) => !Object.hasOwn(DOCKER_CONTAINER_VERDICTS, k))).toEqual([]);
    expect(entries.map(([k]) => k).filter((k) => !inputs.includes(k))).toEqual([]);
    const ids = new Set([...ALL_RULES, ...ALL_STACK_RULES].map((r) => r.id));
    expect(entries.flatMap(([, v]) => (v.v === "judged" ? v.rules.filter((r) => !ids.has(r)) : []))).toEqual(
      [],
    );
  });

  it("passes the hardened container", () => {
    expect(failing({})).toEqual([]);
  });

  it.each(entries.filter(([, v]) => v.v === "judged"))(
    "%s: a rule it names refuses its hostile value",
    (k, v) => {
      if (v.v !== "judged") return;
      expect(
        failing(v.hostile as Record<string, unknown>, v.config).filter((r) => v.rules.includes(r)),
        k,
      ).not.toEqual([]);
      if (v.control !== undefined)
        expect(
          failing(v.control as Record<string, unknown>, v.config).filter((r) => v.rules.includes(r)),
        ).toEqual([]);
    },
  );

  it.each([
    ["cgroupParent", "/", ""],
    ["logDriver", "syslog", "json-file"],
    ["ulimits", [{ name: "rtprio", soft: 99, hard: 99 }], [{ name: "nofile", soft: 1024, hard: 1024 }]],
  ] as const)("%s: refused when set, passed when harmless", (k, set, harmless) => {
    expect(failing({ [k]: set })).toContain("sandbox-disallow-unjudged-fields");
    expect(failing({ [k]: harmless })).not.toContain("sandbox-disallow-unjudged-fields");
  });

  it("has a sample for every refused input above", () => {
    expect(
      entries
        .filter(([, v]) => v.v === "refused")
        .map(([k]) => k)
        .sort(),
    ).toEqual(["cgroupParent", "logDriver", "ulimits"]);
  });
});
