// A Kubernetes launcher process of its own for test/kube-node/kube-node.test.ts: opens the ledger at <file> with the
// meter <meter json>, launches task <id> of template <template> of <project json> running <command json>, says
// "running <id>" once its pod runs, and waits to be killed.
//   kube-orphan-worker.ts <kubeconfig> <file> <meter json> <project json> <template> <id> <command json>
import { launchSpec, type ResolvedProject } from "../../components/model";
import { kubeApis } from "../../runtime/kubernetes/api";
import { KubeLauncher } from "../../runtime/kubernetes/launcher";
import { Ledger, type Meter } from "../../runtime/ledger";

const [kubeconfig = "", file = "", meter = "{}", json = "{}", template = "", id = "", command = "[]"] =
  process.argv.slice(2);
const project = JSON.parse(json) as ResolvedProject;

async function main(): Promise<void> {
  const apis = await kubeApis({ kubeconfig });
  const ledger = Ledger.open(file, JSON.parse(meter) as Meter);
  const launcher = new KubeLauncher(apis, project.spec.name, { ledger });
  const seen = setInterval(async () => {
    const pods = await apis.core.listNamespacedPod({
      namespace: project.spec.name,
      labelSelector: `sandbox.task=${id}`,
    });
    if (pods.items.some((p) => p.status?.phase === "Running")) {
      clearInterval(seen);
      process.stdout.write(`running ${id}\n`);
    }
  }, 200);
  await launcher.run(launchSpec(project, template, "none"), { id, command: JSON.parse(command) as string[] });
}

void main();
