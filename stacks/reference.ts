/**
 * The references generated from the toolkit's own definitions, so that they cannot drift from what the front reads:
 * a JSON Schema of the stack file (`docs/stack-config.schema.json`, from the zod schemas the front validates with;
 * editors complete and check `stacks/Pulumi.<stack>.yaml` with it) and the CLI reference (`docs/cli.md`, from each
 * verb's `--help`). `npm run docs` writes them; a test keeps the committed files equal to what this makes.
 */
import { z } from "zod";
import { VERB_HELP } from "../cli/help";
import { ProjectSchema } from "../components/model";
import { BACKEND_KEYS, BACKEND_SCHEMAS, CONFIG_KEYS, CONFIG_NAMESPACE } from "./config";

/** Where each generated reference lives in the repository. */
export const REFERENCE_FILES = { schema: "docs/stack-config.schema.json", cli: "docs/cli.md" } as const;

/** A Pulumi secret as the stack file holds it. */
const SECURE = {
  type: "object",
  properties: { secure: { type: "string" } },
  required: ["secure"],
  additionalProperties: false,
};

/** The JSON Schema of a stack file: the project's keys under `sandbox:`, and any other key a plain value or secret. */
export function stackConfigSchema(): Record<string, unknown> {
  const json = (schema: z.ZodType) => {
    const { $schema: _drop, ...rest } = z.toJSONSchema(schema, {
      io: "input",
      unrepresentable: "any",
    }) as Record<string, unknown>;
    return rest;
  };
  const project = json(ProjectSchema) as { properties: Record<string, unknown> };
  const known: Record<string, unknown> = {};
  for (const key of CONFIG_KEYS) known[`${CONFIG_NAMESPACE}:${key}`] = project.properties[key] ?? {};
  for (const key of BACKEND_KEYS) known[`${CONFIG_NAMESPACE}:${key}`] = json(BACKEND_SCHEMAS[key]);
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    title: "A sandbox project's stack file (stacks/Pulumi.<stack>.yaml)",
    description:
      "Generated from the toolkit's own schemas (stacks/reference.ts). Keys under sandbox: are the project; any other namespace:key (a broker route's credential) is a plain value or a secret.",
    type: "object",
    properties: {
      config: {
        type: "object",
        properties: known,
        patternProperties: {
          "^[A-Za-z][A-Za-z0-9_-]*:[A-Za-z0-9_][A-Za-z0-9_.-]*$": {
            anyOf: [{ type: ["string", "number", "boolean"] }, SECURE],
          },
        },
        additionalProperties: false,
      },
      secretsprovider: { type: "string" },
      encryptedkey: { type: "string" },
      encryptionsalt: { type: "string" },
    },
    additionalProperties: false,
  };
}

/** The CLI reference: every verb's own `--help`, in the order `sandbox help` lists them. */
export function cliReference(): string {
  const verbs = Object.keys(VERB_HELP);
  return [
    "# CLI reference",
    "",
    "Generated from each verb's `--help` (`cli/help.ts`); `./sandbox <verb> --help` prints the same, and does nothing",
    "else.",
    "",
    ...verbs.flatMap((verb) => [
      `## \`sandbox ${verb}\``,
      "",
      "```text",
      (VERB_HELP[verb] ?? "").trimEnd(),
      "```",
      "",
    ]),
  ].join("\n");
}
