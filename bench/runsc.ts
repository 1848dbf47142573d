/**
 * Benchmark: the stronger wall's price. Launch to exit of one task (`true`) under gVisor through the launcher,
 * under runc through the launcher, and by `docker run --rm --runtime=runsc` with exactly the flags of the create
 * body the launcher sends (bench/launch.ts's mapping), interleaved, after one warm-up of each. Prints medians and
 * the ratios, and writes them as JSON. Not a test: it asserts nothing.
 *   node --import tsx bench/runsc.ts [runs=10] [--out bench/results/runsc.json]
 * Needs the Docker engine, the offline image and runsc registered (toolchain/runsc.sh).
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launchSpec, resolveProject } from "../components/model";
import { dockerClient } from "../runtime/docker/client";
import { taskContainer } from "../runtime/docker/taskContainer";
import { prepareJobFolder, removeJobFolder } from "../runtime/jobs";
import { Launcher } from "../runtime/launcher";
import { offSwitch } from "../runtime/offSwitch";
import { policyPreflight } from "../runtime/preflight";
import { fmt, median, ROOT, runBenchmark, writeResult } from "./common";
import { dockerRunArgs } from "./launch";

const args = process.argv.slice(2);
const outAt = args.indexOf("--out");
const out = outAt >= 0 ? args[outAt + 1] : join(ROOT, "bench", "results", "runsc.json");
const runs = Number(args.find((a, i) => /^\d+$/.test(a) && args[i - 1] !== "--out") ?? 10);
const image = process.env.SANDBOX_TEST_IMAGE ?? "sandbox-busybox:1";

async function main(): Promise<void> {
  const docker = dockerClient();
  const name = `bench-runsc-${randomBytes(2).toString("hex")}`;
  const project = resolveProject({
    name,
    budget: { monthlyCapUsd: 100 },
    jobRoot: mkdtempSync(join(tmpdir(), `${name}-jobs-`)),
    templates: { gvisor: { image, runtime: "runsc" }, runc: { image } },
  });
  const gvisor = launchSpec(project, "gvisor", `${name}-net`);
  const runc = launchSpec(project, "runc", `${name}-net`);
  const launcher = new Launcher(docker, { ledger: false, preflight: policyPreflight() });
  const viaLauncher = (spec: typeof gvisor) => async () => {
    const t = performance.now();
    const r = await launcher.run(spec, { command: ["true"], removeJobDir: true });
    if (r.exitCode !== 0) throw new Error(`${spec.template}: the task exited ${r.exitCode}: ${r.stderr}`);
    return performance.now() - t;
  };
  const ways: Record<string, () => Promise<number>> = {
    "Launcher (runsc)": viaLauncher(gvisor),
    "Launcher (runc)": viaLauncher(runc),
    "docker run --rm --runtime=runsc": async () => {
      const id = `bench-${randomBytes(4).toString("hex")}`;
      const { body } = taskContainer(gvisor, id, { command: ["true"] });
      prepareJobFolder(gvisor.jobFolder.hostRoot, id, gvisor.project, gvisor.user, {});
      try {
        const t = performance.now();
        const r = spawnSync("docker", ["run", "--rm", ...dockerRunArgs(body)], { encoding: "utf8" });
        if (r.status !== 0) throw new Error(`docker run failed: ${r.stderr}`);
        return performance.now() - t;
      } finally {
        removeJobFolder(gvisor.jobFolder.hostRoot, id);
      }
    },
  };
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(ways).map((k) => [k, []]));
  try {
    for (const way of Object.values(ways)) await way();
    for (let i = 0; i < runs; i++) {
      const order = Object.entries(ways);
      for (let j = 0; j < order.length; j++) {
        const [k, way] = order[(i + j) % order.length] as [string, () => Promise<number>];
        samples[k]?.push(await way());
      }
    }
  } finally {
    await offSwitch(docker, name, { jobRoot: project.jobRoot });
  }
  const medians = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
  const peer = medians["docker run --rm --runtime=runsc"] ?? Number.NaN;
  const doc = {
    benchmark: "runsc",
    runs,
    medianMs: medians,
    ratios: {
      launcherRunscToDockerRunRunsc: (medians["Launcher (runsc)"] ?? Number.NaN) / peer,
      runscToRunc: (medians["Launcher (runsc)"] ?? Number.NaN) / (medians["Launcher (runc)"] ?? Number.NaN),
    },
  };
  for (const [k, v] of Object.entries(medians)) console.log(`${k}: ${fmt(v, 0)} ms (median of ${runs})`);
  console.log(
    `launcher under runsc / docker run --runtime=runsc: ${fmt(doc.ratios.launcherRunscToDockerRunRunsc, 2)}×; runsc / runc: ${fmt(doc.ratios.runscToRunc, 2)}×`,
  );
  writeResult(out, doc);
}

runBenchmark(main);
