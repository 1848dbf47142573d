// A launcher process of its own for test/runtime/ledger.test.ts: launches one `long` task (`sleep 60`) with the
// ledger at <file>, says "started" once its container runs, and waits to be killed.
import type { ResolvedProject } from "../../components/model";
import { dockerClient } from "../../runtime/docker/client";
import { Launcher } from "../../runtime/launcher";
import { Ledger, meterOf } from "../../runtime/ledger";
import { policyPreflight } from "../../runtime/preflight";
import { specOf } from "../helpers/docker";

const [file = "", json = "{}"] = process.argv.slice(2);
const project = JSON.parse(json) as ResolvedProject;
const ledger = Ledger.open(file, meterOf(project));
const docker = dockerClient();
const launcher = new Launcher(docker, {
  preflight: policyPreflight(),
  ledger,
  graceSeconds: 1,
  onEvent: (e) => {
    if (e.type !== "start") return;
    const wait = setInterval(async () => {
      const running = await docker.listContainers({ filters: { label: [`sandbox.task=${e.id}`] } });
      if (running.length > 0) {
        clearInterval(wait);
        process.stdout.write("started\n");
      }
    }, 100);
  },
});
void launcher.run(specOf(project, "long"), { command: ["sleep", "60"] });
