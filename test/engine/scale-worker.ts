// One launcher process of the scale runs (test/engine/scale.ts): a KubeLauncher on the project's namespace with the
// project's ledger on PostgreSQL, launching `tasks` tasks of `true`, `concurrency` at once. It measures each task
// (its admission in the ledger, from its admission to its pod running, to its end) and itself (memory, the API
// requests its clients made, the ledger's transactions and reads), and prints one JSON line at the end.
//   node --import tsx test/engine/scale-worker.ts '<json: WorkerArgs>'
import { launchSpec } from "../../components/model";
import { kubeApis } from "../../runtime/kubernetes/api";
import { KubeLauncher } from "../../runtime/kubernetes/launcher";
import { BudgetRefused, Ledger, meterOf } from "../../runtime/ledger";
import { projectFromConfig } from "../../stacks/config";
import { sandboxConfigMap } from "./workspace";

/** What the orchestrator gives a worker. */
export interface WorkerArgs {
  readonly kubeconfig: string;
  readonly ledgerUrl: string;
  /** The project's `sandbox:` config, as the stack was deployed with. */
  readonly config: Readonly<Record<string, unknown>>;
  readonly stack: string;
  readonly tasks: number;
  readonly concurrency: number;
  /** Each task's id is `<prefix>-<n>`. */
  readonly prefix: string;
}

/** What a worker prints. */
export interface WorkerReport {
  readonly launched: number;
  readonly admitted: number;
  readonly completed: number;
  /** Tasks the meter stopped when the month's spend reached the cap. */
  readonly stoppedAtCap: number;
  /** Refused launches by the ledger's reason (`cap`, `concurrency`, …), and one message of each. */
  readonly refused: Record<string, { count: number; example: string }>;
  readonly failed: { count: number; example?: string };
  /** Per admitted task, ms: the ledger's admission; from its admission to its pod running. */
  readonly admissionMs: number[];
  readonly launchToRunningMs: number[];
  readonly apiRequests: number;
  readonly ledgerWrites: number;
  readonly ledgerReads: number;
  readonly maxRssBytes: number;
  /** The most the JavaScript heap held (live objects and garbage not yet collected). */
  readonly maxHeapBytes: number;
  readonly wallMs: number;
}

async function main(): Promise<void> {
  const args = JSON.parse(process.argv[2] ?? "{}") as WorkerArgs;
  const project = projectFromConfig(sandboxConfigMap(args.config), args.stack);
  const spec = launchSpec(project, "default", "none");
  const apis = await kubeApis({ kubeconfig: args.kubeconfig });
  const ledger = await Ledger.connect(args.ledgerUrl, meterOf(project));
  // The ledger's traffic, counted where the launcher reaches its store.
  let writes = 0;
  let reads = 0;
  const store = ledger.store;
  const write = store.write.bind(store);
  store.write = ((fn, options) => {
    writes++;
    return write(fn, options);
  }) as typeof store.write;
  for (const m of ["all", "get", "run"] as const) {
    const f = store[m].bind(store) as (...a: unknown[]) => unknown;
    (store as unknown as Record<string, unknown>)[m] = (...a: unknown[]) => {
      reads++;
      return f(...a);
    };
  }
  // Each admission timed; its end is where launch-to-running starts.
  const admittedAt = new Map<string, number>();
  const admissionMs: number[] = [];
  const admit = ledger.admit.bind(ledger);
  ledger.admit = async (req) => {
    const t = performance.now();
    const run = await admit(req);
    admissionMs.push(performance.now() - t);
    admittedAt.set(req.id, performance.now());
    return run;
  };
  const launchToRunningMs: number[] = [];
  const launcher = new KubeLauncher(apis, project.spec.name, {
    ledger,
    maxConcurrent: args.concurrency,
    onEvent: (e) => {
      const at = admittedAt.get(e.id);
      if (e.type === "running" && at !== undefined) launchToRunningMs.push(performance.now() - at);
    },
  });
  let maxRss = process.memoryUsage().rss;
  let maxHeap = process.memoryUsage().heapUsed;
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    maxRss = Math.max(maxRss, m.rss);
    maxHeap = Math.max(maxHeap, m.heapUsed);
  }, 200);
  const refused: Record<string, { count: number; example: string }> = {};
  const failed: { count: number; example?: string } = { count: 0 };
  let completed = 0;
  let stoppedAtCap = 0;
  const t0 = performance.now();
  let next = 0;
  const one = async (n: number) => {
    const id = `${args.prefix}-${n}`;
    try {
      const r = await launcher.run(spec, { id, command: ["true"] });
      if (r.exitCode === 0) completed++;
      else if (r.stoppedByCap) stoppedAtCap++;
      else {
        failed.count++;
        failed.example ??= `${id}: exit ${r.exitCode} limits ${JSON.stringify(r.limits)} killed ${r.killedByLauncher} capStop ${r.stoppedByCap} ${r.durationMs} ms stdout ${JSON.stringify(r.stdout.slice(0, 200))} stderr ${JSON.stringify(r.stderr.slice(0, 300))}`;
      }
    } catch (e) {
      if (e instanceof BudgetRefused) {
        const slot = refused[e.reason] ?? { count: 0, example: e.message };
        slot.count++;
        refused[e.reason] = slot;
      } else {
        failed.count++;
        failed.example ??= `${id}: ${e instanceof Error ? e.message : String(e)}`;
      }
    }
  };
  await Promise.all(
    Array.from({ length: args.concurrency }, async () => {
      while (next < args.tasks) await one(next++);
    }),
  );
  const wallMs = performance.now() - t0;
  clearInterval(sampler);
  await launcher.shutdown();
  await ledger.close();
  const report: WorkerReport = {
    launched: args.tasks,
    admitted: admissionMs.length,
    completed,
    stoppedAtCap,
    refused,
    failed,
    admissionMs,
    launchToRunningMs,
    apiRequests: apis.requests(),
    ledgerWrites: writes,
    ledgerReads: reads,
    maxRssBytes: maxRss,
    maxHeapBytes: maxHeap,
    wallMs,
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`scale worker: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
