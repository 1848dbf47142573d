// Copied into the consumer project by test/package/consumer.test.ts and run there with that project's own
// node_modules: it takes one of the project's compiled Pulumi programs through the real engine with the Automation
// API (an inline program, as a machine without the Node language host runs one; with the official CLI the same
// program runs as `pulumi up`). One JSON request as the argument, one JSON answer on stdout.
//
//   node driver.js '{"verb":"up","workDir":"...","program":"bin/index.js","stack":"...","pulumiRoot":"...",
//                    "config":{...},"policyPacks":[...],"policyPackConfigs":[...]}'
const { LocalWorkspace, PulumiCommand } = require("@pulumi/pulumi/automation");
const path = require("node:path");

async function main() {
  const req = JSON.parse(process.argv[2]);
  let log = "";
  const onOutput = (s) => {
    log += s;
  };
  const pulumiCommand = await PulumiCommand.get({ root: req.pulumiRoot });
  const program = async () => ({ ...require(path.resolve(req.workDir, req.program)) });
  const stack = await LocalWorkspace.createOrSelectStack(
    { stackName: req.stack, projectName: req.project, program },
    { workDir: req.workDir, pulumiCommand },
  );
  for (const [key, value] of Object.entries(req.config ?? {})) await stack.setConfig(key, { value });
  const packs = { policyPacks: req.policyPacks ?? [], policyPackConfigs: req.policyPackConfigs ?? [] };
  try {
    if (req.verb === "up") {
      const r = await stack.up({ ...packs, onOutput });
      const outputs = Object.fromEntries(Object.entries(r.outputs).map(([k, v]) => [k, v.value]));
      return { ok: true, result: r.summary.result, outputs, log };
    }
    if (req.verb === "preview") {
      const r = await stack.preview({ ...packs, onOutput });
      return { ok: true, changes: r.changeSummary, log };
    }
    const r = await stack.destroy({ onOutput });
    await stack.workspace.removeStack(req.stack);
    return { ok: true, result: r.summary.result, log };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e), log };
  }
}

main().then(
  (answer) => process.stdout.write(JSON.stringify(answer)),
  (e) => {
    process.stderr.write(`driver: ${e instanceof Error ? e.stack : String(e)}\n`);
    process.exitCode = 1;
  },
);
