/**
 * Benchmark: many tasks at once. N tasks (`true`) launched together through one Launcher (the budget admits N at
 * once) against N `docker run --rm` started together with exactly the flags of the create body the launcher sends
 * (bench/launch.ts's mapping), each batch timed from the first start to the last task removed; the two alternate
 * after one warm-up batch of each. Prints the medians and the ratio, and writes JSON. Not a test: it asserts nothing.
 *   node --import tsx bench/concurrent.ts [--tasks 20] [--rounds 3] [--out bench/results/concurrent-<n>.json]
 * Needs the Docker engine and the offline image (toolchain/docker.sh).
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launchSpec, resolveProject } from "../components/model";
import { dockerClient } from "../runtime/docker/client";
import { taskContainer } from "../runtime/docker/taskContainer";
import { prepareJobFolder, removeJobFolder } from "../runtime/jobs";
import { Launcher } from "../runtime/launcher";
import { offSwitch, projectLeftovers } from "../runtime/offSwitch";
import { policyPreflight } from "../runtime/preflight";
import { fmt, median, ROOT, runBenchmark, writeResult } from "./common";
import { dockerRunArgs } from "./launch";

const args = process.argv.slice(2);
const flag = (name: string, fallback: number) => {
  const at = args.indexOf(name);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const tasks = flag("--tasks", 20);
const rounds = flag("--rounds", 3);
const outAt = args.indexOf("--out");
const out = outAt >= 0 ? args[outAt + 1] : join(ROOT, "bench", "results", `concurrent-${tasks}.json`);
const image = process.env.SANDBOX_TEST_IMAGE ?? "sandbox-busybox:1";

/** Runs a command to its end; rejects when it fails. */
function run(cmd: string, argv: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
    });
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} exited ${code}: ${err}`))));
  });
}

async function main(): Promise<void> {
  if (!Number.isInteger(tasks) || tasks < 1)
    throw new Error(`--tasks must be a whole number ≥ 1, not ${tasks}`);
  const docker = dockerClient();
  const name = `bench-conc-${randomBytes(2).toString("hex")}`;
  const project = resolveProject({
    name,
    // Small tasks, and a cap that admits all of them at once.
    budget: { monthlyCapUsd: 1000, maxConcurrentTasks: tasks },
    jobRoot: mkdtempSync(join(tmpdir(), `${name}-jobs-`)),
    templates: { default: { image, resources: { vcpu: 0.1, memoryMb: 32, tmpfsMb: 8 } } },
  });
  const spec = launchSpec(project, "default", `${name}-net`);
  const launcher = new Launcher(docker, { ledger: false, preflight: policyPreflight() });
  const ways: Record<string, () => Promise<number>> = {
    launcher: async () => {
      const t = performance.now();
      const results = await Promise.all(
        Array.from({ length: tasks }, () => launcher.run(spec, { command: ["true"], removeJobDir: true })),
      );
      const bad = results.find((r) => r.exitCode !== 0);
      if (bad) throw new Error(`a task exited ${bad.exitCode}: ${bad.stderr}`);
      return performance.now() - t;
    },
    "docker run --rm": async () => {
      const ids = Array.from({ length: tasks }, () => `bench-${randomBytes(4).toString("hex")}`);
      for (const id of ids) prepareJobFolder(spec.jobFolder.hostRoot, id, spec.project, spec.user, {});
      try {
        const t = performance.now();
        await Promise.all(
          ids.map((id) =>
            run("docker", [
              "run",
              "--rm",
              ...dockerRunArgs(taskContainer(spec, id, { command: ["true"] }).body),
            ]),
          ),
        );
        return performance.now() - t;
      } finally {
        for (const id of ids) removeJobFolder(spec.jobFolder.hostRoot, id);
      }
    },
  };
  const samples: Record<string, number[]> = { launcher: [], "docker run --rm": [] };
  try {
    for (const way of Object.values(ways)) await way();
    for (let i = 0; i < rounds; i++) {
      const order = i % 2 === 0 ? ["launcher", "docker run --rm"] : ["docker run --rm", "launcher"];
      for (const k of order) samples[k]?.push(await (ways[k] as () => Promise<number>)());
    }
  } finally {
    await offSwitch(docker, name, { jobRoot: project.jobRoot });
  }
  const left = await projectLeftovers(docker, name);
  const medians = {
    launcher: median(samples.launcher ?? []),
    dockerRun: median(samples["docker run --rm"] ?? []),
  };
  const doc = {
    benchmark: "concurrent",
    tasks,
    rounds,
    medianBatchMs: medians,
    ratio: medians.launcher / medians.dockerRun,
    leftovers: left.length,
  };
  console.log(
    `${tasks} tasks at once: the launcher ${fmt(medians.launcher, 0)} ms, docker run --rm in parallel ${fmt(medians.dockerRun, 0)} ms (median of ${rounds}): ${fmt(doc.ratio, 2)}×; left on the engine: ${left.length}`,
  );
  writeResult(out, doc);
}

runBenchmark(main);
