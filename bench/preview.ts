/**
 * Benchmark: `preview` of a stack of N hardened task containers (the pack's biggest subject: every container is
 * judged by every resource rule) with the policy pack and without it, through the real engine, the toolkit's local
 * Docker provider and the pack's launcher (policy/run-pack), as the front attaches it. Each size is measured
 * interleaved, the order alternating, after one warm-up of each; min, median and p95 of each, the ratio with/without,
 * and the pack's cost split into a start-up (the difference at the smallest size) and a cost per resource (the slope
 * between the smallest and the largest size). Every preview with the pack must name the pack in the engine's output
 * and pass; a preview that did not run it stops the benchmark. Not a test: it asserts no time.
 *   node --import tsx bench/preview.ts [--sizes 5,500] [--runs 5] [--out bench/results/preview.json]
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import * as docker from "@pulumi/docker";
import { LocalWorkspace, PulumiCommand, type PulumiFn } from "@pulumi/pulumi/automation";
import { engineEnv, policyPackArg } from "../cli/engine";
import { hardenedContainerArgs } from "../components/docker/containerArgs";
import { launchSpec, projectNetworkName, resolveProject } from "../components/model";
import { inspectToolchain } from "../toolchain/pulumi";
import { fmt, ONE_TASK_BUDGET, ROOT, runBenchmark, writeResult } from "./common";
import { option, summary } from "./stats";

/** The command line's options. */
export interface PreviewBenchOptions {
  readonly sizes: readonly number[];
  readonly runs: number;
  readonly out: string;
}

/** Reads the options; a bad value stops with a message naming it. */
export function parsePreviewOptions(argv: readonly string[]): PreviewBenchOptions {
  const rawSizes = option(argv, "--sizes") ?? "5,500";
  const sizes = rawSizes.split(",").map(Number);
  if (sizes.length < 1 || sizes.some((n) => !Number.isInteger(n) || n < 1 || n > 5000))
    throw new Error(`--sizes "${rawSizes}": comma-separated whole numbers from 1 to 5000`);
  const runs = Number(option(argv, "--runs") ?? 5);
  if (!Number.isInteger(runs) || runs < 1)
    throw new Error(`--runs "${option(argv, "--runs")}": a whole number ≥ 1`);
  return {
    sizes: [...new Set(sizes)].sort((a, b) => a - b),
    runs,
    out: option(argv, "--out") ?? join(ROOT, "bench", "results", "preview.json"),
  };
}

const PROJECT = "bench-preview";

/** A program of one internal network and `n` task containers hardened as the launcher makes them. */
export function containersProgram(n: number): PulumiFn {
  const resolved = resolveProject({
    name: PROJECT,
    backend: "docker",
    budget: ONE_TASK_BUDGET,
    templates: { default: { image: "sandbox-busybox:1" } },
  });
  return async () => {
    const network = new docker.Network("net", {
      name: projectNetworkName(PROJECT),
      driver: "bridge",
      internal: true,
    });
    const spec = launchSpec(resolved, "default", projectNetworkName(PROJECT));
    for (let i = 0; i < n; i++) {
      new docker.Container(
        `task-${i}`,
        hardenedContainerArgs(
          spec,
          { type: "volume", source: `bench-preview-job-${i}` },
          { command: ["true"] },
        ),
        { dependsOn: [network] },
      );
    }
  };
}

/** Runs the benchmark; returns the JSON document it wrote. */
export async function runPreviewBench(options: PreviewBenchOptions) {
  const toolchain = inspectToolchain(ROOT, ["docker"]);
  if (toolchain.pulumi === undefined || toolchain.missing.length > 0)
    throw new Error(
      `the engine is not ready: ${toolchain.missing.join("; ")} (toolchain/setup.sh builds it)`,
    );
  const pack = policyPackArg(ROOT);
  if (pack.length === 0) throw new Error("the policy pack's launcher (policy/run-pack) is missing");
  const dir = mkdtempSync(join(tmpdir(), "sandbox-bench-preview-"));
  const state = join(dir, "state");
  const home = join(dir, "home");
  mkdirSync(state);
  mkdirSync(home);
  const pulumiCommand = await PulumiCommand.get({ root: dirname(dirname(toolchain.pulumi.path)) });
  const envVars = {
    ...engineEnv(ROOT, {}),
    PULUMI_BACKEND_URL: `file://${state}`,
    PULUMI_HOME: home,
    PATH: [...toolchain.pathPrepend, dirname(toolchain.pulumi.path), process.env.PATH ?? ""].join(":"),
  };
  const results: Record<string, unknown> = {};
  try {
    for (const n of options.sizes) {
      mkdirSync(join(dir, `work-${n}`));
      const stack = await LocalWorkspace.createStack(
        { stackName: `n${n}`, projectName: PROJECT, program: containersProgram(n) },
        { workDir: join(dir, `work-${n}`), pulumiHome: home, pulumiCommand, envVars },
      );
      const once = async (withPack: boolean): Promise<number> => {
        const start = process.hrtime.bigint();
        const r = await stack.preview(withPack ? { policyPacks: pack } : {});
        const seconds = Number(process.hrtime.bigint() - start) / 1e9;
        const creates = (r.changeSummary as Record<string, number>).create ?? 0;
        if (creates !== n + 2)
          throw new Error(`the preview of ${n} containers planned ${creates} creates, not ${n + 2}`);
        // The engine lists each pack it ran, with ✅ when nothing it found fails the preview.
        if (withPack !== /Policies:\s*\n\s*✅ sandbox-projects@/.test(r.stdout))
          throw new Error(
            `the preview ${withPack ? "with the pack did not list it as run and passed" : "without the pack listed a pack"}:\n${r.stdout.slice(-1500)}`,
          );
        return seconds;
      };
      await once(true);
      await once(false);
      const withPack: number[] = [];
      const without: number[] = [];
      for (let i = 0; i < options.runs; i++) {
        for (const w of i % 2 === 0 ? [true, false] : [false, true])
          (w ? withPack : without).push(await once(w));
      }
      const a = summary(withPack);
      const b = summary(without);
      results[String(n)] = {
        resources: n + 1,
        withPack: a,
        withoutPack: b,
        ratio: a.medianSeconds / b.medianSeconds,
      };
      console.log(
        `${n} containers: with the pack ${fmt(a.medianSeconds, 2)} s, without ${fmt(b.medianSeconds, 2)} s (${fmt(a.medianSeconds / b.medianSeconds, 2)}×)`,
      );
      await stack.workspace.removeStack(stack.name, { force: true });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const cost = (n: number) => {
    const r = results[String(n)] as {
      withPack: { medianSeconds: number };
      withoutPack: { medianSeconds: number };
    };
    return r.withPack.medianSeconds - r.withoutPack.medianSeconds;
  };
  const small = options.sizes[0] ?? 1;
  const large = options.sizes.at(-1) ?? small;
  const pack_ = {
    startupSeconds: cost(small),
    ...(large > small ? { perResourceMs: ((cost(large) - cost(small)) / (large - small)) * 1000 } : {}),
  };
  console.log(
    `the pack: ${fmt(pack_.startupSeconds, 2)} s to start${pack_.perResourceMs === undefined ? "" : `, then ${fmt(pack_.perResourceMs, 2)} ms a resource`}`,
  );
  const doc = {
    benchmark: "preview",
    date: new Date().toISOString(),
    runs: options.runs,
    subject: "n hardened task containers on one internal network, the toolkit's local Docker provider",
    results,
    pack: pack_,
    goal: "the pack ≤ 1.2× a 500-resource preview; ≤ 1.1× is the target for its own cost",
  };
  writeResult(options.out, doc);
  return doc;
}

if (require.main === module)
  runBenchmark(async () => void (await runPreviewBench(parsePreviewOptions(process.argv.slice(2)))));
