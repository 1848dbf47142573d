/**
 * Benchmark: many launchers, one cap, a thousand simulated nodes (test/engine/scale.ts). A local control plane with
 * 1,000 kwok nodes (built by `toolchain/setup.sh kwok`), a project deployed by the stack, one ledger on a local
 * PostgreSQL, and four launcher processes launching 10,000 tasks under a cap that admits fewer; the first launcher
 * is SIGKILLed part way and another takes the rest of its share. Reports what each goal of bench/README.md asks:
 * tasks admitted per second, p50 and p99 of admission and of launch to running, API requests per task, launcher
 * memory, ledger transactions per task, refused launches with their reason, and the invariants it checked. Not a
 * test: it prints, writes JSON and asserts nothing (test/scale/ asserts the invariants on a smaller run).
 *   node --import tsx bench/kube-scale.ts [--nodes 1000] [--tasks 10000] [--launchers 4] [--concurrency 40]
 *     [--cap 12] [--out bench/results/kube-scale.json]
 */
import { join } from "node:path";
import { runScale } from "../test/engine/scale";
import { fmt, ROOT, runBenchmark, writeResult } from "./common";

const args = process.argv.slice(2);
const opt = (name: string, fallback: number) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const outAt = args.indexOf("--out");
const out = outAt >= 0 ? (args[outAt + 1] ?? "") : join(ROOT, "bench", "results", "kube-scale.json");

/** The goals of the issue, for this 2-core machine. */
const GOALS = { admittedPerSecond: 50, p99AdmissionMs: 250, apiRequestsPerTask: 5, launcherMiB: 200 };

async function main(): Promise<void> {
  const r = await runScale({
    nodes: opt("nodes", 1000),
    tasks: opt("tasks", 10_000),
    launchers: opt("launchers", 4),
    concurrency: opt("concurrency", 40),
    capUsd: opt("cap", 12),
    killAt: 0.4,
    log: (line) => console.log(line),
  });
  const met = (ok: boolean) => (ok ? "met" : "NOT met");
  console.log(
    `\n${r.options.launchers} launchers, ${r.options.tasks} tasks, ${r.options.nodes} nodes, ${fmt(r.wallSeconds, 1)} s`,
  );
  console.log(
    `  admitted ${r.admitted}, refused ${JSON.stringify(Object.fromEntries(Object.entries(r.refused).map(([k, v]) => [k, v.count])))}, stopped at the cap ${r.stoppedAtCap}, failed ${r.failed}${r.failedExample === undefined ? "" : ` (${r.failedExample})`}`,
  );
  console.log(
    `  admitted per second   ${fmt(r.admittedPerSecond, 1)}   (goal >= ${GOALS.admittedPerSecond}: ${met(r.admittedPerSecond >= GOALS.admittedPerSecond)})`,
  );
  console.log(
    `  admission p50/p99     ${fmt(r.admissionMs.p50, 0)} / ${fmt(r.admissionMs.p99, 0)} ms   (goal p99 < ${GOALS.p99AdmissionMs}: ${met(r.admissionMs.p99 < GOALS.p99AdmissionMs)})`,
  );
  console.log(
    `  launch to running     ${fmt(r.launchToRunningMs.p50, 0)} / ${fmt(r.launchToRunningMs.p99, 0)} ms`,
  );
  console.log(
    `  API requests per task ${fmt(r.apiRequestsPerTask, 1)} (${fmt(r.apiRequestsPerLaunch, 1)} per launch asked for)   (goal <= ${GOALS.apiRequestsPerTask}: ${met(r.apiRequestsPerTask <= GOALS.apiRequestsPerTask)})`,
  );
  console.log(
    `  launcher memory       ${fmt(r.maxLauncherRssMiB, 0)} MiB RSS, ${fmt(r.maxLauncherHeapMiB, 0)} MiB heap   (goal <= ${GOALS.launcherMiB}: ${met(r.maxLauncherRssMiB <= GOALS.launcherMiB)})`,
  );
  console.log(
    `  ledger per launch     ${fmt(r.ledgerWritesPerTask, 2)} transactions, ${fmt(r.ledgerReadsPerTask, 2)} reads`,
  );
  console.log(`  invariants            ${JSON.stringify(r.invariants)}`);
  writeResult(out, { benchmark: "kube-scale", goals: GOALS, ...r });
}

runBenchmark(main);
