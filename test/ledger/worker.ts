// A launcher process of its own on a shared ledger (a SQLite file, or a PostgreSQL URL), for test/ledger/ledger.test.ts
// and test/postgres/stores.test.ts:
//   worker.ts <file> launch <n> <tag> <t>   from time t, admits n runs, each closed at once at its full maximum
//   worker.ts <file> hold               admits one run ("held") and waits to be killed
//   worker.ts <file> burst <n> <tag> <t>    at time t, asks for n admissions all at once (5 slots), leaves them open
import { BudgetRefused, Ledger, type Meter } from "../../runtime/ledger";

const [file = "", mode = "", count = "0", tag = "w", startAt = "0"] = process.argv.slice(2);
const meter: Meter = {
  project: "meter-test",
  enforce: "metered",
  // Fifteen runs at their maximum ($0.10 each): one launcher's ten cannot take them all, so two launchers both
  // launch, whichever starts first and however slowly the other starts.
  capUsd: 1.5,
  fixedUsd: 0,
  rates: { usdPerVcpuHour: 3.6, usdPerGbHour: 0 },
  concurrency: 100,
  agents: {},
  templates: ["default"],
  enabled: true,
};
const request = (id: string) => ({
  id,
  template: "default",
  specHash: "abc",
  command: ["true"],
  container: `${id}-container`,
  size: { vcpu: 1, memoryMb: 1024 },
  maxSeconds: 100,
});

/** Sleeps the thread (a launcher's work between two launches). */
const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

async function main(): Promise<void> {
  const m = mode === "burst" ? { ...meter, concurrency: 5 } : meter;
  const ledger = file.startsWith("postgresql:") ? await Ledger.connect(file, m) : Ledger.open(file, m);
  if (mode === "launch") {
    while (Date.now() < Number(startAt)) pause(5);
    for (let i = 0; i < Number(count); i++) {
      pause(20);
      try {
        const run = await ledger.admit(request(`${tag}-${i}`));
        await ledger.complete(run.id, { exitCode: 0 }, "done", run.admittedAt + run.maxSeconds * 1000);
      } catch (e) {
        if (!(e instanceof BudgetRefused)) throw e;
      }
    }
    await ledger.close();
  } else if (mode === "burst") {
    while (Date.now() < Number(startAt)) pause(5);
    const all = await Promise.allSettled(
      Array.from({ length: Number(count) }, (_, i) => ledger.admit(request(`${tag}-${i}`))),
    );
    for (const r of all) if (r.status === "rejected" && !(r.reason instanceof BudgetRefused)) throw r.reason;
    await ledger.close();
  } else if (mode === "hold") {
    await ledger.admit(request("held"));
    setInterval(() => undefined, 1000);
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
