/**
 * Benchmark: launch to exit of one task running `true`, three ways, interleaved after one warm-up each:
 *
 * - `./sandbox run <stack> <template> -- true`, as a user types it (the bash front, Node, the stack's config, the
 *   preflight rules, the launch, the job folder);
 * - the library: one `Launcher` in this process running the same template (`Launcher.run`, job folder included);
 * - `docker run --rm` with exactly the flags of the create body the launcher sends (runtime/docker/taskContainer.ts,
 *   mapped to the docker CLI below; an unmapped field stops the benchmark rather than be dropped), on a job folder
 *   made as the launcher makes it.
 *
 * Prints min, median and p95 wall time of each, CPU time and peak memory of the commands, and the ratios against
 * `docker run --rm`; writes them as JSON (default bench/results/launch.json). The goal: the front within 1.2× of
 * `docker run --rm`. Not a test: it asserts nothing.
 *   node --import tsx bench/launch.ts [--runs 10] [--stack dev] [--template default] [--build] [--out file]
 * `--build` first runs the package build (`npm run build`, which also bundles the front); without it the front builds
 * its bundle itself in the untimed first call when it can, and the result names which the front ran
 * (toolchain/front.cjs: the bundle, the package build, or tsx).
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type Dockerode from "dockerode";
import { loadStack } from "../cli/main";
import { type LaunchSpec, launchSpec, projectNetworkName } from "../components/model";
import { dockerClient } from "../runtime/docker/client";
import { taskContainer } from "../runtime/docker/taskContainer";
import { prepareJobFolder, removeJobFolder } from "../runtime/jobs";
import { Launcher } from "../runtime/launcher";
import { policyPreflight } from "../runtime/preflight";
import { fmt, median, ROOT } from "./common";
import { option, quantile } from "./stats";

/** The command line's options. */
export interface LaunchBenchOptions {
  readonly runs: number;
  readonly stack: string;
  readonly template: string;
  readonly build: boolean;
  readonly out: string;
}

/** Reads the options; a bad value stops with a message naming it. */
export function parseOptions(argv: readonly string[]): LaunchBenchOptions {
  const runs = Number(option(argv, "--runs") ?? 10);
  if (!Number.isInteger(runs) || runs < 1)
    throw new Error(`--runs "${option(argv, "--runs")}": a whole number ≥ 1`);
  return {
    runs,
    stack: option(argv, "--stack") ?? "dev",
    template: option(argv, "--template") ?? "default",
    build: argv.includes("--build"),
    out: option(argv, "--out") ?? join(ROOT, "bench", "results", "launch.json"),
  };
}

/**
 * Calls `run` with the `docker run --rm` arguments of a task of `spec` running `command`: exactly the create body the
 * launcher sends, on a job folder made as the launcher makes it (owned by the template's user) before the call and
 * removed after it.
 */
export function withDockerRun<T>(
  spec: LaunchSpec,
  command: readonly string[],
  run: (args: string[]) => T,
): T {
  const id = `bench-${Date.now().toString(36)}-${randomBytes(3).toString("hex")}`;
  const { body } = taskContainer(spec, id, { command });
  prepareJobFolder(spec.jobFolder.hostRoot, id, spec.project, spec.user, {});
  try {
    return run(["run", "--rm", ...dockerRunArgs(body)]);
  } finally {
    removeJobFolder(spec.jobFolder.hostRoot, id);
  }
}

/**
 * The `docker run` flags of an Engine API create body, for the fields the launcher sets. Fields left at the engine's
 * default (empty lists and maps, false, restart "no") need no flag; any other field throws, naming it.
 */
export function dockerRunArgs(body: Dockerode.ContainerCreateOptions): string[] {
  const args: string[] = [];
  const h = body.HostConfig ?? {};
  const unmapped = (where: string, keys: Iterable<string>) => {
    const left = [...keys];
    if (left.length > 0) throw new Error(`${where} field(s) ${left.join(", ")} have no docker run flag here`);
  };
  const empty = (v: unknown) =>
    v === undefined ||
    v === false ||
    (Array.isArray(v) && v.length === 0) ||
    (typeof v === "object" && v !== null && Object.keys(v).length === 0);
  const hostKnown = new Set([
    "CapAdd",
    "CapDrop",
    "SecurityOpt",
    "ReadonlyRootfs",
    "Tmpfs",
    "NetworkMode",
    "IpcMode",
    "Mounts",
    "Init",
    "Memory",
    "MemorySwap",
    "NanoCpus",
    "PidsLimit",
    "Runtime",
    "LogConfig",
  ]);
  unmapped(
    "HostConfig",
    Object.entries(h)
      .filter(([k, v]) => !hostKnown.has(k) && !empty(v) && !(k === "RestartPolicy" && v?.Name === "no"))
      .map(([k]) => k),
  );
  const bodyKnown = new Set(["Image", "Cmd", "User", "Env", "WorkingDir", "Labels", "HostConfig", "name"]);
  unmapped(
    "create body",
    Object.entries(body)
      .filter(([k, v]) => !bodyKnown.has(k) && !empty(v))
      .map(([k]) => k),
  );
  if (body.name !== undefined) args.push("--name", body.name);
  if (body.User !== undefined) args.push("--user", body.User);
  if (body.WorkingDir !== undefined) args.push("--workdir", body.WorkingDir);
  for (const e of body.Env ?? []) args.push("--env", e);
  for (const [k, v] of Object.entries(body.Labels ?? {})) args.push("--label", `${k}=${v}`);
  for (const c of h.CapAdd ?? []) args.push("--cap-add", c);
  for (const c of h.CapDrop ?? []) args.push("--cap-drop", c);
  for (const o of h.SecurityOpt ?? []) args.push("--security-opt", o);
  if (h.ReadonlyRootfs) args.push("--read-only");
  for (const [path, opts] of Object.entries(h.Tmpfs ?? {})) args.push("--tmpfs", `${path}:${opts}`);
  if (h.NetworkMode !== undefined) args.push("--network", h.NetworkMode);
  if (h.IpcMode !== undefined) args.push("--ipc", h.IpcMode);
  for (const m of h.Mounts ?? []) {
    args.push(
      "--mount",
      `type=${m.Type},source=${m.Source},target=${m.Target}${m.ReadOnly ? ",readonly" : ""}`,
    );
  }
  if (h.Init) args.push("--init");
  if (h.Memory !== undefined) args.push("--memory", `${h.Memory}b`);
  if (h.MemorySwap !== undefined) args.push("--memory-swap", h.MemorySwap < 0 ? "-1" : `${h.MemorySwap}b`);
  if (h.NanoCpus !== undefined) args.push("--cpus", String(h.NanoCpus / 1e9));
  if (h.PidsLimit !== undefined) args.push("--pids-limit", String(h.PidsLimit));
  if (h.Runtime !== undefined) args.push("--runtime", h.Runtime);
  if (h.LogConfig?.Type !== undefined) {
    args.push("--log-driver", h.LogConfig.Type);
    for (const [k, v] of Object.entries(h.LogConfig.Config ?? {})) args.push("--log-opt", `${k}=${v}`);
  }
  return [...args, body.Image ?? "", ...(body.Cmd ?? [])];
}

/** One measured run. */
interface Sample {
  readonly seconds: number;
  /** User + system CPU seconds (the commands' own, from GNU time; the library's, from this process). */
  readonly cpuSeconds: number;
  /** Peak resident memory in MiB (commands only). */
  readonly maxRssMiB?: number;
}

/** Runs a command under GNU time; its wall time measured here. Throws when it fails. */
function timedCommand(cmd: string, args: readonly string[]): Sample {
  const start = process.hrtime.bigint();
  const r = spawnSync("/usr/bin/time", ["-f", "%U %S %M", cmd, ...args], { cwd: ROOT, encoding: "utf8" });
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const m = /^([\d.]+) ([\d.]+) (\d+)$/.exec(r.stderr.trim().split("\n").at(-1) ?? "");
  if (r.status !== 0 || m === null) {
    throw new Error(`${cmd} ${args.join(" ")} failed (exit ${r.status}):\n${r.stderr.slice(-2000)}`);
  }
  return { seconds, cpuSeconds: Number(m[1]) + Number(m[2]), maxRssMiB: Number(m[3]) / 1024 };
}

/** The summary of one way's samples. */
function summary(samples: readonly Sample[]) {
  const wall = samples.map((s) => s.seconds);
  const rss = samples.flatMap((s) => (s.maxRssMiB === undefined ? [] : [s.maxRssMiB]));
  return {
    runs: samples.length,
    minSeconds: Math.min(...wall),
    medianSeconds: median(wall),
    p95Seconds: quantile(wall, 0.95),
    medianCpuSeconds: median(samples.map((s) => s.cpuSeconds)),
    ...(rss.length > 0 ? { medianMaxRssMiB: median(rss) } : {}),
  };
}

/** Runs the benchmark; returns the JSON document it wrote. */
export async function runLaunchBench(options: LaunchBenchOptions) {
  if (options.build) {
    const b = spawnSync("npm", ["run", "build"], { cwd: ROOT, stdio: ["ignore", 2, 2] });
    if (b.status !== 0) throw new Error("the package build failed");
  }
  const front = require(join(ROOT, "toolchain", "front.cjs")) as {
    freshBuild: (root: string) => boolean;
    freshBundle: (root: string) => boolean;
  };
  const project = loadStack(ROOT, options.stack);
  const spec = launchSpec(project, options.template, projectNetworkName(project.spec.name));
  const docker = dockerClient();
  const launcher = new Launcher(docker, { ledger: false, preflight: policyPreflight({}) });
  // Whatever the front checks on a first call (the engine, the images) is done before anything is timed.
  spawnSync(join(ROOT, "sandbox"), ["run", options.stack, options.template, "--", "true"], { cwd: ROOT });

  const ways = {
    "./sandbox run": async (): Promise<Sample> =>
      timedCommand(join(ROOT, "sandbox"), ["run", options.stack, options.template, "--", "true"]),
    "Launcher.run": async (): Promise<Sample> => {
      const cpu = process.cpuUsage();
      const start = process.hrtime.bigint();
      const r = await launcher.run(spec, { command: ["true"], removeJobDir: true });
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      if (r.exitCode !== 0) throw new Error(`the library's task exited ${r.exitCode}: ${r.stderr}`);
      const used = process.cpuUsage(cpu);
      return { seconds, cpuSeconds: (used.user + used.system) / 1e6 };
    },
    "docker run --rm": async (): Promise<Sample> =>
      withDockerRun(spec, ["true"], (args) => timedCommand("docker", args)),
  } as const;

  const samples: Record<string, Sample[]> = Object.fromEntries(Object.keys(ways).map((k) => [k, []]));
  for (const run of Object.values(ways)) await run();
  for (let i = 0; i < options.runs; i++) {
    for (const [name, run] of Object.entries(ways)) samples[name]?.push(await run());
  }

  const results = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, summary(v)]));
  const peer = results["docker run --rm"]?.medianSeconds ?? Number.NaN;
  const doc = {
    benchmark: "launch",
    date: new Date().toISOString(),
    stack: options.stack,
    template: options.template,
    command: ["true"],
    front: front.freshBundle(ROOT)
      ? "bundle (dist/front/)"
      : front.freshBuild(ROOT)
        ? "compiled (dist/)"
        : "tsx (no fresh build)",
    load: spawnSync("cat", ["/proc/loadavg"], { encoding: "utf8" }).stdout.trim(),
    results,
    ratios: {
      frontToDockerRun: (results["./sandbox run"]?.medianSeconds ?? Number.NaN) / peer,
      libraryToDockerRun: (results["Launcher.run"]?.medianSeconds ?? Number.NaN) / peer,
    },
    // What the front adds to the library's launch: Node, its code, the stack's config, the ledger, the watchdog.
    frontFixedStartSeconds:
      (results["./sandbox run"]?.medianSeconds ?? Number.NaN) -
      (results["Launcher.run"]?.medianSeconds ?? Number.NaN),
    goal: { frontToDockerRun: 1.2 },
  };
  mkdirSync(dirname(options.out), { recursive: true });
  writeFileSync(options.out, `${JSON.stringify(doc, null, 2)}\n`);
  return doc;
}

if (require.main === module) {
  const options = parseOptions(process.argv.slice(2));
  runLaunchBench(options).then(
    (doc) => {
      console.log(
        `launch to exit of \`true\`, ${options.runs} interleaved runs after a warm-up (front: ${doc.front}; load ${doc.load})`,
      );
      for (const [name, r] of Object.entries(doc.results)) {
        const rss = "medianMaxRssMiB" in r ? `, peak RSS ${fmt(r.medianMaxRssMiB ?? 0, 0)} MiB` : "";
        console.log(
          `  ${name.padEnd(16)} min ${fmt(r.minSeconds, 2)} s  median ${fmt(r.medianSeconds, 2)} s  p95 ${fmt(r.p95Seconds, 2)} s  CPU ${fmt(r.medianCpuSeconds, 2)} s${rss}`,
        );
      }
      const met = doc.ratios.frontToDockerRun <= doc.goal.frontToDockerRun ? "met" : "missed";
      console.log(
        `./sandbox run / docker run --rm: ${fmt(doc.ratios.frontToDockerRun, 2)} (goal ≤ ${doc.goal.frontToDockerRun}: ${met}); Launcher.run / docker run --rm: ${fmt(doc.ratios.libraryToDockerRun, 2)}`,
      );
      console.log(
        `the front's fixed start (./sandbox run − Launcher.run, medians): ${fmt(doc.frontFixedStartSeconds, 2)} s`,
      );
      console.log(`written to ${options.out}`);
    },
    (e: unknown) => {
      console.error(`bench/launch.ts: ${e instanceof Error ? e.message : String(e)}`);
      process.exitCode = 1;
    },
  );
}
