/**
 * Benchmark: the off switch against `docker rm -f` of the same set. Each round creates N labelled task containers
 * of the offline test image (the toolkit's own create body, `runtime/docker/taskContainer.ts`), either running
 * (`sleep`) or only created, then removes them with one contender, timed; every contender gets an identical set,
 * in an order that rotates per round (interleaved), after one warm-up round. Not a test: it prints, writes JSON,
 * and asserts nothing but that each contender left nothing behind.
 *   node --import tsx bench/off.ts [containers=100] [runs=5] [--variants running,created]
 *     [--concurrency 8,16] [--no-cli] [--out bench/results/off.json]
 * Contenders: the library call `offSwitch` (one per `--concurrency` value, default the toolkit's), the CLI as a user
 * types it (`./sandbox off <stack> --yes`, the round's stack file written into stacks/ and removed after it; the
 * front builds its bundle in the untimed warm-up when stale), and
 * `docker rm -f $(docker ps -aq --filter label=sandbox.project=<name>)`.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type Dockerode from "dockerode";
import { launchSpec, resolveProject } from "../components/model";
import { dockerClient } from "../runtime/docker/client";
import { taskContainer } from "../runtime/docker/taskContainer";
import { OFF_CONCURRENCY, offSwitch, projectLeftovers } from "../runtime/offSwitch";

const ROOT = resolve(__dirname, "..");
const IMAGE = process.env.SANDBOX_TEST_IMAGE ?? "sandbox-busybox:1";

export type Variant = "running" | "created";

export interface OffBenchOptions {
  readonly containers: number;
  readonly runs: number;
  readonly variants: readonly Variant[];
  /** One library contender per value. */
  readonly concurrency: readonly number[];
  /** Include the CLI contender (a Node process per round). */
  readonly cli: boolean;
  readonly log?: (line: string) => void;
}

export interface Stats {
  readonly runs: number;
  readonly min: number;
  readonly median: number;
  readonly p95: number;
}

export interface OffBenchResult {
  readonly containers: number;
  readonly runs: number;
  readonly machine: { cores: number; load: string; docker: string };
  /** Seconds per contender, per variant. */
  readonly variants: Record<string, Record<string, Stats>>;
  /** Median of each contender over the median of `docker rm -f` (1.0 = as fast). */
  readonly ratios: Record<string, Record<string, number>>;
}

const PEER = "docker rm -f";

function stats(xs: readonly number[]): Stats {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] ?? 0;
  const mid = Math.floor(s.length / 2);
  const median = s.length % 2 === 1 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
  return { runs: s.length, min: s[0] ?? 0, median, p95: at(0.95) };
}

async function limited<T>(items: readonly T[], limit: number, fn: (t: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

let serial = 0;
const uniqueName = () => `offb-${process.pid.toString(36)}-${(serial++).toString(36)}`;

/**
 * The CLI as a user types it, `./sandbox off <stack> --yes`: one stack file per round in the checkout's stacks/
 * (`Pulumi.<project>.yaml`, removed after the round), naming the round's project and job root.
 */
function cliStacks(): {
  writeStack(project: string, jobRoot: string): void;
  removeStack(project: string): void;
} {
  const file = (project: string) => join(ROOT, "stacks", `Pulumi.${project}.yaml`);
  return {
    writeStack(project, jobRoot) {
      writeFileSync(
        file(project),
        [
          "config:",
          `  sandbox:name: ${project}`,
          `  sandbox:jobRoot: ${jobRoot}`,
          "  sandbox:budget:",
          "    monthlyCapUsd: 100",
          "  sandbox:templates:",
          "    default:",
          `      image: ${IMAGE}`,
          "",
        ].join("\n"),
      );
    },
    removeStack(project) {
      rmSync(file(project), { force: true });
    },
  };
}

/** N task containers of a fresh project, all created (and started, for `running`) before the clock starts. */
async function makeSet(docker: Dockerode, variant: Variant, n: number, jobRoot: string): Promise<string> {
  const name = uniqueName();
  const project = resolveProject({
    name,
    budget: { monthlyCapUsd: 1000 },
    templates: { default: { image: IMAGE, timeoutSeconds: 3600 } },
    jobRoot,
  });
  const spec = launchSpec(project, "default", `${name}-net`);
  await limited(
    Array.from({ length: n }, (_, i) => i),
    8,
    async (i) => {
      const t = taskContainer(spec, `t${i}`, { command: ["sleep", "3600"] });
      mkdirSync(t.jobDir, { recursive: true });
      const c = await docker.createContainer(t.body);
      if (variant === "running") await c.start();
    },
  );
  return name;
}

function seconds(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e9;
}

/** Runs the benchmark; every container it creates is removed (by the contender, else by the off switch). */
export async function offBench(options: OffBenchOptions): Promise<OffBenchResult> {
  const log = options.log ?? (() => {});
  const docker = dockerClient();
  await docker.getImage(IMAGE).inspect();
  const jobRoot = mkdtempSync(join(tmpdir(), "sandbox-bench-off-jobs-"));
  const front = options.cli ? cliStacks() : undefined;
  const contenders: Record<string, (project: string) => Promise<number>> = {};
  for (const c of options.concurrency) {
    contenders[`offSwitch (concurrency ${c})`] = async (project) => {
      const start = process.hrtime.bigint();
      await offSwitch(docker, project, { concurrency: c });
      return seconds(start);
    };
  }
  if (front !== undefined) {
    contenders["sandbox off (CLI)"] = async (project) => {
      front.writeStack(project, jobRoot);
      try {
        const start = process.hrtime.bigint();
        const r = spawnSync(join(ROOT, "sandbox"), ["off", project, "--yes"], {
          cwd: ROOT,
          encoding: "utf8",
        });
        const took = seconds(start);
        if (r.status !== 0)
          throw new Error(`./sandbox off ${project} failed (exit ${r.status}): ${r.stderr}`);
        return took;
      } finally {
        front.removeStack(project);
      }
    };
  }
  contenders[PEER] = async (project) => {
    const start = process.hrtime.bigint();
    const r = spawnSync(
      "bash",
      ["-c", `docker rm -f $(docker ps -aq --filter label=sandbox.project=${project}) >/dev/null`],
      { encoding: "utf8" },
    );
    const took = seconds(start);
    if (r.status !== 0) throw new Error(`docker rm -f failed (exit ${r.status}): ${r.stderr}`);
    return took;
  };
  const names = Object.keys(contenders);
  const times: Record<string, Record<string, number[]>> = Object.fromEntries(
    options.variants.map((v) => [v, Object.fromEntries(names.map((k) => [k, []]))]),
  );
  try {
    for (let round = -1; round < options.runs; round++) {
      for (const variant of options.variants) {
        const byName = times[variant] ?? {};
        const shift = Math.max(0, round) % names.length;
        for (const name of [...names.slice(shift), ...names.slice(0, shift)]) {
          const project = await makeSet(docker, variant, options.containers, jobRoot);
          try {
            const took = await (contenders[name] as (p: string) => Promise<number>)(project);
            const left = await projectLeftovers(docker, project);
            if (left.length > 0)
              throw new Error(`${name} left ${left.length} object(s): ${left.slice(0, 3).join(", ")}`);
            if (round >= 0) byName[name]?.push(took);
            log(`${round < 0 ? "warm-up" : `round ${round + 1}`} ${variant} ${name}: ${took.toFixed(3)} s`);
          } finally {
            await offSwitch(docker, project);
          }
        }
      }
    }
  } finally {
    rmSync(jobRoot, { recursive: true, force: true });
  }
  const variants: OffBenchResult["variants"] = {};
  const ratios: OffBenchResult["ratios"] = {};
  for (const [variant, byName] of Object.entries(times)) {
    variants[variant] = Object.fromEntries(Object.entries(byName).map(([k, xs]) => [k, stats(xs)]));
    const peer = variants[variant]?.[PEER]?.median ?? Number.NaN;
    ratios[variant] = Object.fromEntries(
      names.filter((k) => k !== PEER).map((k) => [k, (variants[variant]?.[k]?.median ?? Number.NaN) / peer]),
    );
  }
  const version = await docker.version();
  return {
    containers: options.containers,
    runs: options.runs,
    machine: {
      cores: cpus().length,
      load: readFileSync("/proc/loadavg", "utf8").trim(),
      docker: version.Version,
    },
    variants,
    ratios,
  };
}

function usage(message: string): never {
  console.error(
    `${message}\nusage: node --import tsx bench/off.ts [containers=100] [runs=5] [--variants running,created] [--concurrency 8,16] [--no-cli] [--out file]`,
  );
  process.exit(2);
}

async function cliMain(argv: readonly string[]): Promise<void> {
  const positional: string[] = [];
  let variants: Variant[] = ["running", "created"];
  let concurrency = [OFF_CONCURRENCY];
  let cli = true;
  let out = join(ROOT, "bench", "results", "off.json");
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? "";
    const value = () => argv[++i] ?? usage(`${a} needs a value`);
    if (a === "--variants") {
      variants = value().split(",") as Variant[];
      for (const v of variants)
        if (v !== "running" && v !== "created") usage(`--variants "${v}": allowed are running, created`);
    } else if (a === "--concurrency") {
      concurrency = value()
        .split(",")
        .map((s) => (s === "unbounded" || s === "Infinity" ? Number.POSITIVE_INFINITY : Number(s)));
      for (const c of concurrency)
        if (!(c === Number.POSITIVE_INFINITY || (Number.isInteger(c) && c >= 1)))
          usage(`--concurrency ${c}: allowed are whole numbers ≥ 1 and "unbounded"`);
    } else if (a === "--no-cli") cli = false;
    else if (a === "--out") out = resolve(value());
    else if (a.startsWith("--")) usage(`unknown option ${a}`);
    else positional.push(a);
  }
  const [containers, runs] = [Number(positional[0] ?? 100), Number(positional[1] ?? 5)];
  if (!Number.isInteger(containers) || containers < 1)
    usage(`containers ${positional[0]}: a whole number ≥ 1`);
  if (!Number.isInteger(runs) || runs < 1) usage(`runs ${positional[1]}: a whole number ≥ 1`);
  const r = await offBench({ containers, runs, variants, concurrency, cli, log: (l) => console.error(l) });
  console.log(
    `off switch on ${containers} task containers, ${runs} interleaved runs after a warm-up (load ${r.machine.load}, ${r.machine.cores} cores, Docker ${r.machine.docker})`,
  );
  for (const [variant, byName] of Object.entries(r.variants)) {
    console.log(`  ${variant}:`);
    for (const [name, s] of Object.entries(byName)) {
      const ratio = r.ratios[variant]?.[name];
      console.log(
        `    ${name.padEnd(28)} min ${s.min.toFixed(3)} s  median ${s.median.toFixed(3)} s  p95 ${s.p95.toFixed(3)} s${ratio === undefined ? "" : `  ${ratio.toFixed(2)}× ${PEER}`}`,
      );
    }
  }
  mkdirSync(join(out, ".."), { recursive: true });
  writeFileSync(
    out,
    `${JSON.stringify({ benchmark: "off", date: new Date().toISOString(), ...r }, null, 2)}\n`,
  );
  console.log(`written: ${out.startsWith(ROOT) ? out.slice(ROOT.length + 1) : out}`);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === __filename) {
  cliMain(process.argv.slice(2)).catch((e) => {
    console.error(e instanceof Error ? e.message : String(e));
    process.exit(1);
  });
}
