/**
 * Benchmark: `up` and `destroy` of a Docker sandbox project with N templates (each template's probe runs at `up`:
 * a tmpfs volume and a hardened probe container that runs to its end, on the project's internal network), three
 * ways, interleaved with the order rotating, after one warm-up of each:
 *
 * - the front, as a user types it: `./sandbox up <stack>` then `./sandbox destroy <stack>`;
 * - the same program (stacks/program.ts) driven directly through the Automation API in this process, with what the
 *   front asks of the engine (the policy pack, a refresh before `up`), on the same stack: what the front adds;
 * - the Docker CLI creating and removing the same objects (`docker network create`, then per template `docker volume
 *   create` and `docker run` of the probe with the flags of its create body, attached to its end; `docker rm -f`,
 *   `docker volume rm`, `docker network rm`): what the engine itself costs.
 *
 * Each `up` must leave the project's objects on the engine and each `destroy` none; anything else stops the
 * benchmark. Writes min, median and p95 of each and the ratios as JSON. Not a test: it asserts no time.
 *   node --import tsx bench/updown.ts [--templates 10] [--runs 3] [--out bench/results/updown.json]
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { LocalWorkspace, PulumiCommand, Stack } from "@pulumi/pulumi/automation";
import { engineEnv, policyPackArg } from "../cli/engine";
import { PULUMI_PROJECT } from "../cli/identity";
import { hardenedContainerArgs } from "../components/docker/containerArgs";
import {
  launchSpec,
  PROBE_TIMEOUT_SECONDS,
  parseUser,
  probeEgressUrl,
  probeJobVolumeName,
  probeScript,
  projectLabels,
  projectNetworkName,
  resolveProject,
} from "../components/model";
import { containerCreateBody, type PlainContainerArgs } from "../runtime/docker/createBody";
import { sandboxProgram } from "../stacks/program";
import { inspectToolchain, pulumiHome } from "../toolchain/pulumi";
import { fmt, ONE_TASK_BUDGET, ROOT, runBenchmark, writeResult } from "./common";
import { dockerRunArgs } from "./launch";
import { option, summary } from "./stats";

/** The command line's options. */
export interface UpDownBenchOptions {
  readonly templates: number;
  readonly runs: number;
  readonly out: string;
}

/** Reads the options; a bad value stops with a message naming it. */
export function parseUpDownOptions(argv: readonly string[]): UpDownBenchOptions {
  const templates = Number(option(argv, "--templates") ?? 10);
  if (!Number.isInteger(templates) || templates < 1 || templates > 50)
    throw new Error(`--templates "${option(argv, "--templates")}": a whole number from 1 to 50`);
  const runs = Number(option(argv, "--runs") ?? 3);
  if (!Number.isInteger(runs) || runs < 1)
    throw new Error(`--runs "${option(argv, "--runs")}": a whole number ≥ 1`);
  return { templates, runs, out: option(argv, "--out") ?? join(ROOT, "bench", "results", "updown.json") };
}

/** The stack's config: N small templates, one task at a time, probes on. */
function projectConfig(name: string, templates: number) {
  return {
    name,
    backend: "docker",
    enabled: true,
    budget: ONE_TASK_BUDGET,
    templates: Object.fromEntries(
      Array.from({ length: templates }, (_, i) => [
        `t${i}`,
        {
          image: "sandbox-busybox:1",
          resources: { vcpu: 0.25, memoryMb: 64, pids: 64, tmpfsMb: 16 },
          timeoutSeconds: 60,
        },
      ]),
    ),
  };
}

function run(cmd: string, args: readonly string[]): string {
  const r = spawnSync(cmd, args, { cwd: ROOT, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0)
    throw new Error(
      `${cmd} ${args.slice(0, 3).join(" ")} failed (exit ${r.status}):\n${(r.stderr || r.stdout).slice(-2000)}`,
    );
  return r.stdout;
}

/** The project's objects on the engine: containers, volumes and networks carrying its label. */
function objectsOf(project: string): number {
  const filter = `label=sandbox.project=${project}`;
  return ["container ls -aq", "volume ls -q", "network ls -q"]
    .map((c) => run("docker", [...c.split(" "), "--filter", filter]).trim())
    .filter((s) => s !== "")
    .flatMap((s) => s.split("\n")).length;
}

async function timed(what: () => Promise<unknown> | unknown): Promise<number> {
  const start = process.hrtime.bigint();
  await what();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

/** Runs the benchmark; returns the JSON document it wrote. */
export async function runUpDownBench(options: UpDownBenchOptions) {
  const toolchain = inspectToolchain(ROOT, ["docker"]);
  if (toolchain.pulumi === undefined || toolchain.missing.length > 0)
    throw new Error(
      `the engine is not ready: ${toolchain.missing.join("; ")} (toolchain/setup.sh builds it)`,
    );
  const suffix = randomBytes(3).toString("hex");
  const stackName = `bench-updown-${suffix}`;
  const project = `bud-${suffix}`;
  const config = projectConfig(project, options.templates);
  const stackFile = join(ROOT, "stacks", `Pulumi.${stackName}.yaml`);
  writeFileSync(
    stackFile,
    `# bench/updown.ts's stack, removed when it ends.\nconfig:\n${Object.entries(config)
      .map(([k, v]) => `  sandbox:${k}: ${JSON.stringify(v)}`)
      .join("\n")}\n`,
  );
  const resolved = resolveProject(config);
  const network = projectNetworkName(project);
  const expected = 1 + 2 * options.templates;

  const workspace = await LocalWorkspace.create({
    program: sandboxProgram,
    workDir: ROOT,
    pulumiHome: pulumiHome(ROOT),
    pulumiCommand: await PulumiCommand.get({ root: dirname(dirname(toolchain.pulumi.path)) }),
    envVars: {
      ...engineEnv(ROOT),
      PATH: [...toolchain.pathPrepend, dirname(toolchain.pulumi.path), process.env.PATH ?? ""].join(":"),
    },
  });
  const policyPacks = policyPackArg(ROOT);
  let stack: Stack | undefined;
  const apiStack = async () => {
    stack ??= await Stack.createOrSelect(stackName, workspace);
    return stack;
  };

  const cliUp = () => {
    run("docker", [
      "network",
      "create",
      "--driver",
      "bridge",
      "--internal",
      "--opt",
      "com.docker.network.bridge.enable_icc=false",
      "--label",
      `sandbox.project=${project}`,
      network,
    ]);
    for (const template of Object.keys(resolved.spec.templates)) {
      const spec = launchSpec(resolved, template, network);
      const { uid, gid } = parseUser(spec.user);
      const volume = probeJobVolumeName(project, template);
      run("docker", [
        "volume",
        "create",
        "--driver",
        "local",
        "--opt",
        "type=tmpfs",
        "--opt",
        "device=tmpfs",
        "--opt",
        `o=size=${spec.tmpfs.sizeMb}m,uid=${uid},gid=${gid},mode=0700`,
        "--label",
        `sandbox.project=${project}`,
        volume,
      ]);
      const args = hardenedContainerArgs(
        { ...spec, timeoutSeconds: Math.min(spec.timeoutSeconds, PROBE_TIMEOUT_SECONDS) },
        { type: "volume", source: volume },
        {
          command: [
            "sh",
            "-c",
            probeScript({ jobFolder: spec.jobFolder.containerPath, egressUrl: probeEgressUrl(spec.egress) }),
          ],
          labels: projectLabels(project, "probe", template, spec.specHash),
        },
      ) as PlainContainerArgs;
      run("docker", [
        "run",
        ...dockerRunArgs(containerCreateBody(args, { name: `${project}-${template}-probe` })),
      ]);
    }
  };
  const cliDown = () => {
    const filter = `label=sandbox.project=${project}`;
    const ids = run("docker", ["container", "ls", "-aq", "--filter", filter])
      .trim()
      .split("\n")
      .filter(Boolean);
    if (ids.length > 0) run("docker", ["rm", "-f", ...ids]);
    const vols = run("docker", ["volume", "ls", "-q", "--filter", filter]).trim().split("\n").filter(Boolean);
    if (vols.length > 0) run("docker", ["volume", "rm", ...vols]);
    run("docker", ["network", "rm", network]);
  };

  const ways: Record<
    string,
    { up: () => Promise<unknown> | unknown; destroy: () => Promise<unknown> | unknown }
  > = {
    "./sandbox": {
      up: () => run(join(ROOT, "sandbox"), ["up", stackName]),
      destroy: () => run(join(ROOT, "sandbox"), ["destroy", stackName]),
    },
    "Automation API": {
      up: async () => (await apiStack()).up({ policyPacks, refresh: true }),
      destroy: async () => (await apiStack()).destroy(),
    },
    "docker CLI": { up: cliUp, destroy: cliDown },
  };
  const samples: Record<string, { up: number[]; destroy: number[] }> = {};
  const once = async (name: string, record: boolean) => {
    const way = ways[name];
    if (way === undefined) return;
    const up = await timed(way.up);
    const after = objectsOf(project);
    if (after < expected) throw new Error(`${name}: up left ${after} of the project's ${expected} objects`);
    const destroy = await timed(way.destroy);
    const left = objectsOf(project);
    if (left !== 0) throw new Error(`${name}: destroy left ${left} of the project's objects`);
    if (record) {
      samples[name] ??= { up: [], destroy: [] };
      samples[name].up.push(up);
      samples[name].destroy.push(destroy);
    }
  };
  const names = Object.keys(ways);
  try {
    for (const name of names) await once(name, false);
    for (let i = 0; i < options.runs; i++) {
      for (let j = 0; j < names.length; j++) await once(names[(i + j) % names.length] ?? "", true);
    }
  } finally {
    spawnSync(join(ROOT, "sandbox"), ["destroy", stackName], { cwd: ROOT });
    await workspace.removeStack(stackName, { force: true }).catch(() => undefined);
    rmSync(stackFile, { force: true });
  }

  const results = Object.fromEntries(
    Object.entries(samples).map(([k, v]) => [k, { up: summary(v.up), destroy: summary(v.destroy) }]),
  );
  const med = (way: string, verb: "up" | "destroy") => results[way]?.[verb].medianSeconds ?? Number.NaN;
  const ratios = Object.fromEntries(
    (["up", "destroy"] as const).map((verb) => [
      verb,
      {
        frontToAutomationApi: med("./sandbox", verb) / med("Automation API", verb),
        frontToDockerCli: med("./sandbox", verb) / med("docker CLI", verb),
        automationApiToDockerCli: med("Automation API", verb) / med("docker CLI", verb),
      },
    ]),
  );
  for (const verb of ["up", "destroy"] as const) {
    console.log(
      `${verb} of ${options.templates} templates: ${names.map((n) => `${n} ${fmt(med(n, verb), 2)} s`).join(", ")}; front / Automation API ${fmt(ratios[verb]?.frontToAutomationApi ?? Number.NaN, 2)}×`,
    );
  }
  const doc = {
    benchmark: "updown",
    date: new Date().toISOString(),
    templates: options.templates,
    objects: expected,
    runs: options.runs,
    project: PULUMI_PROJECT,
    front: (
      require(join(ROOT, "toolchain", "front.cjs")) as { freshBuild: (root: string) => boolean }
    ).freshBuild(ROOT)
      ? "compiled (dist/)"
      : "tsx (no fresh build)",
    load: run("cat", ["/proc/loadavg"]).trim(),
    results,
    ratios,
    goal: { frontToAutomationApi: 1.3 },
  };
  writeResult(options.out, doc);
  return doc;
}

if (require.main === module)
  runBenchmark(async () => void (await runUpDownBench(parseUpDownOptions(process.argv.slice(2)))));
