import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { ResourceValidationPolicy, StackValidationPolicy } from "@pulumi/policy";
import { describe, expect, it } from "vitest";
import { PACK_NAME, packArgs } from "../../policy/pulumi/pack";
import { ALL_RULES, selectRules } from "../../policy/rules/registry";
import { REDACTED_SECRET, taintCheck } from "../../policy/sources/lenient";
import { adaptResource } from "../../policy/sources/subject";
import { ALL_STACK_RULES } from "../../policy/stack/registry";
import { DOCKER, safeContainer } from "./fixtures";

const ID = /^sandbox-(?:disallow|require)-[a-z0-9-]+$/;
const LEVELS = ["advisory", "mandatory", "remediate", "disabled"];

describe("policy/index.ts", () => {
  it("registers every rule with a name, one-sentence description, level, tags and a valid configSchema", () => {
    // What policy/index.ts hands to PolicyPack; the pack it serves is loaded below, as the engine loads it.
    expect(PACK_NAME).toBe("sandbox-projects");
    const policies = packArgs().policies;
    expect(policies.map((p) => p.name)).toEqual([
      ...ALL_RULES.map((r) => r.id),
      ...ALL_STACK_RULES.map((r) => r.id),
    ]);
    for (const p of policies) {
      expect(p.name).toMatch(ID);
      expect(p.description).toMatch(/^[A-Z][^.]*\.$/);
      expect(LEVELS).toContain(p.enforcementLevel);
      expect(p.tags?.length ?? 0).toBeGreaterThan(0);
      expect(p.remediationSteps).toBeTruthy();
      if (p.configSchema !== undefined) {
        expect(Object.keys(p.configSchema.properties).length).toBeGreaterThan(0);
        expect(Object.keys(p.configSchema.properties)).not.toContain("enforcementLevel");
        for (const prop of Object.values(p.configSchema.properties)) expect(prop.type).toBeDefined();
      }
    }
    const mission = policies
      .filter((p) => p.tags?.includes("mission"))
      .map((p) => [p.name, p.enforcementLevel]);
    expect(mission).toEqual([
      ["sandbox-disallow-exposed-ports", "mandatory"],
      ["sandbox-disallow-runtime-socket", "mandatory"],
      ["sandbox-disallow-secret-env", "remediate"],
      ["sandbox-require-drop-net-admin", "mandatory"],
      ["sandbox-disallow-secret-flow", "mandatory"],
      // The secret wall's cross-document half: ConfigMaps and ServiceAccounts a pod reads.
      ["sandbox-disallow-linked-credentials", "mandatory"],
    ]);
    const resource = policies.filter((p): p is ResourceValidationPolicy => "validateResource" in p);
    const stack = policies.filter((p): p is StackValidationPolicy => "validateStack" in p);
    expect(resource).toHaveLength(ALL_RULES.length);
    expect(stack).toHaveLength(ALL_STACK_RULES.length);
    const remediable = [
      "sandbox-disallow-secret-env",
      "sandbox-require-drop-net-admin",
      "sandbox-disallow-privilege-escalation",
      "sandbox-require-readonly-rootfs",
    ];
    expect(resource.filter((p) => p.remediateResource !== undefined).map((p) => p.name)).toEqual(remediable);
    // Each remediation is its rule's own: the pack names no rule.
    expect(ALL_RULES.filter((r) => r.remediate !== undefined).map((r) => r.id)).toEqual(remediable);
  });
});

describe("the secret-env rule's remediation", () => {
  const rule = ALL_RULES.find((r) => r.id === "sandbox-disallow-secret-env");

  it("puts the marker in place of each Pulumi secret in the environment, in each front's spelling", () => {
    const docker = adaptResource(
      DOCKER,
      { ...safeContainer(), envs: ["LANG=C", "API=x"] },
      "task",
      taintCheck(["envs[1]"]),
    );
    const pod = adaptResource(
      "kubernetes:core/v1:Pod",
      {
        spec: {
          containers: [
            {
              name: "t",
              env: [
                { name: "LANG", value: "C" },
                { name: "API", value: "x" },
              ],
            },
          ],
        },
      },
      "pod",
      taintCheck(["spec.containers[0].env[1].value"]),
    );
    const clean = adaptResource(DOCKER, safeContainer(), "task");
    if (rule?.remediate === undefined || docker === undefined || pod === undefined || clean === undefined)
      throw new Error("the rule remediates, and each fixture has a view");
    expect(rule.remediate(docker, rule.defaults)).toEqual([
      { op: "set", path: ["envs", 1], value: `API=${REDACTED_SECRET}` },
    ]);
    expect(rule.remediate(pod, rule.defaults)).toEqual([
      { op: "set", path: ["spec", "containers", 0, "env", 1, "value"], value: REDACTED_SECRET },
    ]);
    expect(rule.remediate(clean, rule.defaults)).toEqual([]);
  });
});

describe("registry", () => {
  it("selects mission rules, by id, and refuses unknown ids", () => {
    expect(selectRules({ missionOnly: true }).map((r) => r.id)).toEqual([
      "sandbox-disallow-exposed-ports",
      "sandbox-disallow-runtime-socket",
      "sandbox-disallow-secret-env",
      "sandbox-require-drop-net-admin",
    ]);
    expect(selectRules({ exclude: ["sandbox-require-drop-all"] })).toHaveLength(ALL_RULES.length - 1);
    expect(() => selectRules({ only: ["sandbox-nope"] })).toThrow("unknown rule id(s): sandbox-nope");
  });

  it("ids are unique", () => {
    const ids = [...ALL_RULES, ...ALL_STACK_RULES].map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

// Loads the pack the way `pulumi preview --policy-pack policy` does: @pulumi/pulumi's run-policy-pack, from the
// pack folder, compiling TypeScript with ts-node; the pack prints the port of its gRPC server when it is up.
describe("run-policy-pack", () => {
  const root = join(__dirname, "..", "..");
  const runner = join(root, "node_modules", "@pulumi", "pulumi", "cmd", "run-policy-pack");
  it.skipIf(!existsSync(runner))(
    "serves the pack",
    async () => {
      const child = spawn(process.execPath, [runner, "127.0.0.1:1", "."], {
        cwd: join(root, "policy"),
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      let err = "";
      child.stdout.on("data", (d) => (out += String(d)));
      child.stderr.on("data", (d) => (err += String(d)));
      const port = await new Promise<string>((resolve, reject) => {
        const timer = setInterval(() => {
          const m = /^(\d+)\s*$/m.exec(out);
          if (m?.[1] !== undefined) {
            clearInterval(timer);
            resolve(m[1]);
          }
        }, 200);
        child.on("exit", (code) => {
          clearInterval(timer);
          reject(new Error(`pack exited with ${code}: ${err}`));
        });
      });
      child.kill();
      expect(Number(port)).toBeGreaterThan(0);
    },
    120_000,
  );
});
