/**
 * Benchmark: launches through the launch service (`sandbox serve`), two ways.
 *
 * - Concurrency: a service of a benchmark stack of its own (a budget that admits 50 at once; small tasks whose
 *   template command is `true`, so that a warm pool may serve them) takes launches of `true` from the typed client
 *   (`SandboxClient.run`, over its unix socket), 1, 10 and 50 at once; each launch is timed from the request to its
 *   exit event. p50 and p99 per level.
 * - One task as a user types it: `./sandbox run <stack> default -- true` going through the stack's service (checked:
 *   `--verbose` must say so), the client's launch of the same in this process, and `docker run --rm` with exactly the
 *   flags of the create body the launcher sends (bench/launch.ts's mapping) on a job folder made as the launcher
 *   makes it; interleaved with the order rotating, after one warm-up each.
 *
 * Goals (not asserted): a launch through the service ≤ 0.4 × `docker run --rm`; p99 at 50 at once ≤ 2 × p50 alone.
 * Writes JSON (default bench/results/serve.json). Needs the Docker engine and the offline image (toolchain/docker.sh).
 *   node --import tsx bench/serve.ts [--runs 10] [--stack dev] [--pool N] [--levels 1,10,50] [--build] [--out file]
 * `--pool N` gives each service a warm pool of N (the stack's at most its concurrency).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadStack } from "../cli/main";
import { serveSocketPath } from "../cli/serve-run";
import { launchSpec, projectNetworkName } from "../components/model";
import { dockerClient } from "../runtime/docker/client";
import { offSwitch, projectLeftovers } from "../runtime/offSwitch";
import { SandboxClient } from "../runtime/serve/client";
import { fmt, median, ROOT, runBenchmark, writeResult } from "./common";
import { withDockerRun } from "./launch";
import { option, quantile } from "./stats";

const argv = process.argv.slice(2);
const runs = Number(option(argv, "--runs") ?? 10);
const stack = option(argv, "--stack") ?? "dev";
const pool = option(argv, "--pool");
const levels = (option(argv, "--levels") ?? "1,10,50").split(",").map(Number);
const out = option(argv, "--out") ?? join(ROOT, "bench", "results", "serve.json");

/** `./sandbox serve <stack> ...` running, until `stop()`. */
async function startService(
  name: string,
  args: readonly string[],
): Promise<{ child: ChildProcess; stop(): Promise<number | null> }> {
  const child = spawn(join(ROOT, "sandbox"), ["serve", name, ...args], {
    cwd: ROOT,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let err = "";
  child.stderr?.on("data", (d) => {
    err += String(d);
  });
  const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  for (let i = 0; i < 1200 && !/ answers on /.test(err) && child.exitCode === null; i++)
    await new Promise((r) => setTimeout(r, 100));
  if (!/ answers on /.test(err)) throw new Error(`sandbox serve ${name} did not start:\n${err}`);
  return {
    child,
    async stop() {
      child.kill("SIGTERM");
      const code = await exit;
      if (code !== 0) throw new Error(`sandbox serve ${name} stopped with ${code}:\n${err.slice(-2000)}`);
      return code;
    },
  };
}

/** Milliseconds of one launch through the client; throws unless the task ran `true` to its end. */
async function launch(
  client: SandboxClient,
  request: { template: string; command?: string[] },
): Promise<number> {
  const t = performance.now();
  const r = await client.run(request);
  const ms = performance.now() - t;
  if (r.exitCode !== 0) throw new Error(`a task exited ${r.exitCode}: ${r.stderr}`);
  return ms;
}

/** p50 and p99 of launches `at` at once, in `batches` batches (after one warm-up batch). */
async function level(client: SandboxClient, at: number, batches: number) {
  const one = () => launch(client, { template: "default" });
  await Promise.all(Array.from({ length: at }, one));
  const ms: number[] = [];
  for (let b = 0; b < batches; b++) ms.push(...(await Promise.all(Array.from({ length: at }, one))));
  return {
    atOnce: at,
    launches: ms.length,
    p50Ms: quantile(ms, 0.5),
    p99Ms: quantile(ms, 0.99),
    maxMs: Math.max(...ms),
  };
}

/** The concurrency part, on a stack of its own (its stack file removed at the end, its objects switched off). */
async function concurrency() {
  const name = `bsv${randomBytes(3).toString("hex")}`;
  const file = join(ROOT, "stacks", `Pulumi.${name}.yaml`);
  const jobRoot = mkdtempSync(join(tmpdir(), `${name}-jobs-`));
  const most = Math.max(...levels);
  writeFileSync(
    file,
    [
      "config:",
      "  sandbox:backend: docker",
      `  sandbox:jobRoot: ${jobRoot}`,
      "  sandbox:budget:",
      "    monthlyCapUsd: 1000",
      `    maxConcurrentTasks: ${most}`,
      "  sandbox:templates:",
      "    default:",
      `      image: ${process.env.SANDBOX_TEST_IMAGE ?? "sandbox-busybox:1"}`,
      '      command: ["true"]',
      "      resources: { vcpu: 0.1, memoryMb: 32, tmpfsMb: 8 }",
      "      timeoutSeconds: 60",
      "",
    ].join("\n"),
  );
  const project = loadStack(ROOT, name);
  const service = await startService(name, pool === undefined ? [] : ["--pool", pool]);
  try {
    const client = new SandboxClient({ socket: serveSocketPath(ROOT, name) });
    const results = [];
    for (const at of levels) {
      results.push(await level(client, at, Math.max(1, Math.ceil((runs * 2) / at))));
      const r = results.at(-1);
      console.log(
        `  ${String(at).padStart(3)} at once: p50 ${fmt(r?.p50Ms ?? 0, 0)} ms  p99 ${fmt(r?.p99Ms ?? 0, 0)} ms  (${r?.launches} launches)`,
      );
    }
    await service.stop();
    const left = await projectLeftovers(dockerClient(), project.spec.name);
    return {
      stack: name,
      pool: pool === undefined ? null : Number(pool),
      levels: results,
      leftovers: left.length,
    };
  } finally {
    if (service.child.exitCode === null) service.child.kill("SIGKILL");
    await offSwitch(dockerClient(), project.spec.name, { jobRoot }).catch(() => undefined);
    rmSync(file, { force: true });
    rmSync(jobRoot, { recursive: true, force: true });
  }
}

/** One run of a command; its wall milliseconds. Throws when it fails, or when `expect` is not in its stderr. */
function timedCommand(cmd: string, args: readonly string[], expect?: RegExp): number {
  const t = performance.now();
  const r = spawnSync(cmd, args, { cwd: ROOT, encoding: "utf8" });
  const ms = performance.now() - t;
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(" ")} failed (exit ${r.status}):\n${r.stderr.slice(-2000)}`);
  if (expect !== undefined && !expect.test(r.stderr))
    throw new Error(`${cmd} ${args.join(" ")} did not say ${expect}:\n${r.stderr.slice(-2000)}`);
  return ms;
}

/** `./sandbox run` through the service, the client, and `docker run --rm`, interleaved. */
async function oneTask() {
  const project = loadStack(ROOT, stack);
  const spec = launchSpec(project, "default", projectNetworkName(project.spec.name));
  // The stack's own pool is at most its concurrency.
  const size = pool === undefined ? undefined : Math.min(Number(pool), project.budget.concurrency);
  const service = await startService(stack, size === undefined ? [] : ["--pool", String(size)]);
  const client = new SandboxClient({ socket: serveSocketPath(ROOT, stack) });
  const ways: Record<string, () => Promise<number>> = {
    "./sandbox run (through serve)": async () =>
      timedCommand(
        join(ROOT, "sandbox"),
        ["run", stack, "default", "--verbose", "--", "true"],
        /through the launch service/,
      ),
    "SandboxClient.run": () => launch(client, { template: "default", command: ["true"] }),
    "docker run --rm": async () => withDockerRun(spec, ["true"], (args) => timedCommand("docker", args)),
  };
  const names = Object.keys(ways);
  const samples: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  try {
    for (const way of Object.values(ways)) await way();
    for (let i = 0; i < runs; i++) {
      const order = names.map((_, k) => names[(i + k) % names.length] ?? "");
      for (const n of order) samples[n]?.push(await (ways[n] as () => Promise<number>)());
    }
  } finally {
    await service.stop();
  }
  const medians = Object.fromEntries(names.map((n) => [n, median(samples[n] ?? [])]));
  const peer = medians["docker run --rm"] ?? Number.NaN;
  return {
    stack,
    runs,
    pool: size ?? null,
    medianMs: medians,
    ratios: {
      clientToDockerRun: (medians["SandboxClient.run"] ?? Number.NaN) / peer,
      frontToDockerRun: (medians["./sandbox run (through serve)"] ?? Number.NaN) / peer,
    },
  };
}

async function main(): Promise<void> {
  if (!Number.isInteger(runs) || runs < 1)
    throw new Error(`--runs "${option(argv, "--runs")}": a whole number ≥ 1`);
  if (levels.some((l) => !Number.isInteger(l) || l < 1))
    throw new Error(`--levels: whole numbers ≥ 1, such as 1,10,50`);
  if (
    argv.includes("--build") &&
    spawnSync("npm", ["run", "build"], { cwd: ROOT, stdio: ["ignore", 2, 2] }).status !== 0
  )
    throw new Error("the package build failed");
  const front = require(join(ROOT, "toolchain", "front.cjs")) as { freshBuild: (root: string) => boolean };
  const load = () => spawnSync("cat", ["/proc/loadavg"], { encoding: "utf8" }).stdout.trim();
  console.log(
    `launches of \`true\` through sandbox serve (pool ${pool ?? "as the templates say"}; load ${load()})`,
  );
  const conc = await concurrency();
  const one = await oneTask();
  for (const [n, ms] of Object.entries(one.medianMs))
    console.log(`  ${n.padEnd(30)} median ${fmt(ms, 0)} ms`);
  const alone = conc.levels.find((l) => l.atOnce === Math.min(...levels));
  const most = conc.levels.find((l) => l.atOnce === Math.max(...levels));
  const doc = {
    benchmark: "serve",
    date: new Date().toISOString(),
    front: front.freshBuild(ROOT) ? "compiled (dist/)" : "tsx (no fresh build)",
    load: load(),
    concurrency: conc,
    oneTask: one,
    ratios: {
      clientToDockerRun: one.ratios.clientToDockerRun,
      frontToDockerRun: one.ratios.frontToDockerRun,
      p99AtMostToP50Alone: (most?.p99Ms ?? Number.NaN) / (alone?.p50Ms ?? Number.NaN),
    },
    goal: { clientToDockerRun: 0.4, p99AtMostToP50Alone: 2 },
  };
  console.log(
    `through serve / docker run --rm: client ${fmt(doc.ratios.clientToDockerRun, 2)}, ./sandbox run ${fmt(doc.ratios.frontToDockerRun, 2)} (goal ≤ 0.4); p99 at ${most?.atOnce} / p50 at ${alone?.atOnce}: ${fmt(doc.ratios.p99AtMostToP50Alone, 2)} (goal ≤ 2); left on the engine: ${conc.leftovers}`,
  );
  writeResult(out, doc);
  console.log(`written to ${out}`);
}

runBenchmark(main);
