/**
 * The probe Job `up` creates for each template on Kubernetes: waited for (bounded, with progress) and its log read,
 * so that the stack exports the walls report observed inside a running pod, as the Docker backend does.
 */
import { judgeProbe, type ProbeReport, parseProbeOutput, type Template } from "../../components/model";
import { apiMessage, type KubeApis, orAbsent } from "./api";

/** Longest `up` waits for a probe Job's pod to finish (scheduling and image included). */
export const PROBE_WAIT_SECONDS = 180;

// biome-ignore lint/suspicious/noExplicitAny: pod objects as the client returns them, read field by field
type Obj = any;

/** What came of waiting for a probe Job: its log, or why there is none. */
export interface ProbeJobOutcome {
  readonly log?: string;
  readonly problem?: string;
}

/** Waits for the Job's pod to end and reads its log; says why when it does not end in `timeoutSeconds`. */
export async function waitForProbeJob(
  apis: KubeApis,
  namespace: string,
  job: string,
  options: { timeoutSeconds?: number; progress?: (line: string) => void; pollMs?: number } = {},
): Promise<ProbeJobOutcome> {
  const until = Date.now() + (options.timeoutSeconds ?? PROBE_WAIT_SECONDS) * 1000;
  let last = "";
  let nextNote = Date.now() + 10_000;
  for (;;) {
    let pod: Obj | undefined;
    try {
      const pods = await apis.core.listNamespacedPod({
        namespace,
        labelSelector: `batch.kubernetes.io/job-name=${job}`,
      });
      pod = pods.items[0];
    } catch (e) {
      last = `the API server answered: ${apiMessage(e)}`;
    }
    const phase = pod?.status?.phase;
    if (phase === "Succeeded" || phase === "Failed") {
      try {
        const log = await apis.core.readNamespacedPodLog({
          name: pod.metadata.name,
          namespace,
          container: "task",
        });
        return { log: String(log) };
      } catch (e) {
        return {
          problem: `the probe pod ${pod.metadata.name} ended (${phase}) but its log could not be read: ${apiMessage(e)}`,
        };
      }
    }
    if (pod !== undefined) {
      const waiting = (pod.status?.containerStatuses ?? [])[0]?.state?.waiting;
      const scheduled = (pod.status?.conditions ?? []).find((c: Obj) => c.type === "PodScheduled");
      last = waiting
        ? `pod ${pod.metadata.name} waiting: ${waiting.reason}${waiting.message ? ` (${waiting.message})` : ""}`
        : scheduled?.status === "False"
          ? `pod ${pod.metadata.name} not scheduled: ${scheduled.message ?? scheduled.reason}`
          : `pod ${pod.metadata.name} ${phase ?? "pending"}`;
    } else if (last === "") {
      const j: Obj = await orAbsent(() => apis.batch.readNamespacedJob({ name: job, namespace })).catch(
        () => undefined,
      );
      last = j === undefined ? `Job ${job} not found` : `Job ${job} has no pod yet`;
    }
    if (Date.now() > until) {
      return {
        problem: `the probe Job ${job} did not finish in ${options.timeoutSeconds ?? PROBE_WAIT_SECONDS} s (${last})`,
      };
    }
    if (Date.now() > nextNote) {
      options.progress?.(`waiting for probe Job ${namespace}/${job}: ${last}`);
      nextNote = Date.now() + 10_000;
    }
    await new Promise((r) => setTimeout(r, options.pollMs ?? 500));
  }
}

/** The walls report of a probe Job: judged from its log, or a failed report saying why it has none. */
export function probeJobReport(
  template: Template,
  outcome: ProbeJobOutcome,
): ProbeReport & { problem?: string } {
  const report = judgeProbe(template, parseProbeOutput(outcome.log ?? ""), { podLimit: true });
  return outcome.problem === undefined ? report : { ...report, passed: false, problem: outcome.problem };
}
