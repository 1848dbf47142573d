// A Kubernetes launcher process of its own for test/kube-node/kube-node.test.ts: opens the shared ledger at <file>
// with the meter <meter json>, then launches up to <count> tasks of <template> one after another (ids <prefix>-<n>,
// each running <command json>) and writes one JSON line per launch: {id, admitted: true, exitCode, chargeUsd} or
// {id, admitted: false, reason, message}. It stops at the first refusal for the cap.
//   kube-launch-worker.ts <kubeconfig> <file> <meter json> <project json> <template> <prefix> <count> <command json>
import { launchSpec, type ResolvedProject } from "../../components/model";
import { kubeApis } from "../../runtime/kubernetes/api";
import { KubeLauncher } from "../../runtime/kubernetes/launcher";
import { BudgetRefused, Ledger, type Meter } from "../../runtime/ledger";

const [
  kubeconfig = "",
  file = "",
  meter = "{}",
  json = "{}",
  template = "",
  prefix = "",
  count = "1",
  command = "[]",
] = process.argv.slice(2);
const project = JSON.parse(json) as ResolvedProject;

async function main(): Promise<void> {
  const apis = await kubeApis({ kubeconfig });
  const ledger = Ledger.open(file, JSON.parse(meter) as Meter);
  const launcher = new KubeLauncher(apis, project.spec.name, { ledger });
  const spec = launchSpec(project, template, "none");
  for (let n = 0; n < Number(count); n++) {
    const id = `${prefix}-${n}`;
    try {
      const r = await launcher.run(spec, { id, command: JSON.parse(command) as string[] });
      process.stdout.write(
        `${JSON.stringify({ id, admitted: true, exitCode: r.exitCode, chargeUsd: r.chargeUsd })}\n`,
      );
    } catch (e) {
      if (!(e instanceof BudgetRefused)) throw e;
      process.stdout.write(
        `${JSON.stringify({ id, admitted: false, reason: e.reason, message: e.message })}\n`,
      );
      if (e.reason === "cap") break;
      // Every slot busy (the other process's tasks): a moment, then the next.
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  await ledger.close();
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
