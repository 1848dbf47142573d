// Writes the generated references (stacks/reference.ts): `npm run docs`.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliReference, REFERENCE_FILES, stackConfigSchema } from "../stacks/reference";

const root = join(__dirname, "..");
writeFileSync(join(root, REFERENCE_FILES.schema), `${JSON.stringify(stackConfigSchema(), null, 2)}\n`);
writeFileSync(join(root, REFERENCE_FILES.cli), cliReference());
