/**
 * Benchmark: what the ledger costs a launch. One short task (`true`, the default template) launched by a Launcher
 * with the ledger (admission, the file hashes, the meter's ticks, the charge: each a SQLite transaction on a real
 * file in WAL mode) and by the same Launcher without it, interleaved with the order rotating each round, after one
 * warm-up of each. Also the ledger alone: admit + complete of one run, no engine, many times. The goal: the ledger
 * adds under 2 % to a launch. Not a test: it prints and writes JSON, and asserts nothing.
 *   node --import tsx bench/ledger.ts [runs=15] [--out bench/results/ledger.json]
 * Needs the Docker engine and the offline image (toolchain/docker.sh).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launchSpec, resolveProject } from "../components/model";
import { dockerClient } from "../runtime/docker/client";
import { Launcher } from "../runtime/launcher";
import { Ledger, meterOf } from "../runtime/ledger";
import { offSwitch } from "../runtime/offSwitch";
import { policyPreflight } from "../runtime/preflight";
import { fmt, median, ROOT, runBenchmark, writeResult } from "./common";

const args = process.argv.slice(2);
const outAt = args.indexOf("--out");
const out = outAt >= 0 ? args[outAt + 1] : join(ROOT, "bench", "results", "ledger.json");
const runs = Number(args.find((a, i) => /^\d+$/.test(a) && args[i - 1] !== "--out") ?? 15);
const image = process.env.SANDBOX_TEST_IMAGE ?? "sandbox-busybox:1";

const p95 = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * 0.95) - 1] ?? 0;

async function main(): Promise<void> {
  const docker = dockerClient();
  const name = `bench-ledger-${Math.random().toString(36).slice(2, 6)}`;
  const project = resolveProject({
    name,
    budget: { monthlyCapUsd: 1000, enforce: "metered", maxConcurrentTasks: 4 },
    jobRoot: mkdtempSync(join(tmpdir(), `${name}-jobs-`)),
    templates: { default: { image, timeoutSeconds: 30 } },
  });
  const spec = launchSpec(project, "default", `${name}-net`);
  const ledger = Ledger.open(
    join(mkdtempSync(join(tmpdir(), `${name}-`)), "ledger.sqlite"),
    meterOf(project),
  );
  const ways = {
    ledger: new Launcher(docker, { preflight: policyPreflight(), ledger }),
    plain: new Launcher(docker, { ledger: false, preflight: policyPreflight() }),
  };
  const times: Record<keyof typeof ways, number[]> = { ledger: [], plain: [] };
  try {
    const once = async (way: keyof typeof ways) => {
      const t = performance.now();
      const r = await ways[way].run(spec, { command: ["true"], removeJobDir: true });
      if (r.exitCode !== 0) throw new Error(`${way}: the task exited ${r.exitCode}`);
      return performance.now() - t;
    };
    await once("ledger");
    await once("plain");
    for (let i = 0; i < runs; i++) {
      const order: (keyof typeof ways)[] = i % 2 === 0 ? ["ledger", "plain"] : ["plain", "ledger"];
      for (const way of order) times[way].push(await once(way));
    }
  } finally {
    await offSwitch(docker, name, { jobRoot: project.jobRoot });
  }
  // The ledger alone: one run admitted and closed, as a launch does, many times.
  const alone: number[] = [];
  for (let i = 0; i < Math.max(50, runs * 20); i++) {
    const t = performance.now();
    const run = await ledger.admit({
      id: `alone-${i}`,
      template: "default",
      specHash: spec.specHash,
      command: ["true"],
      container: `alone-${i}`,
      size: { vcpu: spec.resources.vcpu, memoryMb: spec.resources.memoryMb },
      maxSeconds: spec.timeoutSeconds,
    });
    await ledger.recordFiles(run.id, {});
    await ledger.complete(run.id, { exitCode: 0 });
    alone.push(performance.now() - t);
  }
  await ledger.close();
  const result = {
    benchmark: "ledger",
    runs,
    launch: {
      withLedger: {
        medianMs: median(times.ledger),
        p95Ms: p95(times.ledger),
        minMs: Math.min(...times.ledger),
      },
      withoutLedger: {
        medianMs: median(times.plain),
        p95Ms: p95(times.plain),
        minMs: Math.min(...times.plain),
      },
      ratio: median(times.ledger) / median(times.plain),
    },
    ledgerAlone: { medianMs: median(alone), p95Ms: p95(alone), share: median(alone) / median(times.plain) },
    goal: "the ledger adds under 2 % to a launch",
  };
  console.log(
    `launch with the ledger ${fmt(result.launch.withLedger.medianMs, 0)} ms, without ${fmt(result.launch.withoutLedger.medianMs, 0)} ms (median of ${runs}): ${fmt(result.launch.ratio, 3)}×\n` +
      `the ledger alone (admit, files, charge): ${fmt(result.ledgerAlone.medianMs, 2)} ms a launch, ${fmt(result.ledgerAlone.share * 100, 2)} % of a launch`,
  );
  writeResult(out, result);
}

runBenchmark(main);
