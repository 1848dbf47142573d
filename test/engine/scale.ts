// Many launchers, one cap, many nodes: a control plane with `nodes` simulated nodes (kwok, test/engine/kwok.ts), a
// project deployed to it by the stack, one ledger on a local PostgreSQL, and `launchers` launcher processes
// (test/engine/scale-worker.ts) launching `tasks` tasks together under a cap that admits fewer. While they run it
// watches the invariants: the month's charges never cross the cap (read from the ledger every 100 ms), every admitted
// task has one ledger row and one Job (every Job the API server ever held, from a watch), a launcher SIGKILLed part
// way leaves nothing open once the next one has started, and the off switch leaves no object of the project. Used by
// the benchmark (bench/kube-scale.ts) and, smaller, by its test (test/scale/).
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LABELS } from "../../components/model";
import { kubeApis } from "../../runtime/kubernetes/api";
import { kubeOffSwitch } from "../../runtime/kubernetes/off";
import { type LocalPostgres, startLocalPostgres } from "../../runtime/ledger/local-postgres";
import { PostgresLedgerStore } from "../../runtime/ledger/postgres";
import { sandboxProgram } from "../../stacks/program";
import { startCluster } from "./cluster";
import type { WorkerArgs, WorkerReport } from "./scale-worker";
import { requireEngineToolchain, requireKwokToolchain } from "./toolchain";
import { engineWorkspace, setSandboxConfig } from "./workspace";

export interface ScaleOptions {
  readonly nodes: number;
  readonly tasks: number;
  readonly launchers: number;
  /** Tasks each launcher runs at once. */
  readonly concurrency: number;
  /** The month's cap; each task is charged about 1 to 3 s of 1 vCPU at $3.6/h ($0.001/s). */
  readonly capUsd: number;
  /** SIGKILL the first launcher once the charges reach this share of the cap, and start another for the rest. */
  readonly killAt?: number;
  readonly log?: (line: string) => void;
}

export interface ScaleReport {
  readonly options: Omit<ScaleOptions, "log">;
  readonly wallSeconds: number;
  readonly workers: WorkerReport[];
  readonly admitted: number;
  readonly refused: Record<string, { count: number; example: string }>;
  readonly failed: number;
  readonly failedExample?: string;
  /** Tasks running when the month's spend reached the cap, stopped by the meter. */
  readonly stoppedAtCap: number;
  readonly admittedPerSecond: number;
  readonly admissionMs: { p50: number; p99: number };
  readonly launchToRunningMs: { p50: number; p99: number };
  /** API requests per admitted task, and per launch asked for (a refused launch reads the PodTemplate first). */
  readonly apiRequestsPerTask: number;
  readonly apiRequestsPerLaunch: number;
  readonly ledgerWritesPerTask: number;
  readonly ledgerReadsPerTask: number;
  readonly maxLauncherRssMiB: number;
  readonly maxLauncherHeapMiB: number;
  /** The invariants, each with what was seen. */
  readonly invariants: {
    /** The highest month's charges read while the launchers ran, and the cap. */
    readonly maxChargesUsd: number;
    readonly capUsd: number;
    /**
     * Ledger rows of the project and Jobs ever created; rows with more than one Job; rows with none, apart from those
     * a launcher was killed between admitting and creating (reconciled: it never started); Jobs with no row.
     */
    readonly ledgerRows: number;
    readonly jobsCreated: number;
    readonly rowsWithManyJobs: string[];
    readonly rowsWithoutJob: string[];
    readonly reconciledWithoutJob: number;
    readonly jobsWithoutRow: string[];
    /** Runs still open once every launcher ended, and the killed launcher's runs reconciled. */
    readonly openRuns: number;
    readonly reconciled: number;
    /** Objects of the project the API server holds after the off switch. */
    readonly leftAfterOff: number;
  };
}

const quantile = (xs: number[], q: number) => {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? Number.NaN;
};

/** A worker process; resolves with its report (undefined when it was killed or failed, `error` then). */
function startWorker(args: WorkerArgs): {
  child: ChildProcess;
  done: Promise<{ report?: WorkerReport; error?: string }>;
} {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", join(__dirname, "scale-worker.ts"), JSON.stringify(args)],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let out = "";
  let err = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const done = new Promise<{ report?: WorkerReport; error?: string }>((resolve) =>
    child.on("exit", (code, signal) => {
      const line = out.trim().split("\n").pop() ?? "";
      if (code === 0 && line.startsWith("{")) resolve({ report: JSON.parse(line) as WorkerReport });
      else resolve({ error: `worker ${args.prefix} ended ${code ?? signal}: ${err.slice(-2000)}` });
    }),
  );
  return { child, done };
}

/** Runs the whole scale scenario and returns what it measured; throws only when it could not run. */
export async function runScale(options: ScaleOptions): Promise<ScaleReport> {
  const log = options.log ?? (() => undefined);
  const tools = requireEngineToolchain();
  const kwok = await requireKwokToolchain();
  const scratch = mkdtempSync(join(tmpdir(), "sbx-scale-"));
  // Run as root, the server runs as the postgres user, which must reach its folder.
  chmodSync(scratch, 0o755);
  let pg: LocalPostgres | undefined;
  const cluster = await startCluster(tools, {
    simulated: { kwok: kwok.kwok, scheduler: kwok.kubeScheduler, nodes: options.nodes },
  });
  const ws = await engineWorkspace(tools);
  const project = `sc-${randomBytes(3).toString("hex")}`;
  const kubeconfig = join(cluster.dir, "kubeconfig.json");
  writeFileSync(kubeconfig, cluster.kubeconfig);
  const stack = await ws.newStack("scale", sandboxProgram);
  const workers: ReturnType<typeof startWorker>[] = [];
  try {
    log(`${options.nodes} simulated nodes ready; deploying project ${project}`);
    pg = await startLocalPostgres(join(scratch, "pg"), { fast: true });
    const total = options.launchers * options.concurrency;
    const config = {
      name: project,
      backend: "kubernetes",
      kubernetes: { kubeconfig },
      budget: {
        monthlyCapUsd: options.capUsd,
        enforce: "metered",
        usdPerVcpuHour: 3.6,
        usdPerGbHour: 0,
        maxConcurrentTasks: total,
      },
      probe: false,
      templates: { default: { image: "sandbox-busybox:1", timeoutSeconds: 10, resources: { vcpu: 1 } } },
    };
    await setSandboxConfig(stack, config);
    const up = await stack.up();
    if (up.summary.result !== "succeeded") throw new Error(`up: ${up.summary.result}`);

    const apis = await kubeApis({ kubeconfig });
    const k8s = await import("@kubernetes/client-node");
    // Every Job the API server holds, from the start: each run id and the Jobs (by uid) that carried it. A list,
    // then a watch from its version, resumed from the last version seen when the server ends it (it does, every few
    // minutes), listed again when that version is too old.
    const jobsByRun = new Map<string, Set<string>>();
    type JobObj = { metadata?: { uid?: string; resourceVersion?: string; labels?: Record<string, string> } };
    const seeJob = (job: JobObj) => {
      const run = job.metadata?.labels?.[LABELS.task];
      const uid = job.metadata?.uid;
      if (run === undefined || uid === undefined) return;
      const set = jobsByRun.get(run) ?? new Set<string>();
      set.add(uid);
      jobsByRun.set(run, set);
    };
    let watching = true;
    let current: { abort(): void } | undefined;
    const follow = (async () => {
      let version: string | undefined;
      while (watching) {
        if (version === undefined) {
          const list = await apis.batch.listNamespacedJob({ namespace: project }).catch(() => undefined);
          for (const j of list?.items ?? []) seeJob(j as JobObj);
          version = list?.metadata?.resourceVersion;
          if (version === undefined) {
            await new Promise((r) => setTimeout(r, 200));
            continue;
          }
        }
        const ended = await new Promise<string | undefined>((resolve) => {
          let last = version;
          new k8s.Watch(apis.config)
            .watch(
              `/apis/batch/v1/namespaces/${project}/jobs`,
              { resourceVersion: version, allowWatchBookmarks: true },
              (type, job: JobObj & { code?: number }) => {
                if (type === "ERROR") {
                  last = undefined;
                  return;
                }
                if (type === "ADDED" || type === "MODIFIED") seeJob(job);
                last = job.metadata?.resourceVersion ?? last;
              },
              () => resolve(last),
            )
            .then((req) => {
              current = req;
            })
            .catch(() => resolve(undefined));
        });
        version = ended;
      }
    })();
    // The month's charges, read as every launcher writes them.
    const watcher = await PostgresLedgerStore.connect(pg.url, { connections: 1 });
    let maxCharges = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const row = await watcher
          .get("SELECT COALESCE(SUM(charge_usd), 0) AS usd FROM runs WHERE project = ?", [project])
          .catch(() => undefined);
        maxCharges = Math.max(maxCharges, Number(row?.usd ?? 0));
        await new Promise((r) => setTimeout(r, 100));
      }
    })();

    const per = Math.floor(options.tasks / options.launchers);
    const args = (tasks: number, prefix: string): WorkerArgs => ({
      kubeconfig,
      ledgerUrl: pg?.url ?? "",
      config,
      stack: "scale",
      tasks,
      concurrency: options.concurrency,
      prefix,
    });
    log(
      `${options.launchers} launchers, ${options.tasks} tasks, ${options.concurrency} at once each, cap $${options.capUsd}`,
    );
    const t0 = performance.now();
    for (let i = 0; i < options.launchers; i++) {
      const tasks = i === options.launchers - 1 ? options.tasks - per * (options.launchers - 1) : per;
      workers.push(startWorker(args(tasks, `w${i}`)));
    }
    let reconciled = 0;
    let killedAfter = 0;
    if (options.killAt !== undefined) {
      // The first launcher SIGKILLed once the month's charges reach `killAt` of the cap (its tasks running then are
      // left open in the ledger); another launcher takes the rest of its share.
      for (;;) {
        if (maxCharges >= options.capUsd * options.killAt || workers[0]?.child.exitCode !== null) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      workers[0]?.child.kill("SIGKILL");
      await workers[0]?.done;
      killedAfter = [...jobsByRun.keys()].filter((r) => r.startsWith("w0-")).length;
      log(
        `launcher w0 SIGKILLed after ${killedAfter} of its tasks had Jobs; w0b takes the other ${per - killedAfter}`,
      );
      workers.push(startWorker(args(Math.max(0, per - killedAfter), "w0b")));
    }
    const results = await Promise.all(workers.map((w) => w.done));
    const wallSeconds = (performance.now() - t0) / 1000;
    sampling = false;
    await sampler;
    watching = false;
    current?.abort();
    await follow;
    const reports = results.flatMap((r) => (r.report === undefined ? [] : [r.report]));
    const errors = results.flatMap((r, i) =>
      r.error === undefined || (i === 0 && options.killAt !== undefined) ? [] : [r.error],
    );
    if (errors.length > 0) throw new Error(errors.join("\n"));

    const rows = await watcher.all("SELECT id, status, error FROM runs WHERE project = ?", [project]);
    const open = rows.filter((r) => r.status === "open").length;
    reconciled = rows.filter((r) => r.status === "reconciled").length;
    const ids = new Set(rows.map((r) => String(r.id)));
    const rowsWithManyJobs = [...ids].filter((id) => (jobsByRun.get(id)?.size ?? 0) > 1);
    const jobless = rows.filter((r) => !jobsByRun.has(String(r.id)));
    const reconciledWithoutJob = jobless.filter((r) => r.status === "reconciled").length;
    const rowsWithoutJob = jobless
      .filter((r) => r.status !== "reconciled")
      .map((r) => `${String(r.id)} (${String(r.status)}: ${String(r.error ?? "").slice(0, 200)})`);
    const jobsWithoutRow = [...jobsByRun.keys()].filter((id) => !ids.has(id));
    const finalCharges = Number(
      (await watcher.get("SELECT COALESCE(SUM(charge_usd), 0) AS usd FROM runs WHERE project = ?", [project]))
        ?.usd ?? 0,
    );
    maxCharges = Math.max(maxCharges, finalCharges);
    await watcher.close();

    log("off switch");
    await kubeOffSwitch(apis, project);
    const selector = { namespace: project, labelSelector: `${LABELS.project}=${project}` };
    let left = 0;
    for (let i = 0; i < 120; i++) {
      const [jobs, pods, maps] = await Promise.all([
        apis.batch.listNamespacedJob(selector),
        apis.core.listNamespacedPod(selector),
        apis.core.listNamespacedConfigMap(selector),
      ]);
      left = jobs.items.length + pods.items.length + maps.items.length;
      if (left === 0) break;
      await new Promise((r) => setTimeout(r, 500));
    }

    const all = (f: (r: WorkerReport) => number[]) => reports.flatMap(f);
    const refused: Record<string, { count: number; example: string }> = {};
    for (const r of reports) {
      for (const [k, v] of Object.entries(r.refused)) {
        const slot = refused[k] ?? { count: 0, example: v.example };
        slot.count += v.count;
        refused[k] = slot;
      }
    }
    const admitted = rows.length;
    const sum = (f: (r: WorkerReport) => number) => reports.reduce((n, r) => n + f(r), 0);
    const launched = sum((r) => r.launched);
    return {
      options: {
        nodes: options.nodes,
        tasks: options.tasks,
        launchers: options.launchers,
        concurrency: options.concurrency,
        capUsd: options.capUsd,
        ...(options.killAt === undefined ? {} : { killAt: options.killAt }),
      },
      wallSeconds,
      workers: reports.map((r) => ({ ...r, admissionMs: [], launchToRunningMs: [] })),
      admitted,
      refused,
      failed: sum((r) => r.failed.count),
      stoppedAtCap: sum((r) => r.stoppedAtCap),
      ...(reports.find((r) => r.failed.example !== undefined)?.failed.example === undefined
        ? {}
        : { failedExample: reports.find((r) => r.failed.example !== undefined)?.failed.example }),
      admittedPerSecond: admitted / wallSeconds,
      admissionMs: {
        p50: quantile(
          all((r) => r.admissionMs),
          0.5,
        ),
        p99: quantile(
          all((r) => r.admissionMs),
          0.99,
        ),
      },
      launchToRunningMs: {
        p50: quantile(
          all((r) => r.launchToRunningMs),
          0.5,
        ),
        p99: quantile(
          all((r) => r.launchToRunningMs),
          0.99,
        ),
      },
      apiRequestsPerLaunch: sum((r) => r.apiRequests) / Math.max(1, launched),
      apiRequestsPerTask:
        sum((r) => r.apiRequests) /
        Math.max(
          1,
          sum((r) => r.admitted),
        ),
      ledgerWritesPerTask: sum((r) => r.ledgerWrites) / Math.max(1, launched),
      ledgerReadsPerTask: sum((r) => r.ledgerReads) / Math.max(1, launched),
      maxLauncherRssMiB: Math.max(...reports.map((r) => r.maxRssBytes)) / 1024 / 1024,
      maxLauncherHeapMiB: Math.max(...reports.map((r) => r.maxHeapBytes)) / 1024 / 1024,
      invariants: {
        maxChargesUsd: maxCharges,
        capUsd: options.capUsd,
        ledgerRows: rows.length,
        jobsCreated: [...jobsByRun.values()].reduce((a, b) => a + b.size, 0),
        rowsWithManyJobs,
        rowsWithoutJob,
        reconciledWithoutJob,
        jobsWithoutRow,
        openRuns: open,
        reconciled,
        leftAfterOff: left,
      },
    };
  } finally {
    for (const w of workers) if (w.child.exitCode === null) w.child.kill("SIGKILL");
    await ws.dispose(stack).catch(() => undefined);
    ws.cleanup();
    await cluster.stop();
    await pg?.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}
