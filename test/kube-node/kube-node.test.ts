// Kubernetes for real: a sandbox project goes up through the real engine on a local cluster with a real node
// (test/engine/node.ts: containerd, runc, CNI bridge, kubelet, kube-proxy, kube-router enforcing NetworkPolicy), and
// its tasks run in pods there: the probe Job's walls report observed inside a pod is a stack output, tasks run as
// Jobs through the front's verbs, the four escapes are blocked, the deadline kills, the quota refuses a task past the
// budget, egress goes only through the proxy (the policies hold on the node), a keyed upstream answers through the
// secrets broker, which alone holds the credential, `off` leaves no task object and `destroy` no namespace. Nothing leaves the machine: the "outside" server is on the machine's loopback at
// 198.18.1.1 (RFC 2544 space, which the proxy does not refuse), with a DNS server there for the broker's names, and
// the node drops every pod packet bound off it. Templates with `runtime: runsc` run in pods of the `gvisor`
// RuntimeClass the project creates, under gVisor (the node's containerd has gVisor's shim as handler `runsc`).
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Stack } from "@pulumi/pulumi/automation";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runKubeOff, runKubeTaskVerb } from "../../cli/kube-runtime";
import { runLedgerVerb } from "../../cli/ledger";
import { kubeUnitLogs, logEntries } from "../../cli/service-logs";
import { wallsTable } from "../../cli/walls-table";
import { HTTP_GET, launchSpec, type ResolvedProject, taskUsd } from "../../components/model";
import { type KubeApis, kubeApis } from "../../runtime/kubernetes/api";
import { KubeLauncher } from "../../runtime/kubernetes/launcher";
import { LaunchRefused } from "../../runtime/launch-errors";
import { Ledger, type Meter, meterOf } from "../../runtime/ledger";
import { BudgetRefused } from "../../runtime/ledger/records";
import { projectFromConfig } from "../../stacks/config";
import { sandboxProgram } from "../../stacks/program";
import { type Cluster, startCluster } from "../engine/cluster";
import { startDns } from "../engine/dns";
import { METADATA_IP, type MetadataTarget, startMetadataTarget } from "../engine/metadata-target";
import { requireEngineToolchain, requireNodeToolchain } from "../engine/toolchain";
import {
  type EngineWorkspace,
  engineWorkspace,
  POLICY_PACK,
  sandboxConfigMap,
  setSandboxConfig,
} from "../engine/workspace";

const TIMEOUT = 300_000;
// The node's podPidsLimit, which every template declares: a gVisor pod's own threads for its task and its results
// holder count in it too (76 here), and a runsc template on Kubernetes declares at least 128.
const PODS_LIMIT = 128;
const OUTSIDE_IP = "198.18.1.1";
const ANSWER = `hello-${randomBytes(4).toString("hex")}`;
const project = `kn-${randomBytes(3).toString("hex")}`;
const BROKER_TOKEN = `tok-${randomBytes(8).toString("hex")}`;
const KEYED_ANSWER = `keyed-${randomBytes(4).toString("hex")}`;
let dns: { close(): Promise<void> } | undefined;
let metadata: MetadataTarget | undefined;

let cluster: Cluster | undefined;
let ws: EngineWorkspace | undefined;
let stack: Stack | undefined;
let apis: KubeApis | undefined;
let resolved: ResolvedProject | undefined;
let kubeconfig = "";
let server: Server | undefined;
const seen: string[] = [];
let setupError: Error | undefined;
const scratch = mkdtempSync(join(tmpdir(), "sandbox-kube-node-"));

// Half a vCPU each: the budget's two tasks and the proxy fit on this 2-core node at once.
const config = () => ({
  name: project,
  backend: "kubernetes",
  kubernetes: { kubeconfig },
  budget: { monthlyCapUsd: 10, maxConcurrentTasks: 2 },
  broker: {
    routes: {
      api: {
        upstream: "http://api.test",
        paths: ["/data/*"],
        credential: { secret: "apiToken", prefix: "Bearer " },
      },
      private: { upstream: "http://private.test", paths: ["/**"], credential: { secret: "apiToken" } },
    },
  },
  templates: {
    agent: {
      image: "sandbox-busybox:1",
      timeoutSeconds: 30,
      resources: { vcpu: 0.5, pids: PODS_LIMIT },
      broker: ["api", "private"],
    },
    default: { image: "sandbox-busybox:1", timeoutSeconds: 30, resources: { vcpu: 0.5, pids: PODS_LIMIT } },
    web: {
      image: "sandbox-busybox:1",
      timeoutSeconds: 30,
      resources: { vcpu: 0.5, pids: PODS_LIMIT },
      egress: { mode: "proxy", allow: ["allowed.test"] },
    },
    // gVisor behind the proxy: its pods reach the allowed host through the proxy and nothing else.
    gweb: {
      image: "sandbox-busybox:1",
      runtime: "runsc",
      timeoutSeconds: 30,
      resources: { vcpu: 0.5, pids: PODS_LIMIT },
      egress: { mode: "proxy", allow: ["allowed.test"] },
    },
    // gVisor: pods of the RuntimeClass the project creates (handler runsc, the node's containerd shim).
    gvisor: {
      image: "sandbox-busybox:1",
      runtime: "runsc",
      timeoutSeconds: 30,
      resources: { vcpu: 0.5, pids: PODS_LIMIT },
    },
  },
});

beforeAll(async () => {
  try {
    const tools = requireEngineToolchain();
    cluster = await startCluster(tools, {
      node: {
        tools: requireNodeToolchain(),
        podPidsLimit: PODS_LIMIT,
        images: ["sandbox-busybox:1", "sandbox-proxy:1", "sandbox-broker:1"],
      },
    });
    // A server at the metadata address, in a network namespace of the test's own: the probe's and the escapes'
    // metadata checks are judged with something there that answers when the walls are down.
    metadata = await startMetadataTarget();
    // The "outside" server, on the machine's own loopback (the pods reach it through their gateway).
    spawnSync("ip", ["addr", "add", `${OUTSIDE_IP}/32`, "dev", "lo"]);
    server = createServer((req, res) => {
      seen.push(`${req.socket.remoteAddress} ${req.method} ${req.headers.host} ${req.url}`);
      // The keyed upstream: only the broker's credential gets its answer.
      if (req.headers.host === "api.test") {
        if (req.headers.authorization === `Bearer ${BROKER_TOKEN}`) res.end(KEYED_ANSWER);
        else res.writeHead(401).end("no");
        return;
      }
      res.end(ANSWER);
    });
    await new Promise<void>((r) => server?.listen(80, OUTSIDE_IP, () => r()));
    // The broker resolves its upstreams through DNS only: the keyed one here, the other to a private address.
    dns = await startDns(OUTSIDE_IP, { "api.test": OUTSIDE_IP, "private.test": "10.255.0.1" });
    kubeconfig = join(cluster.dir, "kubeconfig.json");
    writeFileSync(kubeconfig, cluster.kubeconfig);
    apis = await kubeApis({ kubeconfig });
    ws = await engineWorkspace(tools);
    stack = await ws.newStack("node", sandboxProgram);
    const cfg = config();
    await setSandboxConfig(stack, cfg);
    await stack.setConfig("sandbox:apiToken", { value: BROKER_TOKEN, secret: true });
    resolved = projectFromConfig(sandboxConfigMap(cfg), "node");
  } catch (e) {
    setupError = e as Error;
  }
}, TIMEOUT);

afterAll(async () => {
  try {
    if (stack !== undefined && ws !== undefined) await ws.dispose(stack).catch(() => undefined);
  } finally {
    await new Promise((r) => (server === undefined ? r(undefined) : server.close(() => r(undefined))));
    await dns?.close();
    await metadata?.stop();
    spawnSync("ip", ["addr", "del", `${OUTSIDE_IP}/32`, "dev", "lo"]);
    await cluster?.stop();
    ws?.cleanup();
    rmSync(scratch, { recursive: true, force: true });
  }
}, TIMEOUT);

function ready() {
  if (cluster === undefined || stack === undefined || apis === undefined || resolved === undefined)
    throw setupError ?? new Error("set-up did not run");
  return { cluster, stack, apis, project: resolved };
}

/** Captures a front verb's output. */
function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (t: string) => out.push(t), err: (t: string) => err.push(t) }, out, err };
}

type Wall = { wall: string; declared: string; observed: string; ok: boolean | null };
const wall = (report: { walls: Wall[] }, name: string) => report.walls.find((w) => w.wall === name);

/** `probe` then `escape` of one template through the front's verbs: every wall holds, the four escapes are blocked. */
async function probeAndEscape(
  p: ResolvedProject,
  template: string,
): Promise<{ passed: boolean; walls: Wall[] }> {
  const probe = io();
  expect(
    await runKubeTaskVerb("probe", p, { kubeconfig }, [template], probe.io, true),
    probe.err.join(""),
  ).toBe(0);
  const report = JSON.parse(probe.out.join("")).templates[template] as { passed: boolean; walls: Wall[] };
  expect(report.passed, JSON.stringify(report.walls)).toBe(true);
  const escapes = io();
  const code = await runKubeTaskVerb("escape", p, { kubeconfig }, [template], escapes.io, true);
  const doc = JSON.parse(escapes.out.join(""));
  expect(code, JSON.stringify(doc)).toBe(0);
  const results = doc.templates[template] as { check: string; blocked: boolean; leftovers: string[] }[];
  expect(results.map((r) => r.check)).toEqual([
    "exfiltrate-env",
    "write-outside-job",
    "fork-bomb",
    "metadata",
  ]);
  for (const r of results) {
    expect(r.blocked, JSON.stringify(r)).toBe(true);
    expect(r.leftovers).toEqual([]);
  }
  return report;
}

describe("a Kubernetes sandbox project on a real node", () => {
  it(
    "goes up with the policy pack; the probe Job ran in a pod and its walls report is a stack output",
    async () => {
      const { stack: s } = ready();
      const up = await s.up({ policyPacks: [POLICY_PACK] });
      expect(up.summary.result).toBe("succeeded");
      const probes = up.outputs.probes?.value as Record<string, { passed: boolean; walls: Wall[] }>;
      const report = probes.default;
      expect(report, JSON.stringify(probes)).toBeDefined();
      if (report === undefined) return;
      // The table `up` prints (the README shows one).
      console.log(wallsTable("default", report));
      expect(report.passed, JSON.stringify(report.walls)).toBe(true);
      expect(wall(report, "capEff")?.observed).toBe("(none)");
      expect(wall(report, "noNewPrivs")?.observed).toBe("1");
      expect(wall(report, "seccomp")?.observed).toBe("2");
      expect(wall(report, "rootReadOnly")?.observed).toBe("denied");
      expect(wall(report, "user")?.ok).toBe(true);
      expect(wall(report, "tmpSize")?.observed).toBe("65536 KiB");
      // The node's podPidsLimit: forks are refused before the template's limit, inside the pod.
      const pids = wall(report, "pidsMax");
      expect(pids?.ok, pids?.observed).toBe(true);
      expect(pids?.observed).toMatch(/a fork was refused after \d+ more processes/);
      // The gVisor template's probe ran in a pod of the project's RuntimeClass, under gVisor's kernel.
      const gvisor = probes.gvisor;
      expect(gvisor, JSON.stringify(probes)).toBeDefined();
      if (gvisor === undefined) return;
      console.log(wallsTable("gvisor", gvisor));
      expect(gvisor.passed, JSON.stringify(gvisor.walls)).toBe(true);
      expect(wall(gvisor, "kernel")).toMatchObject({ declared: "gVisor (runsc)", ok: true });
      expect(wall(gvisor, "kernel")?.observed).toMatch(/gVisor/);
      expect(wall(gvisor, "capEff")?.observed).toBe("(none)");
      expect(wall(gvisor, "rootReadOnly")?.observed).toBe("denied");
      const rc = await ready().apis.node.readRuntimeClass({ name: "gvisor" });
      expect(rc.handler).toBe("runsc");
      expect(rc.metadata?.labels?.["sandbox.project"]).toBe(project);
    },
    TIMEOUT,
  );

  it(
    "a runsc template's tasks run under gVisor through the front: its walls hold and the four escapes are blocked",
    async () => {
      const { apis: a, project: p } = ready();
      // Its pod holds the results holder as a runc pod does: stderr apart, the job folder brought back.
      const jobRoot = join(scratch, "gvisor-jobs");
      const run = await new KubeLauncher(a, project, { jobRoot }).run(launchSpec(p, "gvisor", "none"), {
        command: [
          "sh",
          "-c",
          "dmesg 2>/dev/null | head -n 1; uname -r; echo apart >&2; echo kept > made.txt; exit 3",
        ],
        collect: true,
      });
      expect(run.exitCode, `${run.stdout}${run.stderr}`).toBe(3);
      expect(run.stdout).toMatch(/gVisor/);
      expect(run.stdout).not.toContain("apart");
      expect(run.stderr).toBe("apart\n");
      expect(run.jobProblem).toBeUndefined();
      expect(readFileSync(join(run.jobDir, "made.txt"), "utf8")).toBe("kept\n");
      const report = await probeAndEscape(p, "gvisor");
      expect(wall(report, "kernel")?.ok).toBe(true);
    },
    TIMEOUT,
  );

  it(
    "a runtime the cluster cannot give is refused before anything runs, naming what is missing; never runc instead",
    async () => {
      const { apis: a, project: p } = ready();
      const launcher = new KubeLauncher(a, project);
      // The PodTemplate is the deployed one; only the runtime asked for is one the cluster has no class for.
      const kata = { ...launchSpec(p, "gvisor", "none"), runtime: "kata" as const };
      const refused = await launcher.run(kata, { command: ["true"] }).catch((e) => e);
      expect(refused).toBeInstanceOf(LaunchRefused);
      expect(String(refused.message)).toMatch(/RuntimeClass "kata", which the cluster .* does not have/);
      // A class whose handler the node's containerd does not have: the runtime's own refusal, said once.
      await a.node.createRuntimeClass({
        body: { metadata: { name: "kata", labels: { "sandbox.project": project } }, handler: "kata" },
      });
      try {
        const noHandler = await launcher.run(kata, { command: ["true"] }).catch((e) => e);
        expect(noHandler).toBeInstanceOf(LaunchRefused);
        expect(String(noHandler.message)).toMatch(/cannot run RuntimeClass "kata".*no runtime for "kata"/);
      } finally {
        await a.node.deleteRuntimeClass({ name: "kata" });
      }
      const left = await a.batch.listNamespacedJob({
        namespace: project,
        labelSelector: "sandbox.role=task",
      });
      expect(left.items).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    "runs a task as a Job through the front: its files in the job folder, its exit code and output, nothing left",
    async () => {
      const { apis: a, project: p } = ready();
      const input = join(scratch, "input.txt");
      writeFileSync(input, "from the host\n");
      const out = join(scratch, "run-out");
      const c = io();
      const code = await runKubeTaskVerb(
        "run",
        p,
        { kubeconfig },
        [
          "default",
          "--file",
          `in/input.txt=${input}`,
          "--out",
          out,
          "--keep",
          "--",
          "sh",
          "-c",
          "cat in/input.txt; id -u; echo to-stderr >&2; mkdir -p res; echo 42 > res/answer; exit 3",
        ],
        c.io,
        true,
      );
      const doc = JSON.parse(c.out.join(""));
      expect(code, c.err.join("")).toBe(3);
      expect(doc.task.exitCode).toBe(3);
      expect(doc.task.stdout).toContain("from the host");
      expect(doc.task.stdout).toContain("1000");
      // stdout and stderr apart, as on Docker.
      expect(doc.task.stdout).not.toContain("to-stderr");
      expect(doc.task.stderr).toBe("to-stderr\n");
      // The job folder came back from the pod before it went: copied to --out and kept on this machine.
      expect(readFileSync(join(out, "res", "answer"), "utf8")).toBe("42\n");
      expect(readFileSync(join(out, "in", "input.txt"), "utf8")).toBe("from the host\n");
      expect(doc.jobFolder).toEqual({ path: join(p.jobRoot, doc.task.id), kept: true });
      expect(readFileSync(join(p.jobRoot, doc.task.id, "res", "answer"), "utf8")).toBe("42\n");
      expect(doc.skipped).toEqual([]);
      rmSync(join(p.jobRoot, doc.task.id), { recursive: true, force: true });
      const left = await a.batch.listNamespacedJob({
        namespace: project,
        labelSelector: `sandbox.task=${doc.task.id}`,
      });
      expect(left.items).toEqual([]);
      const maps = await a.core.listNamespacedConfigMap({
        namespace: project,
        labelSelector: `sandbox.task=${doc.task.id}`,
      });
      expect(maps.items).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    "probe and escape through the front: every wall holds and the four escapes are blocked",
    async () => {
      const { project: p } = ready();
      await probeAndEscape(p, "default");
    },
    TIMEOUT,
  );

  it(
    "kills a task at its deadline and says so",
    async () => {
      const { apis: a, project: p } = ready();
      const launcher = new KubeLauncher(a, project);
      const spec = { ...launchSpec(p, "default", "none"), timeoutSeconds: 4 };
      const started = Date.now();
      const result = await launcher.run(spec, { command: ["sleep", "60"] });
      expect(result.limits).toContain("timeout");
      expect(result.exitCode).toBe(137);
      expect(Date.now() - started).toBeLessThan(45_000);
    },
    TIMEOUT,
  );

  it(
    "asks the API server a small constant number of times per task, whatever its length: its pod comes from one watch",
    async () => {
      const { project: p } = ready();
      // Clients of their own, so that only this launcher's requests are counted.
      const own = await kubeApis({ kubeconfig });
      const launcher = new KubeLauncher(own, project);
      const spec = launchSpec(p, "default", "none");
      const count = async (command: string[]) => {
        const before = own.requests();
        const r = await launcher.run(spec, { command });
        expect(r.exitCode).toBe(0);
        return own.requests() - before;
      };
      const short = await count(["true"]);
      const long = await count(["sleep", "8"]);
      console.log(`API requests per task: ${short} (a task that exits at once), ${long} (a task of 8 s)`);
      expect(short).toBeLessThanOrEqual(10);
      // Waiting for the Job's foreground deletion to finish may take a read more or less.
      expect(Math.abs(long - short)).toBeLessThanOrEqual(2);
    },
    TIMEOUT,
  );

  it(
    "holds the budget's concurrency: a third task at once is refused by the namespace's quota",
    async () => {
      const { apis: a, project: p } = ready();
      const spec = launchSpec(p, "default", "none");
      const first = new KubeLauncher(a, project);
      const running = [1, 2].map(() => first.run(spec, { command: ["sleep", "25"] }));
      // Both pods exist before the third is asked for.
      const until = Date.now() + 60_000;
      for (;;) {
        const pods = await a.core.listNamespacedPod({
          namespace: project,
          labelSelector: "sandbox.role=task",
        });
        if (pods.items.filter((x) => x.status?.phase === "Running").length >= 2 || Date.now() > until) break;
        await new Promise((r) => setTimeout(r, 500));
      }
      // Another launcher (another process would be the same): the cluster's quota is the wall.
      const third = await new KubeLauncher(a, project).run(spec, { command: ["true"] }).catch((e) => e);
      expect(third).toBeInstanceOf(LaunchRefused);
      expect(String(third.message)).toMatch(/ResourceQuota refused/);
      for (const r of await Promise.all(running)) expect(r.exitCode).toBe(0);
    },
    TIMEOUT,
  );

  it(
    "meters tasks in the ledger as on Docker: admitted before the Job, charged what the pod ran, agents held to their caps, stopped at the cap, then refused creating nothing",
    async () => {
      const { apis: a, project: p } = ready();
      const spec = launchSpec(p, "default", "none");
      // $0.20 a second for the template's half vCPU: one run's maximum (30 s + 15 s of grace) is $9.
      const meter: Meter = {
        ...meterOf(p),
        enforce: "metered",
        capUsd: 10,
        fixedUsd: 0,
        rates: { usdPerVcpuHour: 1440, usdPerGbHour: 0 },
        agents: { ci: { monthlyCapUsd: 9.5 }, tiny: { monthlyCapUsd: 1 } },
      };
      const ledger = Ledger.open(join(scratch, "kube-ledger.sqlite"), meter);
      const launcher = new KubeLauncher(a, project, { ledger });
      try {
        const ran = await launcher.run(spec, { agent: "ci", command: ["sh", "-c", "sleep 2; echo metered"] });
        expect(ran.exitCode).toBe(0);
        expect(ran.stdout).toContain("metered");
        const [row] = await ledger.runs();
        expect(row).toMatchObject({
          id: ran.id,
          template: "default",
          agent: "ci",
          status: "done",
          exitCode: 0,
        });
        // By the kubelet's clock (to the second): at least the 2 s it slept, far less than its maximum.
        expect(ran.chargeUsd ?? 0).toBeGreaterThanOrEqual(0.2 * 1);
        expect(ran.chargeUsd ?? 0).toBeLessThan(0.2 * 15);
        expect(row?.chargeUsd).toBe(ran.chargeUsd);

        const tiny = await launcher
          .run(spec, { id: "tiny-run", agent: "tiny", command: ["true"] })
          .catch((e) => e);
        expect(tiny).toBeInstanceOf(BudgetRefused);
        expect(String(tiny.message)).toMatch(/agent/);
        expect(await launcher.leftovers("tiny-run")).toEqual([]);

        // Two at once: each fits alone, together they reach the cap before their deadlines.
        const both = await Promise.all([1, 2].map(() => launcher.run(spec, { command: ["sleep", "60"] })));
        for (const r of both) {
          expect(r.stoppedByCap, JSON.stringify(r)).toBe(true);
          expect(r.limits).not.toContain("timeout");
        }
        // Never past the cap. The meter counts a run from its admission; the charge, what its container ran on the
        // node: the seconds its pod took to start (a few, each) are stopped for but not charged.
        const charged = (await ledger.runs()).reduce((n, r) => n + (r.chargeUsd ?? 0), 0);
        expect(charged).toBeLessThanOrEqual(10 + 1e-9);
        expect(charged).toBeGreaterThan(7);
        for (const r of both) expect(r.chargeUsd ?? 0).toBeGreaterThan(2);
        expect((await ledger.alerts()).filter((x) => x.kind === "stopped-by-cap")).toHaveLength(2);

        // What is left cannot hold another run's maximum: refused with the arithmetic, before any object is made.
        const refused = await launcher.run(spec, { id: "over-cap", command: ["true"] }).catch((e) => e);
        expect(refused).toBeInstanceOf(BudgetRefused);
        expect(String(refused.message)).toMatch(/> the cap for runs|reached the cap/);
        expect(await launcher.leftovers("over-cap")).toEqual([]);
        const tasks = await a.batch.listNamespacedJob({
          namespace: project,
          labelSelector: "sandbox.role=task",
        });
        expect(tasks.items).toEqual([]);
      } finally {
        await ledger.close();
      }
    },
    TIMEOUT,
  );

  it(
    "a SIGKILLed launcher leaves nothing unaccounted: the next launch stops its task, charges what it ran, removes its Job",
    async () => {
      const { apis: a, project: p } = ready();
      const meter: Meter = { ...meterOf(p), enforce: "metered", capUsd: 10, fixedUsd: 0 };
      const file = join(scratch, "orphan-ledger.sqlite");
      const id = `orphan-${randomBytes(3).toString("hex")}`;
      const child = spawn(
        process.execPath,
        [
          "--import",
          "tsx",
          join(__dirname, "kube-orphan-worker.ts"),
          kubeconfig,
          file,
          JSON.stringify(meter),
          JSON.stringify(p),
          "default",
          id,
          JSON.stringify(["sleep", "25"]),
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
      try {
        const until = Date.now() + 90_000;
        while (!out.includes(`running ${id}`) && Date.now() < until)
          await new Promise((r) => setTimeout(r, 200));
        expect(out).toContain(`running ${id}`);
      } finally {
        child.kill("SIGKILL");
        await exited;
      }
      const ledger = Ledger.open(file, meter);
      try {
        expect((await ledger.run(id))?.status).toBe("open");
        // The task still runs on the node: its launcher is gone, its Job is not.
        const jobs = await a.batch.listNamespacedJob({
          namespace: project,
          labelSelector: `sandbox.task=${id}`,
        });
        expect(jobs.items).toHaveLength(1);
        // The next launch (a launcher of this process) reconciles first.
        const next = await new KubeLauncher(a, project, { ledger }).run(launchSpec(p, "default", "none"), {
          command: ["true"],
        });
        expect(next.exitCode).toBe(0);
        const run = await ledger.run(id);
        expect(run?.status).toBe("reconciled");
        expect(run?.chargeUsd ?? 0).toBeGreaterThan(0);
        expect((await ledger.alerts()).some((x) => x.message.includes(id))).toBe(true);
        const left = await a.batch.listNamespacedJob({
          namespace: project,
          labelSelector: `sandbox.task=${id}`,
        });
        expect(left.items).toEqual([]);
      } finally {
        await ledger.close();
      }
    },
    TIMEOUT,
  );

  it(
    "two launcher processes on one ledger never cross the cap together; a refused launch says why and creates nothing",
    async () => {
      const { apis: a, project: p } = ready();
      const spec = launchSpec(p, "default", "none");
      // A run's maximum is its size for its deadline and the launcher's grace; the cap admits one and a half of them,
      // so both processes start at once and the spend of a few short runs closes the month.
      const maxSeconds = spec.timeoutSeconds + 15;
      const base = meterOf(p);
      const oneRun = taskUsd(
        { vcpu: spec.resources.vcpu, memoryMb: spec.resources.memoryMb },
        base.rates,
        maxSeconds,
      );
      const meter: Meter = { ...base, enforce: "metered", capUsd: oneRun * 1.6, fixedUsd: 0, concurrency: 2 };
      const file = join(scratch, "shared-ledger.sqlite");
      const worker = (prefix: string) =>
        new Promise<{ code: number | null; lines: Record<string, unknown>[]; err: string }>((resolve) => {
          const child = spawn(
            process.execPath,
            [
              "--import",
              "tsx",
              join(__dirname, "kube-launch-worker.ts"),
              kubeconfig,
              file,
              JSON.stringify(meter),
              JSON.stringify(p),
              "default",
              prefix,
              "8",
              JSON.stringify(["sleep", "6"]),
            ],
            { stdio: ["ignore", "pipe", "pipe"] },
          );
          let out = "";
          let err = "";
          child.stdout.on("data", (d: Buffer) => {
            out += d.toString();
          });
          child.stderr.on("data", (d: Buffer) => {
            err += d.toString();
          });
          child.on("exit", (code) =>
            resolve({
              code,
              err,
              lines: out
                .trim()
                .split("\n")
                .filter(Boolean)
                .map((l) => JSON.parse(l)),
            }),
          );
        });
      const tag = randomBytes(2).toString("hex");
      const [one, two] = await Promise.all([worker(`pa-${tag}`), worker(`pb-${tag}`)]);
      expect(one.code, one.err).toBe(0);
      expect(two.code, two.err).toBe(0);
      const all = [...one.lines, ...two.lines];
      // Both processes ran tasks, and the cap refused launches in the end.
      expect(one.lines.some((l) => l.admitted === true)).toBe(true);
      expect(two.lines.some((l) => l.admitted === true)).toBe(true);
      const refused = all.filter((l) => l.admitted === false && l.reason === "cap");
      expect(refused.length, JSON.stringify(all)).toBeGreaterThan(0);
      for (const r of refused)
        expect(r.message).toMatch(/refused: .*(> the cap for runs|has reached the cap)/);
      const ledger = Ledger.open(file, meter);
      try {
        const runs = await ledger.runs();
        const charged = runs.reduce((n, r) => n + (r.chargeUsd ?? 0), 0);
        expect(charged).toBeLessThanOrEqual(meter.capUsd + 1e-12);
        // Every admitted launch has its row, closed and charged; a refused one has none, and never had a Job.
        for (const l of all.filter((x) => x.admitted === true)) {
          const run = await ledger.run(String(l.id));
          expect(run?.status).toBe("done");
          expect(run?.chargeUsd ?? 0).toBeGreaterThan(0);
        }
        for (const l of all.filter((x) => x.admitted === false)) {
          expect(await ledger.run(String(l.id))).toBeUndefined();
          const jobs = await a.batch.listNamespacedJob({
            namespace: project,
            labelSelector: `sandbox.task=${String(l.id)}`,
          });
          expect(jobs.items).toEqual([]);
        }
      } finally {
        await ledger.close();
      }
    },
    TIMEOUT,
  );

  it(
    "the front's run on Kubernetes is admitted, recorded and charged by the project's ledger; audit reads it back",
    async () => {
      const { project: p } = ready();
      const file = join(scratch, "front-ledger.sqlite");
      const c = io();
      const code = await runKubeTaskVerb(
        "run",
        p,
        { kubeconfig },
        ["default", "--", "sh", "-c", "sleep 1; echo hi"],
        c.io,
        true,
        file,
      );
      expect(code, c.err.join("")).toBe(0);
      const doc = JSON.parse(c.out.join(""));
      expect(doc.task.chargeUsd).toBeGreaterThan(0);
      const audit = io();
      expect(await runLedgerVerb("audit", "kube", p, [], file, audit.io, true)).toBe(0);
      const runs = JSON.parse(audit.out.join("")).runs as { id: string; status: string; exitCode: number }[];
      expect(runs.map((r) => [r.id, r.status, r.exitCode])).toEqual([[doc.task.id, "done", 0]]);
    },
    TIMEOUT,
  );

  it(
    "egress only through the proxy: the allowed host answers through it; a direct connection is refused by policy",
    async () => {
      const { apis: a, project: p } = ready();
      // The proxy resolves the test's name through its pod's hosts file (a cluster would have DNS for this).
      await a.apps.patchNamespacedDeployment(
        {
          name: `${project}-proxy`,
          namespace: project,
          body: {
            spec: { template: { spec: { hostAliases: [{ ip: OUTSIDE_IP, hostnames: ["allowed.test"] }] } } },
          },
        },
        (await import("@kubernetes/client-node")).setHeaderOptions(
          "Content-Type",
          "application/strategic-merge-patch+json",
        ),
      );
      const until = Date.now() + 120_000;
      for (;;) {
        const d = await a.apps.readNamespacedDeployment({ name: `${project}-proxy`, namespace: project });
        const st = d.status;
        if (st?.updatedReplicas === 1 && st.readyReplicas === 1 && (st.replicas ?? 0) === 1) break;
        if (Date.now() > until) throw new Error(`the proxy did not roll: ${JSON.stringify(st)}`);
        await new Promise((r) => setTimeout(r, 500));
      }
      // The rolled proxy pod is new to kube-proxy (the Service's endpoints) and to the policy enforcer (this node
      // drops the connections of a pod the enforcer has not programmed yet): wait, bounded, until a task reaches the
      // allowed host through it once.
      const launcher = new KubeLauncher(a, project);
      const settled = Date.now() + 90_000;
      for (let attempt = 1; ; attempt++) {
        const warm = await launcher.run(launchSpec(p, "web", "none"), {
          command: ["sh", "-c", [HTTP_GET, 'echo "via=$(http_get http://allowed.test/)"'].join("\n")],
        });
        if (/via=HTTP\/1\.1 200/.test(warm.stdout)) break;
        if (Date.now() > settled)
          throw new Error(`the proxy never answered after ${attempt} tasks: ${warm.stdout}`);
        await new Promise((r) => setTimeout(r, 2_000));
      }
      const web = await launcher.run(launchSpec(p, "web", "none"), {
        command: [
          "sh",
          "-c",
          [
            HTTP_GET,
            'echo "via=$(http_get http://allowed.test/)"',
            'echo "refused=$(http_get http://denied.test/)"',
            `echo "direct=$(printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 3 ${OUTSIDE_IP} 80 2>&1 | head -n 1)"`,
          ].join("\n"),
        ],
      });
      expect(web.stdout).toMatch(/via=HTTP\/1\.1 200/);
      expect(web.stdout).toMatch(/refused=HTTP\/1\.1 403/);
      // The task's own decisions, read from the proxy's pod by the task pod's address, each with its reason.
      expect(web.egress?.decisions.map((d) => [d.decision, d.host, d.reason])).toEqual([
        ["allowed", "allowed.test", "on the template's allowlist"],
        ["denied", "denied.test", "not on the template's allowlist (an IP address never is)"],
      ]);
      // Refused by a policy rule (kube-router rejects: the connection is refused at once), not left unanswered.
      expect(web.stdout).toMatch(/direct=.*(refused|unreachable)/i);
      // The same under gVisor: its own kernel's connections meet the same proxy and the same policy.
      const gweb = await launcher.run(launchSpec(p, "gweb", "none"), {
        command: [
          "sh",
          "-c",
          [
            HTTP_GET,
            "dmesg 2>/dev/null | head -n 1",
            "echo gvisor-stderr >&2",
            'echo "via=$(http_get http://allowed.test/)"',
            'echo "refused=$(http_get http://denied.test/)"',
            `echo "direct=$(printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 3 ${OUTSIDE_IP} 80 2>&1 | head -n 1)"`,
          ].join("\n"),
        ],
      });
      expect(gweb.stdout).toMatch(/gVisor/);
      // A gVisor pod holds its results holder too: its stderr comes apart from its stdout.
      expect(gweb.stdout).not.toContain("gvisor-stderr");
      expect(gweb.stderr).toBe("gvisor-stderr\n");
      expect(gweb.stdout, gweb.stderr).toMatch(/via=HTTP\/1\.1 200/);
      expect(gweb.stdout).toMatch(/refused=HTTP\/1\.1 403/);
      expect(gweb.stdout).not.toMatch(/direct=HTTP/);
      expect(gweb.egress?.decisions.map((d) => [d.decision, d.host])).toEqual([
        ["allowed", "allowed.test"],
        ["denied", "denied.test"],
      ]);
      const closed = await launcher.run(launchSpec(p, "default", "none"), {
        command: [
          "sh",
          "-c",
          `printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 3 ${OUTSIDE_IP} 80 2>&1 | head -n 1; echo end`,
        ],
      });
      expect(closed.stdout).not.toMatch(/HTTP\//);
      // Every request the server saw came through the proxy's pod.
      const proxyPods = await a.core.listNamespacedPod({
        namespace: project,
        labelSelector: "sandbox.role=proxy",
      });
      const proxyIps = proxyPods.items.map((x) => x.status?.podIP);
      expect(seen.length).toBeGreaterThan(0);
      for (const line of seen)
        expect(
          proxyIps.some((ip) => ip && line.includes(ip)),
          line,
        ).toBe(true);
      // `sandbox logs <stack> proxy` reads the proxy pod's decisions; its listener names the template.
      const logged = logEntries(p, "proxy", await kubeUnitLogs({ kubeconfig }, project, "proxy", undefined));
      expect(
        logged.some(
          (e) =>
            e.template === "web" &&
            e.decision?.decision === "allowed" &&
            e.decision.host === "allowed.test" &&
            e.decision.reason === "on the template's allowlist",
        ),
        JSON.stringify(logged),
      ).toBe(true);
    },
    TIMEOUT,
  );

  it(
    "a keyed upstream answers through the broker, which alone holds the credential; its refusals hold on the node",
    async () => {
      const { apis: a, project: p } = ready();
      const k8s = await import("@kubernetes/client-node");
      // The test's DNS server is off the cluster: the broker's pod names it, and a test policy lets it be asked.
      await a.networking.createNamespacedNetworkPolicy({
        namespace: project,
        body: {
          metadata: { name: "test-broker-dns", labels: { "sandbox.project": project } },
          spec: {
            podSelector: { matchLabels: { "sandbox.role": "broker" } },
            policyTypes: ["Egress"],
            egress: [
              { to: [{ ipBlock: { cidr: `${OUTSIDE_IP}/32` } }], ports: [{ protocol: "UDP", port: 53 }] },
            ],
          },
        },
      });
      await a.apps.patchNamespacedDeployment(
        {
          name: `${project}-broker`,
          namespace: project,
          body: {
            spec: { template: { spec: { dnsPolicy: "None", dnsConfig: { nameservers: [OUTSIDE_IP] } } } },
          },
        },
        k8s.setHeaderOptions("Content-Type", "application/strategic-merge-patch+json"),
      );
      const until = Date.now() + 120_000;
      for (;;) {
        const d = await a.apps.readNamespacedDeployment({ name: `${project}-broker`, namespace: project });
        const st = d.status;
        if (st?.updatedReplicas === 1 && st.readyReplicas === 1 && (st.replicas ?? 0) === 1) break;
        if (Date.now() > until) throw new Error(`the broker did not roll: ${JSON.stringify(st)}`);
        await new Promise((r) => setTimeout(r, 500));
      }
      const launcher = new KubeLauncher(a, project);
      const spec = launchSpec(p, "agent", "none");
      const call = (path: string) => `echo "${path}=$(http_get "$SANDBOX_BROKER_URL${path}")"`;
      // The rolled pod is new to kube-proxy and the policy enforcer: wait, bounded, for one answer through it.
      const settled = Date.now() + 90_000;
      for (let attempt = 1; ; attempt++) {
        const warm = await launcher.run(spec, {
          command: ["sh", "-c", [HTTP_GET, call("/api/data/x")].join("\n")],
        });
        if (/=HTTP\/1\.[01] 200/.test(warm.stdout)) break;
        if (Date.now() > settled)
          throw new Error(`the broker never answered after ${attempt} tasks: ${warm.stdout}`);
        await new Promise((r) => setTimeout(r, 2_000));
      }
      const body = await launcher.run(spec, {
        command: [
          "sh",
          "-c",
          `printf 'GET /api/data/x HTTP/1.0\\r\\n\\r\\n' | nc -w 3 "$(echo "$SANDBOX_BROKER_URL" | sed 's#http://##; s#:.*##')" "\${SANDBOX_BROKER_URL##*:}"`,
        ],
      });
      expect(body.stdout).toContain(KEYED_ANSWER);
      const checks = await launcher.run(spec, {
        command: [
          "sh",
          "-c",
          [
            HTTP_GET,
            call("/api/admin"),
            call("/api/data/%2e%2e/admin"),
            call("/private/x"),
            call("/nosuch/x"),
            `echo "direct=$(printf 'GET / HTTP/1.0\\r\\nHost: api.test\\r\\n\\r\\n' | nc -w 3 ${OUTSIDE_IP} 80 2>&1 | head -n 1)"`,
            "echo \"creds=$(env | grep -c '^SANDBOX_BROKER_CRED_')\"",
          ].join("\n"),
        ],
      });
      expect(checks.stdout).toMatch(/\/api\/admin=HTTP\/1\.[01] 403/);
      expect(checks.stdout).toMatch(/\/api\/data\/%2e%2e\/admin=HTTP\/1\.[01] 400/);
      expect(checks.stdout).toMatch(/\/private\/x=HTTP\/1\.[01] 403/);
      expect(checks.stdout).toMatch(/\/nosuch\/x=HTTP\/1\.[01] 404/);
      expect(checks.stdout).not.toMatch(/direct=HTTP/);
      expect(checks.stdout).toContain("creds=0");
      for (const out of [body.stdout, body.stderr, checks.stdout, checks.stderr])
        expect(out).not.toContain(BROKER_TOKEN);
      // Every keyed request the server saw came from the broker's pod, with the credential.
      const brokerPods = await a.core.listNamespacedPod({
        namespace: project,
        labelSelector: "sandbox.role=broker",
      });
      const brokerIps = brokerPods.items
        .map((x) => x.status?.podIP)
        .filter((x): x is string => x !== undefined);
      const keyed = seen.filter((l) => l.includes(" api.test "));
      expect(keyed.length).toBeGreaterThan(0);
      for (const line of keyed)
        expect(
          brokerIps.some((ip) => line.startsWith(`${ip} `)),
          line,
        ).toBe(true);
      // The probe through the front: the broker's walls hold inside a pod.
      const probe = io();
      expect(
        await runKubeTaskVerb("probe", p, { kubeconfig }, ["agent"], probe.io, true),
        probe.err.join(""),
      ).toBe(0);
      const report = JSON.parse(probe.out.join("")).templates.agent as { passed: boolean; walls: Wall[] };
      expect(report.passed, JSON.stringify(report.walls)).toBe(true);
      expect(wall(report, "brokerOutsidePath")?.observed).toBe("403");
      expect(wall(report, "brokerDirect")?.observed).toBe("denied");
      // Only the broker's pod mounts the credentials' Secret.
      const pods = await a.core.listNamespacedPod({ namespace: project });
      const mounting = pods.items.filter((x) =>
        (x.spec?.volumes ?? []).some((v) => v.secret?.secretName === `${project}-broker-credentials`),
      );
      // (the pod the roll replaced may still be terminating: every pod that mounts it is a broker's).
      expect(mounting.length).toBeGreaterThan(0);
      expect([...new Set(mounting.map((x) => x.metadata?.labels?.["sandbox.role"]))]).toEqual(["broker"]);
    },
    TIMEOUT,
  );

  it(
    "the metadata address answered the host (the control) and no pod: every probe and escape above met a server there",
    async () => {
      const { apis: a } = ready();
      if (metadata === undefined) throw new Error("no metadata target");
      expect(await metadata.requests()).toEqual([]);
      const control = spawnSync("busybox", ["wget", "-q", "-O-", `http://${METADATA_IP}/latest/meta-data/`], {
        encoding: "utf8",
        timeout: 10_000,
      });
      expect(control.stdout).toContain(metadata.token);
      expect(await metadata.requests()).toHaveLength(1);
      // No task code runs before its pod's policy holds: the gate comes first in every pod the project makes.
      const templates = await a.core.listNamespacedPodTemplate({ namespace: project });
      expect(templates.items.length).toBeGreaterThan(0);
      for (const t of templates.items) {
        expect(t.template?.spec?.initContainers?.[0]?.name, t.metadata?.name).toBe("policy-gate");
      }
    },
    TIMEOUT,
  );

  it(
    "off leaves no task object in the namespace; destroy leaves no namespace",
    async () => {
      const { apis: a, project: p, stack: s, cluster: c } = ready();
      const launcher = new KubeLauncher(a, project);
      const long = launcher
        .run(launchSpec(p, "default", "none"), { command: ["sleep", "25"] })
        .catch((e) => e);
      const until = Date.now() + 60_000;
      while (Date.now() < until) {
        const jobs = await a.batch.listNamespacedJob({
          namespace: project,
          labelSelector: "sandbox.role=task",
        });
        if (jobs.items.length > 0) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      const off = io();
      expect(await runKubeOff(project, { kubeconfig }, off.io, true), off.err.join("")).toBe(0);
      const doc = JSON.parse(off.out.join(""));
      expect(doc.jobs.length).toBeGreaterThan(0);
      await long;
      const sel = { namespace: project, labelSelector: `sandbox.project=${project}` };
      expect((await a.batch.listNamespacedJob(sel)).items).toEqual([]);
      // Pods off deleted (the proxy's, the broker's) end within their grace: none is left once they have.
      await c.waitFor(
        "the project's pods to be gone",
        async () => (await a.core.listNamespacedPod(sel)).items.length === 0,
        60_000,
      );
      expect((await a.core.listNamespacedConfigMap(sel)).items).toEqual([]);
      const down = await s.destroy();
      expect(down.summary.result).toBe("succeeded");
      await c.waitFor(
        "the namespace to be gone",
        async () => (await c.api("GET", `/api/v1/namespaces/${project}`)).status === 404,
        120_000,
      );
      // The RuntimeClass the project created goes with it.
      expect((await c.api("GET", "/apis/node.k8s.io/v1/runtimeclasses/gvisor")).status).toBe(404);
    },
    TIMEOUT,
  );
});
