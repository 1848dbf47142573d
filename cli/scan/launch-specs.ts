/**
 * Writes the runtime's launch spec of every template of a stack as JSON files (`<stack>.<template>.launch.json`), the
 * input `scan` judges exactly as the launcher would start a task. Used by toolchain/pr-checks.sh.
 *
 *   tsx cli/scan/launch-specs.ts <out-folder> <stack>...
 * Exit codes: 0 written, 2 a stack's config is invalid (the problems are printed).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { launchSpec, projectNetworkName, SpecError } from "../../components/model";
import { loadStack, projectRoot } from "../main";

export function writeLaunchSpecs(root: string, out: string, stack: string): string[] {
  const project = loadStack(root, stack);
  mkdirSync(out, { recursive: true });
  return Object.keys(project.spec.templates)
    .sort()
    .map((template) => {
      const file = join(out, `${stack}.${template}.launch.json`);
      const spec = launchSpec(project, template, projectNetworkName(project.spec.name));
      writeFileSync(file, `${JSON.stringify(spec, null, 2)}\n`);
      return file;
    });
}

if (require.main === module) {
  const [out, ...stacks] = process.argv.slice(2);
  if (out === undefined || stacks.length === 0) {
    process.stderr.write("usage: launch-specs.ts <out-folder> <stack>...\n");
    process.exitCode = 2;
  } else {
    for (const stack of stacks) {
      try {
        for (const f of writeLaunchSpecs(projectRoot(), out, stack)) process.stdout.write(`${f}\n`);
      } catch (e) {
        if (!(e instanceof SpecError)) throw e;
        process.stderr.write(`stack ${stack}: ${e.message}\n`);
        process.exitCode = 2;
      }
    }
  }
}
