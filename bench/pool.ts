/**
 * Benchmark: one short task launched from the warm pool (members pre-started behind their gates), cold by the
 * launcher, and by `docker run --rm` with the same flags (the same create body spelled as CLI flags: walls, limits,
 * user, job folder, environment, labels, deadline-wrapped command), interleaved, `runs` rounds after one warm-up
 * round. Each launch is timed twice: from the call to the task's output and exit code in hand (what an agent waits
 * for; the launcher's `result` event) and to its container removed (the call's return; `docker run --rm` gives only
 * this one). The goal: pooled, to output in hand, ≤ 0.2 × `docker run --rm`. Not a test: it prints and writes JSON,
 * and asserts nothing.
 *   node --import tsx bench/pool.ts [runs=15] [--out bench/results/pool.json]
 * Needs the Docker engine and the offline image (toolchain/docker.sh).
 *
 * The pool refills between rounds, untimed (`settled()`): what a pooled launch saves is the create and the start,
 * which the pool does off the task's path. On a busy engine a refill may still run while the next launch is timed.
 *
 * A fourth way, the engine floor, times only the engine's start, wait, logs and removal of a container created
 * beforehand, with none of the toolkit's work: what a cold launch cannot go below.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type Dockerode from "dockerode";
import { type LaunchSpec, launchSpec, resolveProject } from "../components/model";
import { demuxLogs, dockerClient } from "../runtime/docker/client";
import { taskContainer } from "../runtime/docker/taskContainer";
import { Launcher } from "../runtime/launcher";
import { offSwitch } from "../runtime/offSwitch";
import { WarmPool } from "../runtime/pool";
import { policyPreflight } from "../runtime/preflight";
import { fmt, median, ROOT } from "./common";

const args = process.argv.slice(2);
const outAt = args.indexOf("--out");
const out = outAt >= 0 ? args[outAt + 1] : join(ROOT, "bench", "results", "pool.json");
const runs = Number(args.find((a, i) => /^\d+$/.test(a) && args[i - 1] !== "--out") ?? 15);
const image = process.env.SANDBOX_TEST_IMAGE ?? "sandbox-busybox:1";
const SCRIPT = "echo hello\n";
const FLOOR = "engine floor";

/** `docker run --rm` flags for exactly the create body the launcher sends. */
function runFlags(body: Dockerode.ContainerCreateOptions): string[] {
  const hc = body.HostConfig ?? {};
  const f: string[] = ["run", "--rm"];
  for (const c of hc.CapDrop ?? []) f.push("--cap-drop", c);
  for (const o of hc.SecurityOpt ?? []) f.push("--security-opt", o);
  if (hc.ReadonlyRootfs) f.push("--read-only");
  for (const [p, o] of Object.entries(hc.Tmpfs ?? {})) f.push("--tmpfs", `${p}:${o}`);
  if (hc.Memory !== undefined) f.push("--memory", `${hc.Memory}b`);
  if (hc.MemorySwap !== undefined) f.push("--memory-swap", `${hc.MemorySwap}b`);
  if (hc.NanoCpus !== undefined) f.push("--cpus", String(hc.NanoCpus / 1e9));
  if (hc.PidsLimit !== undefined) f.push("--pids-limit", String(hc.PidsLimit));
  f.push("--network", hc.NetworkMode ?? "none", "--ipc", hc.IpcMode ?? "private", "--restart", "no");
  if (hc.Init) f.push("--init");
  if (hc.Runtime !== undefined) f.push("--runtime", hc.Runtime);
  for (const m of hc.Mounts ?? [])
    f.push("--mount", `type=${m.Type},source=${m.Source},target=${m.Target}${m.ReadOnly ? ",readonly" : ""}`);
  if (body.User !== undefined) f.push("--user", body.User);
  if (body.WorkingDir !== undefined) f.push("--workdir", body.WorkingDir);
  for (const e of body.Env ?? []) f.push("--env", e);
  for (const [k, v] of Object.entries(body.Labels ?? {})) f.push("--label", `${k}=${v}`);
  if (body.name !== undefined) f.push("--name", body.name);
  return [...f, body.Image ?? "", ...((body.Cmd as string[] | undefined) ?? [])];
}

async function main(): Promise<void> {
  const docker = dockerClient();
  const name = `bench-pool-${Math.random().toString(36).slice(2, 8)}`;
  const jobRoot = mkdtempSync(join(tmpdir(), `${name}-jobs-`));
  const project = resolveProject({
    name,
    jobRoot,
    budget: { monthlyCapUsd: 100, maxConcurrentTasks: 2 },
    templates: { default: { image } },
  });
  const spec: LaunchSpec = launchSpec(project, "default", `${name}-net`);
  const pool = new WarmPool(docker, { size: 1, preflight: policyPreflight() });
  // The moment each task's result is in hand, before its container is removed.
  let inHand = 0n;
  const onEvent = (e: { type: string }) => {
    if (e.type === "result") inHand = process.hrtime.bigint();
  };
  const pooled = new Launcher(docker, { ledger: false, preflight: policyPreflight(), pool, onEvent });
  const cold = new Launcher(docker, { ledger: false, preflight: policyPreflight(), onEvent });
  const files = { "run.sh": SCRIPT };
  let n = 0;
  const modes: Record<string, () => Promise<string>> = {
    pooled: async () => (await pooled.run(spec, { files, removeJobDir: true })).stdout,
    cold: async () => (await cold.run(spec, { files, removeJobDir: true })).stdout,
    "docker run --rm": async () => {
      const id = `cli-${n++}`;
      const { body, jobDir } = taskContainer(spec, id);
      mkdirSync(jobDir, { recursive: true });
      writeFileSync(join(jobDir, "run.sh"), SCRIPT);
      const r = spawnSync("docker", runFlags(body), { encoding: "utf8" });
      if (r.status !== 0) throw new Error(`docker run failed (exit ${r.status}): ${r.stderr}`);
      return r.stdout;
    },
  };
  // What any pool of created, never-started members must still pay on the task's path: the engine's own start, the
  // wait for the exit, the logs and the removal of a container created (untimed) with the same body, straight
  // through the Engine API with none of the toolkit's work. Its ratio to `docker run --rm` is the floor of a pooled
  // launch.
  let floorContainer: Dockerode.Container | undefined;
  const prepare: Record<string, () => Promise<void>> = {
    [FLOOR]: async () => {
      const { body, jobDir } = taskContainer(spec, `floor-${n++}`);
      mkdirSync(jobDir, { recursive: true });
      writeFileSync(join(jobDir, "run.sh"), SCRIPT);
      floorContainer = await docker.createContainer(body);
    },
  };
  modes[FLOOR] = async () => {
    const c = floorContainer as Dockerode.Container;
    await c.start();
    await c.wait();
    const logs = demuxLogs((await c.logs({ stdout: true, stderr: true, follow: false })) as Buffer);
    inHand = process.hrtime.bigint();
    await c.remove({ force: true, v: true });
    return logs.stdout;
  };
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(modes).map((m) => [m, []]));
  const inHandTimes: Record<string, number[]> = Object.fromEntries(
    Object.keys(modes)
      .filter((m) => m !== "docker run --rm")
      .map((m) => [m, []]),
  );
  try {
    await pool.warm(spec);
    for (let round = -1; round < runs; round++) {
      // Interleaved, and the order rotates each round so that no mode always follows another.
      const order = Object.keys(modes);
      for (let i = 0; i < ((round % order.length) + order.length) % order.length; i++)
        order.push(order.shift() as string);
      for (const mode of order) {
        if (mode === "pooled") await pool.settled();
        await prepare[mode]?.();
        const t0 = process.hrtime.bigint();
        inHand = 0n;
        const stdout = await (modes[mode] as () => Promise<string>)();
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        if (stdout !== "hello\n") throw new Error(`${mode}: unexpected output ${JSON.stringify(stdout)}`);
        if (round >= 0) times[mode]?.push(ms);
        if (round >= 0 && inHand > 0n) inHandTimes[mode]?.push(Number(inHand - t0) / 1e6);
      }
    }
  } finally {
    await pool.close();
    await offSwitch(docker, name, { jobRoot });
  }
  const med = Object.fromEntries(Object.entries(times).map(([m, xs]) => [m, median(xs)]));
  const medInHand = Object.fromEntries(Object.entries(inHandTimes).map(([m, xs]) => [m, median(xs)]));
  const peer = med["docker run --rm"] ?? Number.NaN;
  const version = spawnSync("docker", ["version", "--format", "{{.Server.Version}}"], { encoding: "utf8" });
  const result = {
    benchmark: "pool",
    task: `sh /job/run.sh (${JSON.stringify(SCRIPT)}) in ${image}, template defaults`,
    runs,
    engine: `Docker ${version.stdout.trim()}`,
    medianMs: med,
    ratioToDockerRun: Object.fromEntries(Object.entries(med).map(([m, v]) => [m, v / peer])),
    medianInHandMs: medInHand,
    inHandRatioToDockerRun: Object.fromEntries(Object.entries(medInHand).map(([m, v]) => [m, v / peer])),
    goal: "pooled, to output in hand, ≤ 0.2 × docker run --rm",
    floor: `${FLOOR}: start, wait, logs and removal of a container created beforehand, through the Engine API alone: the least a cold launch can take`,
    samplesMs: times,
    inHandSamplesMs: inHandTimes,
  };
  for (const [m, v] of Object.entries(med)) {
    const hand = medInHand[m];
    console.log(
      `${m.padEnd(16)} ${hand === undefined ? "" : `output in hand ${fmt(hand, 0).padStart(5)} ms (${fmt(hand / peer, 2)} ×)  `}removed ${fmt(v, 0).padStart(5)} ms (${fmt(v / peer, 2)} × docker run --rm)`,
    );
  }
  if (out !== undefined) {
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
    console.log(`written: ${out}`);
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exitCode = 1;
});
