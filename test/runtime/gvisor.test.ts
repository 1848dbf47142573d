import type Dockerode from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Launcher, RuntimeMissing } from "../../runtime/launcher";
import { offSwitch, projectLeftovers } from "../../runtime/offSwitch";
import { policyPreflight } from "../../runtime/preflight";
import { ESCAPE_CHECKS, runEscape, runProbe } from "../../runtime/walls";
import { requireDocker, specOf, TEST_IMAGE, testProject } from "../helpers/docker";

/** gVisor templates on the real engine (toolchain/runsc.sh registers runsc; ./sandbox test runs it). */
let docker: Dockerode;
const project = testProject("gv", {
  gvisor: { image: TEST_IMAGE, runtime: "runsc", timeoutSeconds: 20 },
  seed: { image: TEST_IMAGE, runtime: "runsc", capDrop: "seed-six", timeoutSeconds: 20 },
  kata: { image: TEST_IMAGE, runtime: "kata", timeoutSeconds: 20 },
});
const launcher = () => new Launcher(docker, { ledger: false, preflight: policyPreflight() });

beforeAll(async () => {
  docker = await requireDocker();
  const info = (await docker.info()) as { Runtimes?: Record<string, unknown> };
  if (!Object.keys(info.Runtimes ?? {}).includes("runsc")) {
    throw new Error("the Docker engine has no runtime runsc; run toolchain/runsc.sh (./sandbox test does)");
  }
});
afterAll(async () => {
  // With the job root: the folders tasks kept are removed too (unmounted where they had a disk of their own).
  if (docker) await offSwitch(docker, project.spec.name, { jobRoot: project.jobRoot });
});

describe("a runsc template on Docker", () => {
  it.each(["gvisor", "seed"])(
    "probes %s: the kernel is gVisor and every wall it shows holds",
    async (template) => {
      const t = project.spec.templates[template];
      if (t === undefined) throw new Error("no template");
      const { report } = await runProbe(launcher(), specOf(project, template), t);
      expect(report.walls[0]).toMatchObject({ wall: "kernel", declared: "gVisor (runsc)", ok: true });
      expect(report.walls[0]?.observed).toMatch(/^gVisor \(Starting gVisor\.\.\., release [^)]*\)$/);
      expect(report.walls.filter((w) => w.ok === false)).toEqual([]);
      expect(report.walls.find((w) => w.wall === "seccomp")).toMatchObject({ ok: null });
      expect(report.walls.find((w) => w.wall === "seccomp")?.observed).toMatch(
        /^not observable under gVisor/,
      );
      expect(report.passed).toBe(true);
      expect(await projectLeftovers(docker, project.spec.name)).toEqual([]);
    },
  );

  it("runs the task under gVisor: the engine created it with the runsc runtime", async () => {
    let inspected: Dockerode.ContainerInspectInfo | undefined;
    const l = new Launcher(docker, {
      ledger: false,
      preflight: policyPreflight(),
      onEvent: (e) => {
        if (e.type !== "start") return;
        void docker
          .listContainers({ all: true, filters: { label: [`sandbox.task=${e.id}`] } })
          .then(async ([c]) => {
            if (c) inspected = await docker.getContainer(c.Id).inspect();
          });
      },
    });
    const r = await l.run(specOf(project, "gvisor"), { command: ["sh", "-c", "sleep 1; dmesg | head -n 1"] });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/Starting gVisor/);
    expect(inspected?.HostConfig.Runtime).toBe("runsc");
  });

  it.each(ESCAPE_CHECKS)("blocks the escape %s under gVisor", async (check) => {
    const r = await runEscape(launcher(), docker, specOf(project, "gvisor"), check);
    expect({ blocked: r.blocked, evidence: r.evidence }).toMatchObject({ blocked: true });
    expect(r.leftovers).toEqual([]);
  });

  it("refuses a runtime the engine does not have, naming it, before anything is created", async () => {
    const e = await launcher()
      .run(specOf(project, "kata"), { command: ["true"] })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RuntimeMissing);
    expect((e as Error).message).toMatch(
      /^template "kata" runs under the runtime "kata", and the Docker engine has no runtime "kata" registered \(it has: [^)]*runsc[^)]*\); install kata and register it in the engine's daemon\.json \(runtimes\)\. The task never falls back to another runtime; nothing was started\.$/,
    );
    expect(await projectLeftovers(docker, project.spec.name)).toEqual([]);
  });
});
