// What `run --out` and `--keep` ask of a Kubernetes launcher, refused before anything is asked of the cluster: a job
// folder needs somewhere to come back to, and a pod that holds it (runc and gVisor: components/kubernetes/pod.ts).
import { describe, expect, it } from "vitest";
import { launchSpec, resolveProject } from "../../components/model";
import type { KubeApis } from "../../runtime/kubernetes/api";
import { KubeLauncher } from "../../runtime/kubernetes/launcher";
import { LaunchRefused } from "../../runtime/launch-errors";

const project = resolveProject({
  name: "collect",
  budget: { monthlyCapUsd: 100 },
  templates: { plain: { image: "runner:1" }, kata: { image: "runner:1", runtime: "kata" } },
});

// No API call may happen: every method of these clients throws.
const apis = new Proxy({} as KubeApis, {
  get: () => {
    throw new Error("the cluster was asked");
  },
});

describe("a job folder asked of a Kubernetes launcher", () => {
  it("is refused without a jobRoot to bring it back to", async () => {
    const run = new KubeLauncher(apis, "collect").run(launchSpec(project, "plain", "none"), {
      collect: true,
    });
    await expect(run).rejects.toThrow(LaunchRefused);
    await expect(run).rejects.toThrow(/no jobRoot to bring it back to/);
  });

  it("is refused for a Kata template, whose pod holds no holder, naming the runtime", async () => {
    const run = new KubeLauncher(apis, "collect", { jobRoot: "/nonexistent" }).run(
      launchSpec(project, "kata", "none"),
      {
        collect: true,
      },
    );
    await expect(run).rejects.toThrow(LaunchRefused);
    await expect(run).rejects.toThrow(/template "kata" runs under kata/);
  });
});
