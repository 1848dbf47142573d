/**
 * The task verbs on a Kubernetes stack: `run`, `probe`, `escape` and `off` through the Kubernetes API
 * (runtime/kubernetes/), with the same output and exit codes as on Docker (cli/runtime.ts). The cluster is the
 * stack's `sandbox:kubernetes` (a kubeconfig and a context) or the ambient kubeconfig; the namespace is the
 * project's name.
 */
import { randomBytes } from "node:crypto";
import { launchSpec, type ResolvedProject } from "../components/model";
import { identifyAgent } from "../runtime/agent-keys";
import { apiMessage, type KubeApis, type KubeTarget, kubeApis } from "../runtime/kubernetes/api";
import { KubeLauncher } from "../runtime/kubernetes/launcher";
import { kubeOffSwitch } from "../runtime/kubernetes/off";
import type { Ledger } from "../runtime/ledger";
import { runEscape, runProbe } from "../runtime/walls";
import { openLedger } from "./ledger";
import type { Io } from "./output";
import { parseRunArgs, RunUsageError, runSpec } from "./run-options";
import { runOne } from "./run-task";
import { type Failure, failureOf, report, templatesOf } from "./task-failure";
import type { TaskVerb } from "./verbs";
import { escapeVerb, probeVerb } from "./walls-verbs";

/** The cluster's clients, after one call that proves the API server answers and the namespace exists. */
async function connect(verb: string, target: KubeTarget, namespace: string): Promise<KubeApis | Failure> {
  let apis: KubeApis;
  try {
    apis = await kubeApis(target);
  } catch (e) {
    return { kind: "no-cluster", message: `${verb}: ${e instanceof Error ? e.message : String(e)}` };
  }
  try {
    await apis.core.readNamespace({ name: namespace });
    return apis;
  } catch (e) {
    const status = (e as { code?: unknown }).code;
    return status === 404
      ? {
          kind: "no-cluster",
          message: `${verb}: the project's namespace ${namespace} is not on the cluster at ${apis.server}: deploy the stack (\`up\`) first`,
        }
      : {
          kind: "no-cluster",
          message: `${verb}: the Kubernetes API server at ${apis.server} did not answer as expected: ${apiMessage(e)}`,
        };
  }
}

const isFailure = (x: KubeApis | Failure): x is Failure => typeof (x as Partial<Failure>).kind === "string";

/** The off switch on a Kubernetes stack: every labelled Job, pod and ConfigMap, and the proxy's objects. */
export async function runKubeOff(
  namespace: string,
  target: KubeTarget,
  io: Io,
  json: boolean,
  note?: string,
): Promise<number> {
  const apis = await connect("off", target, namespace);
  if (isFailure(apis)) {
    // No namespace: nothing of the project runs there.
    if (apis.message.includes("is not on the cluster")) {
      io.out(
        json
          ? `${JSON.stringify({ verb: "off", ok: true, exitCode: 0, namespace, jobs: [], pods: [], configMaps: [], proxy: [] })}\n`
          : `off switch for ${namespace}: the namespace is not on the cluster; nothing to remove\n`,
      );
      return 0;
    }
    return report("off", apis, io, json);
  }
  if (note !== undefined) io.err(`${note}\n`);
  try {
    const r = await kubeOffSwitch(apis, namespace);
    io.out(
      json
        ? `${JSON.stringify({ verb: "off", ok: true, exitCode: 0, ...r })}\n`
        : `off switch for ${namespace}: removed ${r.jobs.length} job(s), ${r.pods.length} pod(s), ${r.configMaps.length} config map(s), ${r.proxy.length} proxy object(s)\n` +
            [
              ...r.jobs.map((n) => `job/${n}`),
              ...r.pods.map((n) => `pod/${n}`),
              ...r.configMaps.map((n) => `configmap/${n}`),
              ...r.proxy,
            ]
              .map((n) => `  - ${n}\n`)
              .join(""),
    );
    return 0;
  } catch (e) {
    return report(
      "off",
      { kind: "engine", message: `off failed: ${e instanceof Error ? e.message : String(e)}` },
      io,
      json,
    );
  }
}

/** `run`, `probe`, `escape` or `off` on a Kubernetes stack. Never throws; returns the exit code. */
export async function runKubeTaskVerb(
  verb: TaskVerb,
  project: ResolvedProject,
  target: KubeTarget,
  rest: readonly string[],
  io: Io,
  json: boolean,
  ledgerFile?: string,
): Promise<number> {
  const namespace = project.spec.name;
  if (verb === "off") return runKubeOff(namespace, target, io, json);
  let run: ReturnType<typeof parseRunArgs> | undefined;
  try {
    if (verb === "run") {
      run = parseRunArgs(rest, process.env.INIT_CWD ?? process.cwd());
      if (run.stdin) {
        throw new RunUsageError(
          "run: -i is for Docker stacks; on Kubernetes give the task its input as a file (--file name=path)",
        );
      }
    }
  } catch (e) {
    return report(verb, failureOf(verb, e), io, json);
  }
  const apis = await connect(verb, target, namespace);
  if (isFailure(apis)) return report(verb, apis, io, json);
  // Every run is admitted, recorded and charged by the project's ledger, as on Docker; its alerts go to the sinks.
  let ledger: Ledger | undefined;
  try {
    ledger = ledgerFile === undefined ? undefined : (await openLedger(ledgerFile, project, io.err)).ledger;
  } catch (e) {
    return report(verb, failureOf(verb, e), io, json);
  }
  const launcher = new KubeLauncher(apis, namespace, {
    // `run --out` and `--keep` bring the job folder back from the pod, where Docker keeps it.
    jobRoot: project.jobRoot,
    onEvent: (e) => io.err(`[${e.type}] task ${e.id} (${e.running} running)\n`),
    ...(ledger === undefined ? {} : { ledger }),
  });
  const stop = async (signal: NodeJS.Signals) => {
    io.err(`\n${signal}: stopping; deleting running task Jobs...\n`);
    const removed = await launcher.shutdown();
    io.err(`deleted ${removed.length} Job(s): ${removed.join(", ") || "none"}\n`);
    process.exit(signal === "SIGINT" ? 130 : 143);
  };
  const onInt = () => void stop("SIGINT");
  const onTerm = () => void stop("SIGTERM");
  process.once("SIGINT", onInt);
  process.once("SIGTERM", onTerm);
  try {
    if (verb === "run" && run !== undefined) {
      const [template = ""] = templatesOf(project, [run.template]);
      const spec = runSpec(launchSpec(project, template, "none"), run);
      const id = `${Date.now().toString(36)}-${randomBytes(3).toString("hex")}`;
      // An agent is whoever holds one of its keys (runtime/agent-keys.ts); no key and no agent: the operator's run.
      const agent = ledger === undefined ? run.agent : await identifyAgent(ledger, namespace, run.agent);
      const { agent: _claimed, ...unclaimed } = run;
      const identified = agent === undefined ? unclaimed : { ...unclaimed, agent };
      return await runOne({ kind: "kubernetes", runner: launcher }, project, spec, identified, id, io, json);
    }
    if (verb === "probe") {
      return await probeVerb(
        templatesOf(project, rest),
        async (template) => {
          const t = project.spec.templates[template];
          if (t === undefined) return undefined;
          const spec = launchSpec(project, template, "none");
          return (await runProbe(launcher, spec, t, undefined, { kubernetes: true })).report;
        },
        io,
        json,
      );
    }
    return await escapeVerb(
      templatesOf(project, rest),
      (template, check) => runEscape(launcher, launcher, launchSpec(project, template, "none"), check),
      io,
      json,
    );
  } catch (e) {
    return report(verb, failureOf(verb, e), io, json);
  } finally {
    process.removeListener("SIGINT", onInt);
    process.removeListener("SIGTERM", onTerm);
    await ledger?.close();
  }
}
