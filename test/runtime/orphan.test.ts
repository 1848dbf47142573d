// An orphaned task on a real engine: a task kills its in-container timer and sleeps, and its launcher (a process of
// its own) is SIGKILLed. Without any further verb, the watchdog the launcher started, which outlives it, stops the
// task at its deadline (and leaves alone a task whose deadline has not passed); the next verb of any kind that opens
// the ledger (here `audit`) charges what each ran by the engine's clock and removes what they left.
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type Dockerode from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runLedgerVerb } from "../../cli/ledger";
import { ledgerFile } from "../../cli/ledger-file";
import { type ProjectInput, taskContainerName, taskUsd } from "../../components/model";
import { Ledger, meterOf, type RunRecord } from "../../runtime/ledger";
import { offSwitch, projectLeftovers } from "../../runtime/offSwitch";
import { watchDir } from "../../runtime/orphan-watch";
import { requireDocker, TEST_IMAGE, testProject } from "../helpers/docker";

/** $120 a vCPU-hour: `short` (1 vCPU, 6 s deadline, 1 s grace) costs at most $0.233 a run. */
const TEMPLATES: ProjectInput["templates"] = {
  short: { image: TEST_IMAGE, timeoutSeconds: 6, resources: { vcpu: 1, memoryMb: 64, tmpfsMb: 8 } },
  slow: { image: TEST_IMAGE, timeoutSeconds: 300, resources: { vcpu: 0.1, memoryMb: 64, tmpfsMb: 8 } },
};
const BUDGET: ProjectInput["budget"] = {
  monthlyCapUsd: 50,
  usdPerVcpuHour: 120,
  usdPerGbHour: 0,
  enforce: "metered",
  maxConcurrentTasks: 4,
};
/** The task's attack: kill the in-container deadline (busybox `timeout` watches from a process of its own), sleep. */
const EVADE = [
  "sh",
  "-c",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a template
  'for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = timeout ] && kill -9 ${p#/proc/}; done; sleep 600',
];

let docker: Dockerode;
const project = testProject("orph", TEMPLATES, BUDGET);
const name = project.spec.name;
const file = ledgerFile(project, {});

beforeAll(async () => {
  docker = await requireDocker();
});
afterAll(async () => {
  if (docker) await offSwitch(docker, name);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every 200 ms until it is true or `ms` passed; returns whether it became true. */
async function until(check: () => Promise<boolean> | boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await sleep(200);
  }
  return check();
}

/** The processes of this machine whose command line holds `text`. */
function processesWith(text: string): number[] {
  const out: number[] = [];
  for (const p of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
    try {
      if (readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0").includes(text)) out.push(Number(p));
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

describe("a task that kills its in-container timer, whose launcher is SIGKILLed", () => {
  it("is stopped at its deadline without any further verb, and the next verb charges what it ran", async () => {
    const tag = Math.random().toString(36).slice(2, 8);
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        join(__dirname, "orphan-worker.ts"),
        file,
        JSON.stringify(project),
        tag,
        JSON.stringify(EVADE),
        "short",
        "slow",
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise((r) => child.on("exit", r));
    const short = docker.getContainer(taskContainerName(name, `short-${tag}`));
    const slow = docker.getContainer(taskContainerName(name, `slow-${tag}`));
    try {
      expect(
        await until(
          () => out.includes(`started short-${tag}`) && out.includes(`started slow-${tag}`),
          60_000,
        ),
        out,
      ).toBe(true);
      // Each task has killed its in-container timer: no `timeout` process is left in its container.
      const timerGone = async (c: Dockerode.Container) => {
        const top = (await c.top()) as { Processes?: string[][] };
        return !(top.Processes ?? []).some((p) => p.at(-1)?.startsWith("timeout ") === true);
      };
      expect(await until(async () => (await timerGone(short)) && (await timerGone(slow)), 10_000)).toBe(true);
    } finally {
      child.kill("SIGKILL");
      await exited;
    }
    const killedAt = Date.now();
    const dir = watchDir(project.jobRoot);
    expect(readdirSync(dir).sort()).toEqual([`short-${tag}.json`, `slow-${tag}.json`]);

    // No verb runs from here: the watchdog the dead launcher left stops the short task at its deadline.
    const stopped = await until(async () => !(await short.inspect()).State.Running, 90_000);
    expect(stopped).toBe(true);
    const info = await short.inspect();
    const ran = Date.parse(info.State.FinishedAt) - Date.parse(info.State.StartedAt);
    // Never before its deadline (6 s from its start on the engine's clock); well before the 600 s it asked for.
    expect(ran).toBeGreaterThanOrEqual(6_000);
    expect(ran).toBeLessThan(60_000);
    // The negative control: the slow task's deadline (300 s) has not passed; the watchdog leaves it running.
    expect((await slow.inspect()).State.Running).toBe(true);
    expect(readdirSync(dir)).toEqual([`slow-${tag}.json`]);
    const before = Ledger.open(file, meterOf(project));
    expect((await before.runs()).map((r) => r.status)).toEqual(["open", "open"]);
    await before.close();

    // The next verb, of any kind that opens the ledger: it reconciles first.
    const err: string[] = [];
    const outDoc: string[] = [];
    const code = await runLedgerVerb(
      "audit",
      "orphans",
      project,
      [],
      file,
      { out: (t) => outDoc.push(t), err: (t) => err.push(t) },
      true,
    );
    expect(code).toBe(0);
    const runs = (JSON.parse(outDoc.join("")) as { runs: RunRecord[] }).runs;
    const byTemplate = Object.fromEntries(runs.map((r) => [r.template, r]));
    const s = byTemplate.short as RunRecord;
    const rates = meterOf(project).rates;
    expect(s).toMatchObject({ status: "reconciled", exitCode: 137 });
    // What it ran by the engine's clock: more than up to its launcher's death, at most its maximum.
    expect(s.chargeUsd).toBeCloseTo(taskUsd(s.size, rates, ran / 1000), 9);
    expect(s.chargeUsd).toBeGreaterThan(taskUsd(s.size, rates, (killedAt - s.admittedAt) / 1000));
    expect(s.chargeUsd).toBeLessThanOrEqual(s.maxChargeUsd);
    // The slow task was stopped by the verb and charged to then: a part of its maximum.
    const l = byTemplate.slow as RunRecord;
    expect(l.status).toBe("reconciled");
    expect(l.chargeUsd).toBeGreaterThan(0);
    expect(l.chargeUsd).toBeLessThan(l.maxChargeUsd / 4);
    expect(err.join("")).toMatch(new RegExp(`note: run short-${tag} \\(template short\\) was left open`));
    expect(err.join("")).toMatch(new RegExp(`note: run slow-${tag} \\(template slow\\) was left open`));

    const ledger = Ledger.open(file, meterOf(project));
    try {
      const alerts = (await ledger.alerts({ kind: "reconciled" })).map((a) => a.message);
      expect(alerts.find((m) => m.startsWith(`run short-${tag}`))).toMatch(
        /the engine says it ran \d+\.\d s; it was charged \$0\.\d+; its container, job folder and task network were removed$/,
      );
      expect(alerts.find((m) => m.startsWith(`run slow-${tag}`))).toMatch(
        /\(it was still running and was stopped now\)/,
      );
    } finally {
      await ledger.close();
    }
    // Nothing is left: no container, no job folder, no watch folder; the watchdog has nothing to watch and exits.
    expect(await projectLeftovers(docker, name)).toEqual([]);
    expect(existsSync(join(project.jobRoot, `short-${tag}`))).toBe(false);
    expect(existsSync(join(project.jobRoot, `slow-${tag}`))).toBe(false);
    expect(existsSync(dir)).toBe(false);
    expect(await until(() => processesWith(dir).length === 0, 15_000)).toBe(true);
  }, 240_000);
});
