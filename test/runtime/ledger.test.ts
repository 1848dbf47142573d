import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Dockerode from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { runLedgerVerb } from "../../cli/ledger";
import { ledgerFile } from "../../cli/ledger-file";
import { main } from "../../cli/main";
import { runTaskVerb } from "../../cli/runtime";
import type { ProjectInput } from "../../components/model";
import { Launcher, type TaskResult } from "../../runtime/launcher";
import { BudgetRefused, Ledger, meterOf } from "../../runtime/ledger";
import { AlertOutbox, alertSinks } from "../../runtime/ledger/alerts";
import { offSwitch, projectLeftovers } from "../../runtime/offSwitch";
import { policyPreflight } from "../../runtime/preflight";
import { requireDocker, specOf, TEST_IMAGE, testProject } from "../helpers/docker";

/**
 * A metered project on a tiny cap at a high rate: $120 a vCPU-hour is $1/30 a vCPU-second. `quick` (1 vCPU, 3 s
 * deadline, 1 s grace) costs at most $0.133 a run, `tick` a tenth of that, `long` (0.24 vCPU, 14 s) at most $0.12.
 */
const TEMPLATES: ProjectInput["templates"] = {
  quick: { image: TEST_IMAGE, timeoutSeconds: 3, resources: { vcpu: 1, memoryMb: 64, tmpfsMb: 8 } },
  tick: { image: TEST_IMAGE, timeoutSeconds: 3, resources: { vcpu: 0.1, memoryMb: 64, tmpfsMb: 8 } },
  long: { image: TEST_IMAGE, timeoutSeconds: 14, resources: { vcpu: 0.24, memoryMb: 64, tmpfsMb: 8 } },
};
const BUDGET: ProjectInput["budget"] = {
  monthlyCapUsd: 1,
  usdPerVcpuHour: 120,
  usdPerGbHour: 0,
  enforce: "metered",
  maxConcurrentTasks: 4,
};

let docker: Dockerode;
const project = testProject("led", TEMPLATES, BUDGET);
const name = project.spec.name;
/** A front root of its own: the stack file `up` reads, and the ledger the task verbs keep beside it. */
const root = mkdtempSync(join(tmpdir(), `${name}-root-`));
const stack = "meter";
const file = ledgerFile(project, {});

beforeAll(async () => {
  docker = await requireDocker();
  mkdirSync(join(root, "stacks"), { recursive: true });
  writeFileSync(
    join(root, "stacks", `Pulumi.${stack}.yaml`),
    stringify({
      config: {
        "sandbox:name": name,
        "sandbox:jobRoot": project.jobRoot,
        "sandbox:budget": BUDGET,
        "sandbox:templates": TEMPLATES,
        "sandbox:probe": false,
      },
    }),
  );
});
afterAll(async () => {
  // With the job root: the folders tasks kept are removed too (unmounted where they had a disk of their own).
  if (docker) await offSwitch(docker, name, { jobRoot: project.jobRoot });
});

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (t: string) => out.push(t), err: (t: string) => err.push(t) }, out, err };
}

describe("the meter on a real engine", () => {
  it("crosses 80 and 90 % with one alert each (also at a local webhook), stops the running tasks at the cap, refuses the next launch and up; a raised cap lifts it", async () => {
    const received: { kind: string }[] = [];
    const server = createServer((rq, rs) => {
      let b = "";
      rq.on("data", (d: Buffer) => {
        b += d.toString();
      });
      rq.on("end", () => {
        received.push(JSON.parse(b) as { kind: string });
        rs.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const webhook = `http://127.0.0.1:${(server.address() as AddressInfo).port}/alerts`;
    const outbox = new AlertOutbox();
    const ledger = Ledger.open(file, meterOf(project), {
      sinks: alertSinks({ stderr: false, webhook }, outbox),
    });
    const launcher = new Launcher(docker, { preflight: policyPreflight(), ledger, graceSeconds: 1 });
    try {
      // Short tasks until the spend is between 80 % and 86 %: the room two `long` runs need to cross the cap.
      for (let i = 0; i < 60; i++) {
        const spent = (await ledger.spend()).spentUsd;
        if (spent >= 0.8) break;
        const template = spent + 0.134 <= 0.86 ? "quick" : "tick";
        const r = await launcher.run(specOf(project, template), { command: ["sleep", "1"] });
        expect(r.exitCode).toBe(0);
        expect(r.chargeUsd).toBeGreaterThan(0);
      }
      const before = await ledger.spend();
      expect(before.fraction).toBeGreaterThanOrEqual(0.8);
      expect(before.fraction).toBeLessThanOrEqual(0.88);
      expect((await ledger.alerts()).map((a) => a.kind)).toEqual(["budget-80"]);

      // Two long tasks at once: each fits alone, together they reach the cap before their deadlines.
      const long = await Promise.all([
        launcher.run(specOf(project, "long"), { command: ["sleep", "60"] }),
        launcher.run(specOf(project, "long"), { command: ["sleep", "60"] }),
      ]);
      for (const r of long as TaskResult[]) {
        expect(r).toMatchObject({ stoppedByCap: true, exitCode: 137 });
        expect(r.durationMs).toBeLessThan(14_000);
      }
      const after = await ledger.spend();
      expect(after.blocked).toBe(true);
      const charged = (await ledger.runs()).reduce((s, r) => s + (r.chargeUsd ?? 0), 0);
      expect(charged).toBeLessThanOrEqual(1 + 1e-9);
      expect(charged).toBeGreaterThan(0.999);
      const kinds = (await ledger.alerts()).map((a) => a.kind);
      for (const k of ["budget-80", "budget-90", "budget-100"])
        expect(kinds.filter((x) => x === k)).toEqual([k]);
      expect(kinds.filter((x) => x === "stopped-by-cap").length).toBe(2);

      // The next launch is refused with the arithmetic; nothing is created.
      const refused = await launcher
        .run(specOf(project, "tick"), { command: ["true"] })
        .catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(BudgetRefused);
      expect((refused as Error).message).toMatch(
        /^launch of template "tick" refused: the month's spend \$1\.00 has reached the cap for runs \$1\.00; new launches and `up` are refused until the cap is raised or the month turns/,
      );
      expect(await projectLeftovers(docker, name)).toEqual([]);

      // `up` of the stack is refused before the engine is started.
      const c = capture();
      expect(await main(["up", stack, "--json"], c.io, root, {})).toBe(1);
      const doc = JSON.parse(c.out.join("")) as { ok: boolean; error: { kind: string; message: string } };
      expect(doc).toMatchObject({ ok: false, error: { kind: "budget" } });
      expect(doc.error.message).toMatch(
        new RegExp(`^project "${name}" has reached its monthly cap: \\$1\\.00 spent`),
      );

      // The hard stop always deploys: the same stack with `enabled: false` is not refused for its spend (here it
      // stops at the missing engine instead, in an environment with none).
      const stackFile = join(root, "stacks", `Pulumi.${stack}.yaml`);
      const enabledText = readFileSync(stackFile, "utf8");
      writeFileSync(stackFile, `${enabledText.trimEnd()}\n  sandbox:enabled: false\n`);
      const none = mkdtempSync(join(tmpdir(), "no-tools-"));
      try {
        const d = capture();
        const code = await main(["up", stack, "--json"], d.io, root, {
          PATH: none,
          HOME: none,
          XDG_CACHE_HOME: none,
          PULUMI_HOME: none,
        });
        expect(JSON.parse(d.out.join(""))).toMatchObject({ ok: false, error: { kind: "missing-tool" } });
        expect(code).toBe(3);
      } finally {
        writeFileSync(stackFile, enabledText);
      }

      // A raised cap lifts it: the next launch runs.
      ledger.reconfigure(meterOf(testProjectLike({ ...BUDGET, monthlyCapUsd: 5 })));
      const r = await launcher.run(specOf(project, "tick"), { command: ["true"] });
      expect(r.exitCode).toBe(0);
      await outbox.flush();
      for (const k of ["budget-80", "budget-90", "budget-100"])
        expect(received.map((x) => x.kind)).toContain(k);
    } finally {
      await launcher.shutdown();
      await ledger.close();
      server.close();
    }
  }, 240_000);
});

/** The same project (name, job root, templates) under another budget. */
function testProjectLike(budget: ProjectInput["budget"]) {
  return { ...project, spec: { ...project.spec, budget: { ...project.spec.budget, ...budget } } };
}

describe("the audit log of real runs", () => {
  it("holds each run's command, the hash of every file given, its exit, its limits and its charge", async () => {
    const own = testProject("aud", TEMPLATES, { ...BUDGET, monthlyCapUsd: 50 });
    const f = join(mkdtempSync(join(tmpdir(), "aud-")), "l.sqlite");
    const ledger = Ledger.open(f, meterOf(own));
    const launcher = new Launcher(docker, { preflight: policyPreflight(), ledger, graceSeconds: 1 });
    try {
      const script = "echo hi > out.txt; exit 3\n";
      const r = await launcher.run(specOf(own, "quick"), {
        files: { "run.sh": script, "data/in.txt": "x" },
        agent: "ci-bot",
      });
      expect(r.exitCode).toBe(3);
      const t = await launcher.run(specOf(own, "tick"), { command: ["sleep", "30"] });
      expect(t.limits).toEqual(["timeout"]);
      const [late, first] = await ledger.runs();
      expect(first).toMatchObject({
        id: r.id,
        template: "quick",
        agent: "ci-bot",
        command: ["sh", "/job/run.sh"],
        files: {
          "run.sh": createHash("sha256").update(script).digest("hex"),
          "data/in.txt": createHash("sha256").update("x").digest("hex"),
        },
        exitCode: 3,
        limits: [],
        status: "done",
        size: { vcpu: 1, memoryMb: 64 },
      });
      expect(first?.chargeUsd).toBeCloseTo(r.chargeUsd ?? -1, 12);
      expect(late).toMatchObject({ id: t.id, command: ["sleep", "30"], limits: ["timeout"], status: "done" });
      expect((await ledger.alerts({ kind: "limit-hit" })).map((a) => a.runId)).toEqual([t.id]);
    } finally {
      await ledger.close();
      await offSwitch(docker, own.spec.name, { jobRoot: own.jobRoot });
    }
  }, 120_000);

  it("records every escape check as an alert (paging no sink when it held), and `audit`, `spend` and `alerts` read it back", async () => {
    const own = testProject("esc", TEMPLATES, { ...BUDGET, monthlyCapUsd: 50 });
    const f = ledgerFile(own, {});
    const c = capture();
    const code = await runTaskVerb("escape", own, ["quick"], c.io, true, undefined, f);
    expect(code).toBe(0);
    // Recorded, and not paged: every check held, so no sink (stderr here) hears of it.
    expect(c.err.join("")).not.toContain("alert escape-check");
    const ledger = Ledger.open(f, meterOf(own));
    try {
      const escapes = (await ledger.alerts({ kind: "escape-check" })).map((a) => a.message.split(":")[0]);
      expect(escapes.sort()).toEqual(
        [
          "escape check exfiltrate-env from template quick",
          "escape check fork-bomb from template quick",
          "escape check metadata from template quick",
          "escape check write-outside-job from template quick",
        ].sort(),
      );
      expect((await ledger.runs()).length).toBe(4);
      // The verbs that read the ledger back.
      const spend = capture();
      expect(await runLedgerVerb("spend", "s", own, [], f, spend.io, true)).toBe(0);
      const sdoc = JSON.parse(spend.out.join("")) as {
        spend: { runs: number; spentUsd: number; byTemplate: object };
      };
      expect(sdoc.spend.runs).toBe(4);
      expect(Object.keys(sdoc.spend.byTemplate)).toEqual(["quick"]);
      expect(sdoc.spend.spentUsd).toBeCloseTo(
        (await ledger.runs()).reduce((x, r) => x + (r.chargeUsd ?? 0), 0),
        9,
      );
      const audit = capture();
      expect(await runLedgerVerb("audit", "s", own, ["--since", "1h"], f, audit.io, false)).toBe(0);
      expect(audit.out.join("").match(/ run [a-z0-9-]+ template quick: done, exit /g)?.length).toBe(4);
      const alerts = capture();
      expect(await runLedgerVerb("alerts", "s", own, [], f, alerts.io, false)).toBe(0);
      expect(alerts.out.join("").match(/ escape-check: escape check /g)?.length).toBe(4);
      const bad = capture();
      expect(await runLedgerVerb("audit", "s", own, ["--since", "yesterday"], f, bad.io, false)).toBe(2);
      expect(bad.err.join("")).toBe(
        '--since "yesterday": expected an ISO date or time (2026-12-01, 2026-12-01T10:00:00Z) or a span back from now (30m, 12h, 7d)\n',
      );
    } finally {
      await ledger.close();
      await offSwitch(docker, own.spec.name, { jobRoot: own.jobRoot });
    }
  }, 180_000);
});

describe("a launcher killed mid-task", () => {
  it("is reconciled at the next start: the container is removed and the run charged at most to its deadline", async () => {
    const own = testProject("rec", TEMPLATES, { ...BUDGET, monthlyCapUsd: 50 });
    const f = join(mkdtempSync(join(tmpdir(), "rec-")), "l.sqlite");
    const child = spawn(
      process.execPath,
      ["--import", "tsx", join(__dirname, "ledger-worker.ts"), f, JSON.stringify(own)],
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
    const deadline = Date.now() + 60_000;
    while (!out.includes("started") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(out).toContain("started");
    child.kill("SIGKILL");
    await exited;
    // The killed launcher left its container running and its run open.
    const left = await docker.listContainers({
      all: true,
      filters: { label: [`sandbox.project=${own.spec.name}`] },
    });
    expect(left.length).toBe(1);
    const ledger = Ledger.open(f, meterOf(own));
    expect((await ledger.runs()).map((r) => r.status)).toEqual(["open"]);
    const launcher = new Launcher(docker, { preflight: policyPreflight(), ledger, graceSeconds: 1 });
    try {
      const r = await launcher.run(specOf(own, "tick"), { command: ["true"] });
      expect(r.exitCode).toBe(0);
      const [, held] = await ledger.runs();
      expect(held).toMatchObject({ status: "reconciled", template: "long" });
      expect(held?.chargeUsd).toBeLessThanOrEqual(held?.maxChargeUsd ?? 0);
      expect(await projectLeftovers(docker, own.spec.name)).toEqual([]);
      expect((await ledger.alerts({ kind: "reconciled" })).length).toBe(1);
    } finally {
      await ledger.close();
      await offSwitch(docker, own.spec.name, { jobRoot: own.jobRoot });
    }
  }, 120_000);
});

describe("a ledger another process holds", () => {
  it("stops none of the launcher's timers: a task that exits in time is not reported killed", async () => {
    const own = testProject("held", TEMPLATES, { ...BUDGET, monthlyCapUsd: 50 });
    const f = join(mkdtempSync(join(tmpdir(), "held-")), "l.sqlite");
    const ledger = Ledger.open(f, meterOf(own));
    // Another process takes the ledger's write lock once the task runs, and keeps it for 6 s: longer than the
    // task's deadline and grace (3 s + 1 s), while the task itself ends after 1 s.
    const holder = spawn(
      process.execPath,
      [
        "-e",
        `const { DatabaseSync } = require("node:sqlite");
         const db = new DatabaseSync(${JSON.stringify(f)});
         process.stdin.once("data", () => {
           db.exec("BEGIN IMMEDIATE");
           process.stdout.write("locked\\n");
           setTimeout(() => { db.exec("COMMIT"); process.exit(0); }, 6000);
         });`,
      ],
      { stdio: ["pipe", "pipe", "inherit"] },
    );
    const exited = new Promise((r) => holder.on("exit", r));
    const locked = new Promise<void>((r) =>
      holder.stdout.on("data", (d: Buffer) => d.toString().includes("locked") && r()),
    );
    let ticks = 0;
    const launcher = new Launcher(docker, {
      preflight: policyPreflight(),
      ledger,
      graceSeconds: 1,
      onEvent: (e) => {
        if (e.type === "start") holder.stdin.write("lock\n");
      },
    });
    const loop = setInterval(() => ticks++, 100);
    try {
      const run = launcher.run(specOf(own, "quick"), { command: ["sh", "-c", "sleep 1"] });
      await locked;
      const atLock = ticks;
      const r = await run;
      expect(r.exitCode).toBe(0);
      expect(r.killedByLauncher).toBe(false);
      expect(r.limits).toEqual([]);
      expect(r.durationMs).toBeLessThan(3000);
      const [held] = await ledger.runs();
      expect(held).toMatchObject({ status: "done", exitCode: 0, killedByLauncher: false });
      // The event loop kept turning while the task ran under the held ledger.
      expect(ticks - atLock).toBeGreaterThan(3);
    } finally {
      clearInterval(loop);
      holder.kill("SIGKILL");
      await exited;
      await ledger.close();
      await offSwitch(docker, own.spec.name, { jobRoot: own.jobRoot });
    }
  }, 120_000);
});
