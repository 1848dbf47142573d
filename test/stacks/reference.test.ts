/**
 * The generated references match what the front reads: the committed JSON Schema of the stack file and CLI reference
 * are exactly what stacks/reference.ts makes now (run `npm run docs` after changing a schema or a verb's help), the
 * schema names every project key under `sandbox:` with the shapes the front validates, and the CLI reference holds
 * every verb.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { VERBS } from "../../cli/help";
import { BACKEND_KEYS, CONFIG_KEYS } from "../../stacks/config";
import { cliReference, REFERENCE_FILES, stackConfigSchema } from "../../stacks/reference";

const ROOT = join(__dirname, "../..");

describe("the generated references", () => {
  it("are committed as generated (npm run docs)", () => {
    expect(readFileSync(join(ROOT, REFERENCE_FILES.schema), "utf8")).toBe(
      `${JSON.stringify(stackConfigSchema(), null, 2)}\n`,
    );
    expect(readFileSync(join(ROOT, REFERENCE_FILES.cli), "utf8")).toBe(cliReference());
  });

  it("the stack file's schema has every project key, closed, with the front's own shapes", () => {
    const config = (stackConfigSchema().properties as Record<string, { properties: Record<string, unknown> }>)
      .config;
    expect(Object.keys(config?.properties ?? {}).sort()).toEqual(
      [...CONFIG_KEYS, ...BACKEND_KEYS].map((k) => `sandbox:${k}`).sort(),
    );
    const budget = config?.properties["sandbox:budget"] as {
      properties: Record<string, unknown>;
      additionalProperties: unknown;
    };
    expect(Object.keys(budget.properties)).toContain("monthlyCapUsd");
    // Strict like the front: an unknown key inside the budget is not allowed.
    expect(budget.additionalProperties).toBe(false);
  });

  it("the CLI reference has every verb's help", () => {
    const text = cliReference();
    for (const verb of VERBS) expect(text).toContain(`## \`sandbox ${verb}\``);
  });
});
