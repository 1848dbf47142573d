// The SARIF report: valid against the SARIF 2.1.0 JSON schema, with what GitHub code scanning reads (rule metadata,
// help, crosswalk tags, security-severity, file and line, URN for Pulumi inputs, suppressions for exemptions).
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { packArgs } from "../../policy/pulumi/pack";
import { FIXTURES, scan, tempFiles } from "./helpers";

/**
 * The SARIF 2.1.0 schema (OASIS, as published by schemastore: sarif-2.1.0-rtm.5) ships in @microsoft/jest-sarif;
 * @cfworker/json-schema validates draft-04 schemas. Both are devDependencies of the project.
 */
const SCHEMA_MODULE = "@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json";
const VALIDATOR_MODULE = "@cfworker/json-schema";

type Validate = (doc: unknown) => { valid: boolean; errors: unknown[] };

function sarifValidator(): Validate {
  const load = createRequire(__filename);
  let schema: object;
  let Validator: new (schema: object, draft: string, shortCircuit: boolean) => { validate: Validate };
  try {
    schema = load(SCHEMA_MODULE) as object;
    ({ Validator } = load(VALIDATOR_MODULE) as { Validator: typeof Validator });
  } catch (e) {
    throw new Error(
      `the SARIF schema test needs the devDependencies @microsoft/jest-sarif@1.0.0-beta.0 (the schema) and ` +
        `@cfworker/json-schema@4.1.6 (the validator): ${(e as Error).message}`,
    );
  }
  const v = new Validator(schema, "4", false);
  return (doc) => v.validate(doc);
}

interface Sarif {
  version: string;
  runs: {
    tool: { driver: { name: string; rules: Record<string, unknown>[] } };
    results: {
      ruleId: string;
      ruleIndex: number;
      level: string;
      message: { text: string };
      locations: {
        physicalLocation: { artifactLocation: { uri: string }; region?: { startLine: number } };
        logicalLocations: { fullyQualifiedName: string }[];
      }[];
      suppressions?: { kind: string; justification: string }[];
      partialFingerprints: Record<string, string>;
    }[];
    invocations: { executionSuccessful: boolean; toolExecutionNotifications: { level: string }[] }[];
  }[];
}

async function sarif(args: string[]): Promise<{ code: number; doc: Sarif; text: string }> {
  const r = await scan(["--format", "sarif", ...args]);
  return { code: r.code, doc: JSON.parse(r.out) as Sarif, text: r.out };
}

describe("SARIF", () => {
  it("is valid SARIF 2.1.0 for every fixture, broken ones included", async () => {
    const validate = sarifValidator();
    const { code, doc } = await sarif([FIXTURES]);
    expect(code).toBe(2);
    const r = validate(doc);
    expect(r.errors).toEqual([]);
    expect(r.valid).toBe(true);
    // The validator is not a rubber stamp: a wrong level is refused.
    const broken = JSON.parse(JSON.stringify(doc)) as Sarif;
    const first = broken.runs[0]?.results[0];
    if (first !== undefined) first.level = "fatal";
    expect(validate(broken).valid).toBe(false);
  });

  it("describes every rule as the pack registers it: description, help, crosswalk tags, security severity", async () => {
    // With --fail-on-unjudged (the pack's setting, and CI's) every rule runs at the level the pack registers.
    const { doc } = await sarif(["--fail-on-unjudged", `${FIXTURES}/kubernetes/task-job.yaml`]);
    const rules = doc.runs[0]?.tool.driver.rules ?? [];
    const policies = packArgs().policies;
    expect(rules.map((r) => r.id)).toEqual(policies.map((p) => p.name));
    for (const p of policies) {
      const r = rules.find((x) => x.id === p.name) as {
        shortDescription: { text: string };
        help: { text: string; markdown: string };
        defaultConfiguration: { level: string };
        properties: { tags: string[]; "security-severity": string };
      };
      expect(r.shortDescription.text).toBe(p.description);
      expect(r.help.text).toContain(p.remediationSteps ?? "");
      expect(r.help.markdown).toContain("**Fix:**");
      expect(r.properties.tags).toEqual(["security", ...(p.tags ?? [])]);
      expect(Number(r.properties["security-severity"])).toBeGreaterThan(0);
      expect(r.defaultConfiguration.level).toBe(p.enforcementLevel === "advisory" ? "warning" : "error");
    }
    const critical = rules.find((r) => r.id === "sandbox-disallow-runtime-socket") as {
      properties: { "security-severity": string; tags: string[] };
    };
    expect(critical.properties["security-severity"]).toBe("9.5");
    expect(critical.properties.tags).toContain("cis-docker:5.32");
  });

  it("gives file and line for manifests, and the URN for Pulumi inputs", async () => {
    const { doc } = await sarif([
      `${FIXTURES}/kubernetes/agent-deploy.yaml`,
      `${FIXTURES}/pulumi/preview.json`,
    ]);
    const results = doc.runs[0]?.results ?? [];
    const rules = doc.runs[0]?.tool.driver.rules ?? [];
    for (const r of results) expect(rules[r.ruleIndex]?.id).toBe(r.ruleId);
    const hostNet = results.find((r) => r.ruleId === "sandbox-disallow-host-namespaces");
    expect(hostNet?.level).toBe("error");
    expect(hostNet?.locations[0]?.physicalLocation).toEqual({
      artifactLocation: { uri: `${FIXTURES}/kubernetes/agent-deploy.yaml` },
      region: { startLine: 14 },
    });
    const loose = results.filter((r) => r.message.text.startsWith("Container/loose"));
    expect(loose.length).toBeGreaterThan(0);
    for (const r of loose) {
      expect(r.locations[0]?.logicalLocations[0]?.fullyQualifiedName).toBe(
        "urn:pulumi:dev::sandbox::docker:index/container:Container::loose",
      );
      expect(r.locations[0]?.physicalLocation.region).toBeUndefined();
    }
    expect(loose.filter((r) => r.level === "note")).toHaveLength(2); // the unknown user and group
    const advisory = results.find((r) => r.ruleId === "sandbox-require-readonly-rootfs");
    expect(advisory?.level).toBe("warning");
    const prints = results.map((r) => r.partialFingerprints["sandboxFinding/v1"]);
    expect(new Set(prints).size).toBe(prints.length);
  });

  it("puts exemptions in as suppressions with their reason", async () => {
    const dir = tempFiles({
      "cfg.json": JSON.stringify({
        exemptions: [
          {
            rule: "sandbox-require-readonly-rootfs",
            resource: "Pod/debug",
            reason: "the debug pod writes its cache",
          },
        ],
      }),
    });
    const { doc } = await sarif([`${FIXTURES}/kubernetes/pods-list.yaml`, "--config", join(dir, "cfg.json")]);
    const results = doc.runs[0]?.results ?? [];
    const rofs = results.find((r) => r.ruleId === "sandbox-require-readonly-rootfs");
    expect(rofs?.suppressions).toEqual([
      { kind: "external", status: "accepted", justification: "the debug pod writes its cache" },
    ]);
    expect(results.filter((r) => r.suppressions !== undefined)).toHaveLength(1);
  });

  it("reports unreadable inputs as tool notifications", async () => {
    const { doc } = await sarif([`${FIXTURES}/broken/bad-indent.yaml`]);
    const inv = doc.runs[0]?.invocations[0];
    expect(inv?.executionSuccessful).toBe(false);
    expect(inv?.toolExecutionNotifications).toMatchObject([
      {
        level: "error",
        locations: [
          {
            physicalLocation: {
              artifactLocation: { uri: `${FIXTURES}/broken/bad-indent.yaml` },
              region: { startLine: 9 },
            },
          },
        ],
      },
    ]);
  });
});
