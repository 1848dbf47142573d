/**
 * The JSON Schema of the pack's config file (`pulumi preview --policy-pack-config <file>`; `scan --config` reads it too),
 * built from the policies the pack declares: per rule a level, or `{ enforcementLevel, ...settings, exemptions }`
 * with the rule's own settings schema. The package ships it as `policy-pack/config.schema.json` (editors validate a
 * config file against it); a test keeps that file equal to this function's result.
 *
 *   tsx policy/config-schema.ts > policy-pack/config.schema.json
 */
import { packArgs } from "./pulumi/pack";
import { ENFORCEMENT_LEVELS, PACK_NAME } from "./rules/types";

const LEVELS = ENFORCEMENT_LEVELS;

/** The schema of a config file for the pack with every rule (the package's `policy-pack/`). */
export function packConfigSchema(version: string): Record<string, unknown> {
  const level = { $ref: "#/definitions/enforcementLevel" };
  const properties: Record<string, unknown> = {
    all: {
      description: "The level of every policy that the file does not set on its own.",
      anyOf: [
        level,
        { type: "object", properties: { enforcementLevel: level }, additionalProperties: false },
      ],
    },
  };
  for (const p of packArgs().policies) {
    const own = (p.configSchema?.properties ?? {}) as Record<string, unknown>;
    properties[p.name] = {
      description: `${p.description} (default: ${p.enforcementLevel ?? "advisory"})`,
      anyOf: [
        level,
        {
          type: "object",
          properties: { enforcementLevel: level, ...own },
          ...(p.configSchema?.required === undefined ? {} : { required: p.configSchema.required }),
          additionalProperties: false,
        },
      ],
    };
  }
  return {
    $schema: "http://json-schema.org/draft-07/schema#",
    title: `${PACK_NAME} policy pack config ${version}`,
    description:
      "The file `pulumi preview --policy-pack-config` reads (and `sandbox-scan --config`, which also takes `preset` and a top-level `exemptions` list): per policy, a level or its settings.",
    type: "object",
    properties,
    additionalProperties: false,
    definitions: { enforcementLevel: { enum: [...LEVELS] } },
  };
}

if (require.main === module) {
  const { version } = require("../package.json") as { version: string };
  process.stdout.write(`${JSON.stringify(packConfigSchema(version), null, 2)}\n`);
}
